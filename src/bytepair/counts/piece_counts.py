"""Piece-count tables: what counting a corpus produces and the merge loop consumes.

A :class:`PieceCounts` maps each piece (``bytes``) to how often it occurs and
remembers the pre-tokenizer pattern that cut the pieces. Tables of different
shards add up to the table of the whole corpus, so shards can be counted
anywhere (other processes, other machines, a Dask cluster) and trained from
together. The file format is described in ``docs/format.md``.
"""

from __future__ import annotations

import json
import operator
import os
import sys
import zlib
from array import array
from collections.abc import Mapping
from itertools import accumulate
from typing import Iterator

from bytepair._util.errors import InputError
from bytepair._util.validate import MAX_COUNT
from bytepair._util.atomic import write_atomically
from bytepair.split.pretokenize import PATTERNS, UntrustedPattern, resolve_pattern, stored_pattern

FORMAT = "bytepair-counts"
#: Version 2 checksums the header too (version 1 files are still read).
VERSION = 2
#: Longest header line a reader accepts; a binary file is refused quickly.
MAX_HEADER = 1 << 20
#: Pieces are stored with 32-bit lengths.
MAX_PIECE = 2**32 - 1
_LITTLE = sys.byteorder == "little"


class CountsFormatError(InputError):
    """A file that is not a piece-count table this version can read."""


def describe_pattern(source: str | None) -> str:
    """A pattern as a reader knows it: its name when it has one, else the regex."""
    if source is None:
        return "none"
    for name, known in PATTERNS.items():
        if source == known:
            return name
    return f"regex {source!r}"


