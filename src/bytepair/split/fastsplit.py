"""The compiled pre-tokenizers (``bytepair.split._split``) for the named patterns.

Splitting with the ``regex`` module bounds the whole training job on large
corpora (about 1.4-8 MB/s per core, depending on the pattern); the compiled
scanners split and count many times faster and give exactly the pieces
``regex`` gives (tests compare them on arbitrary Unicode). Only the named
patterns ``gpt2``, ``cl100k``, ``o200k``, ``whitespace``, ``whitespace-split``,
``nanochat`` and ``superbpe`` are compiled; :func:`compiled_name` tells whether a regex source
is one of them.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Iterable

from bytepair._util.backend import extensions_wanted
from bytepair.split.patterns import PATTERNS

_split = None
if extensions_wanted():
    try:
        from bytepair.split import _split
    except ImportError:  # pragma: no cover - depends on how the package was installed
        _split = None

#: Raised by compiled counting for bytes that are not UTF-8 (``offset``: the first bad byte).
InvalidUTF8 = _split.InvalidUTF8 if _split is not None else ValueError

#: Pattern names (keys of ``bytepair.split.patterns.PATTERNS``) that have a compiled scanner.
NAMES = ("gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "nanochat", "superbpe")


def available() -> bool:
    """True when the compiled splitters can be used."""
    return _split is not None


def compiled_name(source: str | None) -> str | None:
    """The name of the compiled scanner for regex ``source``, or None when it has none.

    >>> compiled_name(PATTERNS["o200k"]) == ("o200k" if available() else None)
    True
    >>> compiled_name(r"\\w+") is None
    True
    """
    if _split is None or source is None:
        return None
    for name in NAMES:
        if PATTERNS[name] == source:
            return name
    return None


def split(text: str, name: str) -> list[str]:
    """The pieces of ``text`` for the pattern called ``name``.

    For ``whitespace``, ``whitespace-split`` and ``superbpe`` the text between matches is cut as
    pieces too, as :func:`bytepair.split.pretokenize.splitter` gives them; for the others the
    pieces are ``regex.findall(PATTERNS[name], text)``. O(len(text)).
    """
    return _split.split(text, name)


def split_gpt2(text: str) -> list[str]:
    """GPT-2 pieces of ``text``, like ``regex.findall(PATTERNS["gpt2"], text)``."""
    return _split.split(text, "gpt2")


def count(documents: Iterable[str], name: str | None) -> Counter:
    """``{piece_bytes: count}`` over all documents for the pattern ``name`` (None: no split)."""
    table = _split.PieceTable()
    table.add_documents(documents, name)
    return Counter(table.items())


def count_gpt2(documents: Iterable[str]) -> Counter:
    """``{piece_bytes: count}`` over all documents, GPT-2 pattern."""
    return count(documents, "gpt2")


def table():
    """An empty compiled piece table (``bytepair.split._split.PieceTable``)."""
    return _split.PieceTable()


def merged_arrays(tables: list, threads: int = 1) -> tuple[bytes, array, array]:
    """``(data, starts, counts)`` of the sum of compiled piece ``tables`` (as
    ``PieceTable.arrays`` gives one table's), emptying each table as it is read:
    the peak memory stays near the tables' own (``_split.merged_arrays``).
    ``threads`` of 2 or more read each large table on two threads."""
    return _split.merged_arrays(tables, threads)


def bounds(starts: list[int], ends: list[int]):
    """``(start, end)`` pairs as the flat int64 buffer ``PieceTable.count(offsets=...)`` reads."""
    flat = array("q", bytes(16 * len(starts)))
    flat[0::2] = array("q", starts)
    flat[1::2] = array("q", ends)
    return flat
