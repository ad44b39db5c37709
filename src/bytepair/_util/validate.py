"""Argument checks shared by the public API: each error names the argument
(:class:`bytepair._util.errors.ArgumentError`)."""

from __future__ import annotations

import operator
import re

from bytepair._util.errors import ArgumentError

#: Byte mode IDs are below 2**31 (the pair engine keeps the top bit of a 32-bit slot for
#: its markers): 256 byte tokens plus this many merges.
MAX_BYTE_MERGES = 2**31 - 256
#: Pair counts are 64-bit signed integers in the compiled engine.
MAX_COUNT = 2**63 - 1


def is_text(value: str) -> bool:
    """Whether ``value`` is encodable as UTF-8 (holds no lone surrogate). O(len(value))."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_int(value, name: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise naming ``name``. Bools are rejected."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got bool {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}") from None
    if number < minimum:
        raise ArgumentError(name, f"must be >= {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ArgumentError(name, f"must be <= {maximum}, got {number}")
    return number


#: Suffixes of a size (a vocabulary size, a number of merges): ``k`` and ``M`` are decimal
#: (32k = 32,000, as "a 32k vocabulary" is usually meant), ``Ki`` and ``Mi`` binary
#: (32Ki = 32,768).
SIZE_UNITS = {"k": 1000, "K": 1000, "M": 1000**2, "Ki": 1024, "ki": 1024, "Mi": 1024**2}
_SIZE = re.compile(r"\s*([0-9][0-9_]*)\s*(" + "|".join(SIZE_UNITS) + r")?\s*")


def parse_size(text: str) -> int:
    """An integer, or a number of thousands or of 1,024s (:data:`SIZE_UNITS`): the one reader
    of sizes, for the command line and the Python API alike.

    >>> parse_size("32k"), parse_size("32Ki"), parse_size("8192"), parse_size("1M")
    (32000, 32768, 8192, 1000000)
    """
    match = _SIZE.fullmatch(text)
    if match is None:
        return int(text)  # ValueError; also takes a sign, whose limits are the caller's
    return int(match.group(1)) * SIZE_UNITS.get(match.group(2) or "", 1)


def check_size(value, name: str, **limits) -> int:
    """:func:`check_int` that also takes a size written as text, ``"32k"`` or ``"32Ki"``.

    >>> check_size("8k", "vocab_size"), check_size(300, "merges")
    (8000, 300)
    >>> check_size("8 kB", "vocab_size")
    Traceback (most recent call last):
    ...
    ValueError: vocab_size must be an int or a size such as '32k' (32,000) or '32Ki' (32,768), got '8 kB'
    """
    if isinstance(value, str):
        try:
            value = parse_size(value)
        except ValueError:
            raise ValueError(f"{name} must be an int or a size such as '32k' (32,000) or "
                             f"'32Ki' (32,768), got {value!r}") from None
    return check_int(value, name, **limits)


def as_document(document, index: int, name: str = "documents") -> bytes:
    """A document as bytes: ``str`` is UTF-8 encoded, bytes-like objects are copied."""
    if isinstance(document, str):
        try:
            return document.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ArgumentError(name, f"is not encodable as UTF-8: {exc.reason} at {exc.start}",
                                index=index) from None
    if isinstance(document, (bytes, bytearray, memoryview)):
        return bytes(document)
    raise TypeError(
        f"{name}[{index}] must be bytes or str, got {type(document).__name__}"
    )


def check_engine(engine: str | None) -> str:
    """The engine name: ``None`` means the fastest, ``"incremental"``."""
    if engine is None:
        return "incremental"
    if engine not in ("naive", "incremental"):
        raise ArgumentError("engine", f"must be 'naive' or 'incremental', got {engine!r}")
    return engine


def check_word_counts(word_counts) -> dict[str, int]:
    """A ``str -> positive int`` mapping, copied."""
    if not hasattr(word_counts, "items"):
        raise TypeError(
            f"word_counts must be a mapping of str to int, got {type(word_counts).__name__}"
        )
    checked: dict[str, int] = {}
    for word, count in word_counts.items():
        if not isinstance(word, str):
            raise TypeError(f"word_counts keys must be str, got {type(word).__name__} {word!r}")
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            raise ArgumentError("word_counts", f"key {word!r} holds a lone surrogate, not text") from None
        checked[word] = check_int(count, f"word_counts[{word!r}]", minimum=1, maximum=MAX_COUNT)
    return checked


def check_end_of_word(end_of_word) -> str | None:
    if end_of_word is None:
        return None
    if not isinstance(end_of_word, str):
        raise TypeError(f"end_of_word must be a str or None, got {type(end_of_word).__name__}")
    if not end_of_word:
        raise ArgumentError("end_of_word", "must be a non-empty str")
    if not is_text(end_of_word):
        raise ArgumentError("end_of_word", f"must be text, got {end_of_word!r} (a lone surrogate)")
    return end_of_word


def plural(count: int, word: str) -> str:
    """``"1 special token"``, ``"2 special tokens"``, ``"7,935 merges"``."""
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def merges_for_vocab_size(vocab_size, special_count: int, name: str = "vocab_size") -> int:
    """The merges that make a vocabulary of ``vocab_size``: 256 bytes + merges + special tokens."""
    floor = 256 + special_count
    vocab_size = check_size(vocab_size, name, minimum=-2**63)
    if not floor <= vocab_size <= floor + MAX_BYTE_MERGES:
        limit = (f"at least {floor} (256 bytes + {plural(special_count, 'special token')})"
                 if vocab_size < floor else f"at most {floor + MAX_BYTE_MERGES}")
        raise ArgumentError(name, f"must be {limit}, got {vocab_size}")
    return vocab_size - floor


def check_special_tokens(special_tokens, name: str = "special_tokens") -> list[str]:
    """The special tokens as a list: non-empty texts, none repeated; errors name ``name``."""
    if isinstance(special_tokens, str):
        raise TypeError(f"{name} must be a sequence of str, not a single str")
    tokens = list(special_tokens)
    for index, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise ArgumentError(name, f"must be a non-empty str, got {token!r}", index=index)
        if not is_text(token):
            raise ArgumentError(name, f"must be text, got {token!r} (a lone surrogate)",
                                index=index)
    if len(set(tokens)) != len(tokens):
        seen: set[str] = set()
        repeated = next(t for t in tokens if t in seen or seen.add(t))
        raise ArgumentError(name, f"must not repeat a token, got {repeated!r} twice")
    return tokens


#: Units of a memory size: decimal (kB, MB, GB, TB) and binary (KiB ... TiB; K, M, G, T as
#: binary, as ``ulimit`` and container limits read them).
_MEMORY_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
                 "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40,
                 "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_memory(value, name: str = "max_memory") -> int:
    """A memory size in bytes from an int or a string such as ``"4GiB"``, ``"512MiB"``, ``"2GB"``.

    >>> parse_memory("1.5GiB"), parse_memory("512 MB"), parse_memory(4096)
    (1610612736, 512000000, 4096)
    """
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(digits):]
        try:
            number = float(digits) if unit in _MEMORY_UNITS else None
        except ValueError:
            number = None
        if number is None or not 1 <= number * _MEMORY_UNITS[unit] < float("inf"):
            raise ArgumentError(name, f": {value!r} is not a memory size (for example 4GiB, "
                                      "512MiB, 2GB, or a number of bytes)")
        return int(number * _MEMORY_UNITS[unit])
    return check_int(value, name, minimum=1)


def format_memory(size: int) -> str:
    """``size`` bytes for a reader: ``'1.4 GiB'``, ``'820 MiB'``, ``'12 KiB'``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{size} B"