class PieceCounts(Mapping):
    """Counts of pre-tokenized pieces, with the pattern that cut them.

    ``counts`` maps pieces (``bytes``, or ``str`` stored as UTF-8) to positive
    counts; ``pattern`` is a pattern name, a regex, or ``None``/``"none"``
    (no split: each document is one piece), stored as its regex source.

    >>> a = PieceCounts({b"low": 2, b" lower": 1}, pattern="gpt2")
    >>> b = PieceCounts({"low": 1}, pattern="gpt2")
    >>> total = a + b
    >>> total[b"low"], len(total), total.total()
    (3, 2, 4)
    >>> a + PieceCounts({}, pattern=None)
    Traceback (most recent call last):
    ...
    ValueError: cannot combine piece counts made with different patterns: gpt2 and none

    Adding tables costs O(pieces of the smaller operand) for :meth:`update`
    and O(pieces of both) for ``+`` (which copies).

    A table that compiled counting made holds its pieces as flat arrays
    (:meth:`flat`, what the merge loop reads), not as a ``dict`` of one
    ``bytes`` object per piece; the dict is built the first time the table
    is used as a mapping.
    """

    __slots__ = ("_dict", "_flat", "_pattern", "_total")

    def __init__(self, counts: Mapping | None = None, *, pattern: str | None):
        """A table of ``counts``, checked and copied. O(pieces).

        ``counts``
            Piece (``bytes``, or ``str`` stored as UTF-8) -> positive count; None: empty.
        ``pattern``
            The pattern that cut the pieces: a name, a regex, or None/``"none"``.
        """
        self._pattern = resolve_pattern(pattern)
        self._dict: dict[bytes, int] | None = {}
        self._flat: tuple[bytes, array, array] | None = None
        self._total = 0
        if isinstance(counts, PieceCounts):
            self.update(counts)
            return
        if counts is None:
            return
        if not isinstance(counts, Mapping):
            raise TypeError(f"counts must be a mapping of piece -> count, got {type(counts).__name__}")
        table = self._dict
        total = 0
        for piece, count in counts.items():
            key = _check_piece(piece)
            number = _check_count(count, key)
            if key in table:
                raise ValueError(f"counts: the piece {key!r} appears twice (as str and bytes)")
            table[key] = number
            total += number
        self._total = _check_total(total)

    @classmethod
    def trusted(cls, counts: dict, pattern_source: str | None) -> PieceCounts:
        """A table of ``counts`` (a dict counting made: bytes keys, positive counts) cut with
        ``pattern_source``, taken as it is and not checked again (counting made it right)."""
        return cls._made(pattern_source, counts, None, sum(counts.values()))

    @classmethod
    def trusted_arrays(cls, data: bytes, starts: array, counts: array,
                       pattern_source: str | None) -> PieceCounts:
        """A table of compiled counting's arrays (``PieceTable.arrays``) cut with ``pattern_source``:
        distinct pieces ``data[starts[i]:starts[i + 1]]``, positive ``counts`` (not checked)."""
        return cls._made(pattern_source, None, (data, starts, counts), sum(counts))

    @classmethod
    def _made(cls, pattern: str | None, table: dict | None, flat: tuple | None, total: int):
        made = cls.__new__(cls)
        made._pattern, made._dict, made._flat, made._total = pattern, table, flat, _check_total(total)
        return made

    @property
    def _counts(self) -> dict[bytes, int]:
        """The table as a dict, built from the flat arrays on first use."""
        if self._dict is None:
            data, starts, counts = self._flat
            self._dict = dict(zip(map(data.__getitem__, map(slice, starts, starts[1:])), counts))
        return self._dict

    def flat(self) -> tuple[bytes, array, array]:
        """``(data, starts, counts)``: the pieces laid end to end, ``starts`` (each
        piece's offset in ``data``, then ``len(data)``, as ``array("q")``) and their
        counts (``array("q")``), in no particular order: what the merge loop reads.

        >>> data, starts, counts = PieceCounts({b"ab": 2, b"c": 1}, pattern=None).flat()
        >>> data, list(starts), list(counts)
        (b'abc', [0, 2, 3], [2, 1])
        """
        if self._flat is not None:
            return self._flat
        pieces = list(self._dict)
        starts = array("q", [0])
        starts.extend(accumulate(map(len, pieces)))
        return b"".join(pieces), starts, array("q", self._dict.values())

    def release(self) -> None:
        """Empty the table and give its memory back: training does this to a table
        it made itself, once the merge engine holds its own copy of the pieces."""
        self._dict = {}
        self._flat = None
        self._total = 0

    # -- mapping ------------------------------------------------------------

    def __getitem__(self, piece: bytes) -> int:
        return self._counts[piece]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._dict) if self._dict is not None else len(self._flat[2])

    def __contains__(self, piece) -> bool:
        return piece in self._counts

    def items(self):
        return self._counts.items()

    def keys(self):
        return self._counts.keys()

    def values(self):
        return self._counts.values()

    def __eq__(self, other) -> bool:
        if not isinstance(other, PieceCounts):
            return NotImplemented
        return self._pattern == other._pattern and self._counts == other._counts

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return (f"<PieceCounts pattern={describe_pattern(self._pattern)} pieces={len(self)} "
                f"total={self._total}>")

    def __reduce__(self):
        # Pickled for worker processes and Dask: the pieces and the pattern, no re-checks.
        if self._dict is None:
            return (PieceCounts.trusted_arrays, (*self._flat, self._pattern))
        return (PieceCounts.trusted, (self._dict, self._pattern))

    # -- counts -------------------------------------------------------------

    @property
    def pattern(self) -> str | None:
        """The pre-tokenizer regex source that cut the pieces (None: no split)."""
        return self._pattern

    def total(self) -> int:
        """The sum of all counts (the number of pieces in the corpus)."""
        return self._total

    def most_common(self, n: int | None = None) -> list[tuple[bytes, int]]:
        """The ``n`` most frequent pieces (all when ``n`` is None), ties by piece."""
        ranked = sorted(self._counts.items(), key=lambda item: (-item[1], item[0]))
        return ranked if n is None else ranked[:n]

    def _check_same_pattern(self, other) -> None:
        if not isinstance(other, PieceCounts):
            raise TypeError(f"can only combine PieceCounts with PieceCounts, not {type(other).__name__}")
        if other._pattern != self._pattern:
            raise ValueError(
                "cannot combine piece counts made with different patterns: "
                f"{describe_pattern(self._pattern)} and {describe_pattern(other._pattern)}"
            )

    def update(self, other: PieceCounts) -> None:
        """Add ``other``'s counts to this table (same pattern only)."""
        self._check_same_pattern(other)
        total = _check_total(self._total + other._total)
        table = self._counts
        self._flat = None  # the arrays no longer hold every count
        get = table.get
        for piece, count in other._counts.items():
            table[piece] = get(piece, 0) + count
        self._total = total

    def __add__(self, other: PieceCounts) -> PieceCounts:
        if not isinstance(other, PieceCounts):
            return NotImplemented
        self._check_same_pattern(other)
        big, small = (self, other) if len(self) >= len(other) else (other, self)
        out = PieceCounts.trusted(dict(big._counts), self._pattern)
        out.update(small)
        return out

    def __radd__(self, other) -> PieceCounts:
        # ``sum(tables)`` starts from 0.
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return PieceCounts.trusted(dict(self._counts), self._pattern)
        return NotImplemented

    # -- files --------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the table to ``path`` atomically (format: ``docs/format.md``).

        Pieces are written in byte order, so equal tables give equal files.
        Time O(p log p) for p pieces; memory about twice the table's bytes.
        """
        pieces = sorted(self._counts)
        lengths = array("I")
        for piece in pieces:
            if len(piece) > MAX_PIECE:
                raise ValueError(f"a piece of {len(piece)} bytes is longer than the format allows ({MAX_PIECE})")
        lengths.extend(map(len, pieces))
        counts = array("Q", map(self._counts.__getitem__, pieces))
        if not _LITTLE:
            lengths.byteswap()
            counts.byteswap()
        data = b"".join(pieces)
        if self._pattern is not None:
            # What load would refuse is not written.
            ends = list(accumulate(map(len, pieces)))
            problem = _not_text(data, [0, *ends[:-1]] if ends else [], ends)
            if problem:
                raise ValueError(f"cannot save the table: {problem}")
        header = {"format": FORMAT, "version": VERSION, "pattern": self._pattern,
                  "pieces": len(pieces), "piece_bytes": len(data), "total": self._total}
        line = json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n"
        compressor = zlib.compressobj(6)
        body = b"".join([
            compressor.compress(line),  # a copy, under zlib's checksum (``load`` compares)
            compressor.compress(_planes(lengths.tobytes(), 4)),
            compressor.compress(_planes(counts.tobytes(), 8)),
            compressor.compress(data),
            compressor.flush(),
        ])
        write_atomically(path, line + body)

    @classmethod
    def load(cls, path: str | os.PathLike, *, trust_pattern: bool = False) -> PieceCounts:
        """Read the table at ``path`` written by :meth:`save`; a damaged file raises
        :class:`CountsFormatError`.

        ``path`` is the file. ``trust_pattern`` accepts a custom regex as the
        table's pattern: a regex from a file can take exponential time on some
        text (``(a|aa)+b``), so only named patterns (or none) are read without
        it, as for model files (:func:`bytepair.load`). The body is inflated in
        steps and never past the size the header declares, so a small file
        cannot expand into a large allocation (a zlib bomb). Time and memory
        O(size of the table).
        """
        name = repr(os.fspath(path))
        with open(path, "rb") as handle:
            line = handle.readline(MAX_HEADER)
            header = _read_header(line, name, trust_pattern)
            n, size = header["pieces"], header["piece_bytes"]
            # Version 2 repeats the header line at the start of the body, where
            # zlib's checksum covers it: a changed header byte no longer reads as valid.
            copy = line if header["version"] >= 2 else b""
            body = _inflate(handle, len(copy) + 12 * n + size, copy, name)
        body = memoryview(body)[len(copy):]
        lengths = array("I", _unplanes(body[:4 * n], 4))
        counts = array("Q", _unplanes(body[4 * n:12 * n], 8))
        if not _LITTLE:
            lengths.byteswap()
            counts.byteswap()
        if n and min(lengths) == 0:
            raise CountsFormatError(f"{name} is corrupt: piece #{lengths.index(0)} is empty")
        if sum(lengths) != size:
            raise CountsFormatError(f"{name} is corrupt: the piece lengths do not add up to 'piece_bytes'")
        if n and (min(counts) < 1 or max(counts) > MAX_COUNT):
            raise CountsFormatError(f"{name} is corrupt: a count is outside 1..2**63-1")
        if sum(counts) != header["total"]:
            raise CountsFormatError(f"{name} is corrupt: the counts do not add up to 'total'")
        data = bytes(body[12 * n:])
        ends = list(accumulate(lengths))
        starts = [0, *ends[:-1]] if n else []
        problem = _not_text(data, starts, ends) if header["pattern"] is not None else None
        if problem:
            raise CountsFormatError(f"{name} is corrupt: {problem}")
        table = dict(zip((data[a:b] for a, b in zip(starts, ends)), counts))
        if len(table) != n:
            raise CountsFormatError(f"{name} is corrupt: a piece appears twice")
        return cls.trusted(table, header["pattern"])


#: Compressed bytes read from a count file at a time.
READ_BYTES = 1 << 20


def _inflate(handle, size: int, copy: bytes, name: str) -> bytearray:
    """The zlib stream that fills the rest of ``handle``: ``size`` bytes, starting with ``copy``.

    Inflated in steps of at most the bytes still owed (plus one, to see an
    excess), so memory never exceeds ``size + 1`` bytes of output plus one read
    of input, whatever the stream expands to. ``copy`` is compared as soon as
    it is inflated: a changed header is refused before its sizes are relied on.
    """
    inflater = zlib.decompressobj()
    out = bytearray()
    compared = not copy
    while not inflater.eof:
        # What zlib could not take in the last step comes first; then the file.
        chunk = inflater.unconsumed_tail or handle.read(READ_BYTES)
        try:
            more = inflater.decompress(chunk, size + 1 - len(out))
        except zlib.error as exc:
            raise CountsFormatError(f"{name} is corrupt: the compressed body is damaged ({exc})") from None
        if not chunk and not more:
            raise CountsFormatError(f"{name} is corrupt: the file is truncated")
        out += more
        if not compared and len(out) >= len(copy):
            if out[:len(copy)] != copy:
                raise CountsFormatError(
                    f"{name} is corrupt: the header line differs from its checksummed copy in the body"
                )
            compared = True
        if len(out) > size:
            raise CountsFormatError(
                f"{name} is corrupt: the body holds more than the "
                f"{size - len(copy)} bytes the header says"
            )
    if inflater.unused_data or handle.read(1):
        raise CountsFormatError(f"{name} is corrupt: data after the end of the table")
    if not compared:
        raise CountsFormatError(f"{name} is corrupt: the body is shorter than its header copy")
    if len(out) != size:
        raise CountsFormatError(
            f"{name} is corrupt: the body holds {len(out) - len(copy)} bytes, "
            f"the header says {size - len(copy)}"
        )
    return out


def _not_text(data: bytes, starts: list[int], ends: list[int]) -> str | None:
    """Why one of the pieces ``data[starts[i]:ends[i]]`` is not UTF-8 on its own, or None.

    Pieces cut by a pattern are text. Valid as a whole, with no piece
    starting on a continuation byte, means no character is split between two
    pieces: O(piece bytes) in C, and a Python step per piece only to name a
    bad one.
    """
    try:
        data.decode("utf-8")
        whole = True
    except UnicodeDecodeError:
        whole = False
    if whole and not bytes(map(data.__getitem__, starts)).translate(None, _NOT_CONTINUATION):
        return None
    for index, (start, end) in enumerate(zip(starts, ends)):
        try:
            data[start:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            return (f"piece #{index} {data[start:end][:40]!r} is not UTF-8 ({exc.reason} at byte "
                    f"{exc.start}), but a pattern cuts text")
    return None


#: Every byte that does not continue a UTF-8 sequence (``translate`` deletes them).
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


def _planes(data: bytes, width: int) -> bytes:
    """Integers of ``width`` bytes as byte planes: all first bytes, then all second bytes, ...

    Small counts have mostly zero high bytes; grouped together they compress
    to almost nothing (10 MB of English: 337 KB -> 305 KB with zlib).
    """
    return b"".join(data[i::width] for i in range(width))


def _unplanes(data: bytes, width: int) -> bytes:
    out = bytearray(len(data))
    plane = len(data) // width
    for i in range(width):
        out[i::width] = data[i * plane:(i + 1) * plane]
    return bytes(out)


def _read_header(line: bytes, name: str, trust_pattern: bool) -> dict:
    try:
        header = json.loads(line.decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CountsFormatError(f"{name} is not a bytepair piece-count table (no '{FORMAT}' header line)")
    if not line.endswith(b"\n"):
        raise CountsFormatError(f"{name} is corrupt: the header line does not end the line")
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CountsFormatError(f"{name} has an invalid format version {version!r}")
    if version > VERSION:
        raise CountsFormatError(
            f"{name} has format version {version}; this bytepair reads up to {VERSION}"
        )
    for key in ("pieces", "piece_bytes", "total"):
        value = header.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CountsFormatError(f"{name} is corrupt: {key!r} must be a non-negative integer")
    if header["total"] > MAX_COUNT:
        raise CountsFormatError(f"{name} is corrupt: 'total' {header['total']} exceeds 2**63 - 1")
    if header["pieces"] > header["piece_bytes"]:
        raise CountsFormatError(f"{name} is corrupt: 'pieces' {header['pieces']} is more than "
                                f"'piece_bytes' {header['piece_bytes']} (a piece has a byte at least)")
    # The body is 12 bytes a piece plus the pieces: a size no address space holds is damage.
    if 12 * header["pieces"] + header["piece_bytes"] + MAX_HEADER >= sys.maxsize:
        raise CountsFormatError(f"{name} is corrupt: 'pieces' {header['pieces']} and 'piece_bytes' "
                                f"{header['piece_bytes']} declare a table larger than memory can hold")
    if "pattern" not in header:
        raise CountsFormatError(f"{name} is corrupt: the header has no 'pattern'")
    try:  # a table's pattern is always a regex source: a bare word is that literal regex
        stored_pattern(header["pattern"], trusted=trust_pattern, bare_words=True)
    except UntrustedPattern as exc:  # not corrupt: a table to trust
        raise CountsFormatError(f"{name} ", *exc.parts) from None
    except ValueError as exc:
        raise CountsFormatError(f"{name} is corrupt: {exc}") from None
    return header


def _check_piece(piece) -> bytes:
    if isinstance(piece, str):
        try:
            key = piece.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"counts: the piece {piece!r} is not encodable as UTF-8: {exc.reason}") from None
    elif isinstance(piece, (bytes, bytearray, memoryview)):
        key = bytes(piece)
    else:
        raise TypeError(f"counts: pieces must be bytes or str, got {type(piece).__name__} {piece!r}")
    if not key:
        raise ValueError("counts: the empty piece cannot be counted")
    return key


def _check_count(value, piece: bytes) -> int:
    # operator.index accepts NumPy integers too (counts computed with pandas).
    try:
        if isinstance(value, bool):
            raise TypeError
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"counts[{piece!r}] must be an int, got {type(value).__name__} {value!r}") from None
    if not 1 <= count <= MAX_COUNT:
        raise ValueError(f"counts[{piece!r}] must be in 1..2**63-1, got {count}")
    return count


def _check_total(total: int) -> int:
    if total > MAX_COUNT:
        raise ValueError("piece counts: the total exceeds 2**63 - 1 (counts are 64-bit)")
    return total
