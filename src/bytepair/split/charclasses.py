"""The code-point class table of the compiled splitters, from the ``regex`` module.

The compiled scanners (``bytepair.split._split``) decide whether a code point
is a letter, number, mark, white space or word character with one byte per
code point. Those bytes must be what ``regex`` decides, so they are computed
by ``regex`` itself: :func:`build_table` scans every code point with each
class. That takes 70-200 ms, too long to pay at every import, so the build
(``setup.py``) runs it once and compiles the result into the extension as
runs (:func:`runs`, :func:`header`), tagged with the ``regex`` version that
made them. Importing the extension expands the runs; only when the installed
``regex`` is another version does it build the table again at import time.

This module imports nothing from bytepair and ``regex`` only when a table is
built, so that ``setup.py`` can load it by path before anything is built.
"""

from __future__ import annotations

import importlib.util
import os
from array import array

#: Number of code points: U+0000 to U+10FFFF.
CODE_POINTS = 0x110000

# Bits of the table; the compiled scanners read them from the generated header.
LETTER = 1     # \p{L}
NUMBER = 2     # \p{N}
SPACE = 4      # \s
MARK = 8       # \p{M}
UPPERISH = 16  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k)
LOWERISH = 32  # [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k)
WORD = 64      # \w
BITS = {"LETTER": LETTER, "NUMBER": NUMBER, "SPACE": SPACE, "MARK": MARK,
        "UPPERISH": UPPERISH, "LOWERISH": LOWERISH, "WORD": WORD}

#: The regex class behind each bit, as the scanners use it.
CLASS_SOURCES = (
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (MARK, r"\p{M}"),
    (UPPERISH, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (LOWERISH, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    (WORD, r"\w"),
)
#: The same table from single classes, which regex scans about ten times
#: faster than a bracketed union (tests check both give the same table).
TABLE_SOURCES = (
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (MARK | UPPERISH | LOWERISH, r"\p{M}"),
    (UPPERISH, r"\p{Lu}"),
    (UPPERISH, r"\p{Lt}"),
    (UPPERISH | LOWERISH, r"\p{Lm}"),
    (UPPERISH | LOWERISH, r"\p{Lo}"),
    (LOWERISH, r"\p{Ll}"),
    (WORD, r"\w"),
)


def regex_version() -> str:
    """The version of the ``regex`` module that ``import regex`` finds: the table is a function of it.

    Read from the ``regex-<version>.dist-info`` folder beside the module when
    there is one, since importing ``regex`` takes longer than expanding the
    table; else from ``regex.__version__``.
    """
    spec = importlib.util.find_spec("regex")
    if spec is not None and spec.origin:
        folder = os.path.dirname(os.path.dirname(spec.origin))
        found = [name for name in os.listdir(folder)
                 if name.startswith("regex-") and name.endswith(".dist-info")]
        if len(found) == 1:
            return found[0][len("regex-"):-len(".dist-info")]
    import regex

    return regex.__version__


def build_table(sources=TABLE_SOURCES) -> bytes:
    """The class table, one byte per code point, for ``(bits, regex class)`` pairs.

    O(code points) per class, in ``regex`` and in C-level bytes operations.

    >>> table = build_table()
    >>> table[ord("a")] == LETTER | LOWERISH | WORD, table[ord(" ")] == SPACE
    (True, True)
    """
    import regex

    # Every code point in one string, from a 4-byte-per-character buffer
    # (joining 1.1 million one-character strings would cost ~100 MiB).
    every = array("I", range(CODE_POINTS)).tobytes().decode("utf-32-le", "surrogatepass")
    table = 0
    for bit, source in sources:
        # One class's bit over all code points, then OR-ed in as one big integer.
        layer = bytearray(CODE_POINTS)
        mark = bytes([bit])
        for match in regex.finditer(source + "+", every):
            start, end = match.span()
            layer[start:end] = mark * (end - start)
        table |= int.from_bytes(layer, "little")
    return table.to_bytes(CODE_POINTS, "little")


def runs(table: bytes) -> list[tuple[int, int]]:
    """``(first code point, byte)`` where the table's byte changes, from code point 0.

    The table is constant over long stretches (whole blocks of letters or of
    unassigned code points), so a few thousand runs hold its 1.1 million bytes.

    >>> runs(bytes([0, 0, 5, 5, 5, 0]))
    [(0, 0), (2, 5), (5, 0)]
    """
    out = []
    previous = -1
    for code, value in enumerate(table):
        if value != previous:
            out.append((code, value))
            previous = value
    return out


def expand(pairs, size: int = CODE_POINTS) -> bytes:
    """The table back from :func:`runs`. O(size).

    >>> expand([(0, 0), (2, 5), (5, 0)], 6)
    b'\\x00\\x00\\x05\\x05\\x05\\x00'
    """
    table = bytearray(size)
    bounds = [start for start, _ in pairs][1:] + [size]
    for (start, value), end in zip(pairs, bounds):
        if value:
            table[start:end] = bytes([value]) * (end - start)
    return bytes(table)


def header(table: bytes, version: str) -> str:
    """C header text holding ``table`` as runs and the bits, for the compiled splitters."""
    pairs = runs(table)
    lines = [
        "/* The code-point class table of bytepair.split._split, made by setup.py with",
        f"   regex {version} (bytepair/split/charclasses.py): do not edit. */",
        "#ifndef BYTEPAIR_CHARCLASSES_H",
        "#define BYTEPAIR_CHARCLASSES_H",
        *(f"#define CLASS_{name} {bit}" for name, bit in BITS.items()),
        f'#define CLASS_TABLE_REGEX_VERSION "{version}"',
        f"#define CLASS_RUN_COUNT {len(pairs)}",
        "/* Run i covers code points CLASS_RUN_START[i] up to the next run's start. */",
        "static const unsigned int CLASS_RUN_START[CLASS_RUN_COUNT] = {",
    ]
    lines += _rows([start for start, _ in pairs])
    lines += ["};", "static const unsigned char CLASS_RUN_VALUE[CLASS_RUN_COUNT] = {"]
    lines += _rows([value for _, value in pairs])
    lines += ["};", "#endif", ""]
    return "\n".join(lines)


def _rows(numbers: list[int], per_row: int = 16) -> list[str]:
    return ["    " + ", ".join(map(str, numbers[i:i + per_row])) + ","
            for i in range(0, len(numbers), per_row)]


def write_header(path) -> bool:
    """Write :func:`header` of the installed ``regex`` to ``path``; False when it was current.

    An unchanged file is left alone, so that its timestamp does not force a
    rebuild of the extension.
    """
    from pathlib import Path

    path = Path(path)
    text = header(build_table(), regex_version())
    if path.exists() and path.read_text() == text:
        return False
    path.write_text(text)
    return True
