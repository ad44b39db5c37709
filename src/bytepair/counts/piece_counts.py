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
import zlib
from array import array
from collections.abc import Mapping
from itertools import accumulate
from typing import TYPE_CHECKING, Iterator

from bytepair._util.validate import MAX_COUNT
from bytepair._util.atomic import write_atomically
from bytepair.counts.count_file import (  # noqa: F401 (readers import FORMAT, MAX_HEADER here)
    FORMAT, LITTLE_ENDIAN, MAX_HEADER, MAX_PIECE, SPM_VERSION, VERSION, CountsFormatError, inflate,
    not_text, planes, read_header, unplanes)
from bytepair.split.pretokenize import PATTERNS, resolve_pattern
from bytepair.split import fastsplit

if TYPE_CHECKING:  # imported where a table of sentencepiece words needs it: counting does not
    from bytepair.split.spm_text import TextRules

_runs = None
if fastsplit.available():  # built with the splitter; BYTEPAIR_NO_EXTENSIONS builds neither
    from bytepair.counts import _runs


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

    __slots__ = ("_dict", "_flat", "_pattern", "_rules", "_skipped", "_total")

    def __init__(self, counts: Mapping | None = None, *, pattern: str | None,
                 sentencepiece: TextRules | None = None, skipped_lines: int = 0):
        """A table of ``counts``, checked and copied. O(pieces).

        ``counts``
            Piece (``bytes``, or ``str`` stored as UTF-8) -> positive count; None: empty.
        ``pattern``
            The pattern that cut the pieces: a name, a regex, or None/``"none"``.
        ``sentencepiece``
            For a table of sentencepiece's words (``pattern`` None): the
            :class:`~bytepair.split.spm_text.TextRules` that made them.
        ``skipped_lines``
            With ``sentencepiece``: the lines left out as longer than ``max_sentence_length``.
        """
        self._pattern = resolve_pattern(pattern)
        self._rules, self._skipped = _checked_rules(self._pattern, sentencepiece, skipped_lines)
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
    def trusted(cls, counts: dict, pattern_source: str | None, *, sentencepiece: TextRules | None = None,
                skipped_lines: int = 0) -> PieceCounts:
        """A table of ``counts`` (a dict counting made: bytes keys, positive counts) cut with
        ``pattern_source`` (or by ``sentencepiece``'s rules), taken as it is and not checked
        again (counting made it right). ``skipped_lines``: the lines over sentencepiece's
        ``max_sentence_length`` that counting left out (0 for a byte-level table)."""
        return cls._made(pattern_source, counts, None, sum(counts.values()), sentencepiece, skipped_lines)

    @classmethod
    def trusted_arrays(cls, data: bytes, starts: array, counts: array, pattern_source: str | None, *,
                       sentencepiece: TextRules | None = None, skipped_lines: int = 0) -> PieceCounts:
        """A table of compiled counting's arrays (``PieceTable.arrays``) cut with ``pattern_source``
        (or by ``sentencepiece``'s rules): distinct pieces ``data[starts[i]:starts[i + 1]]``,
        positive ``counts`` (not checked); ``skipped_lines`` as for :meth:`trusted`."""
        return cls._made(pattern_source, None, (data, starts, counts), sum(counts), sentencepiece,
                         skipped_lines)

    @classmethod
    def _made(cls, pattern: str | None, table: dict | None, flat: tuple | None, total: int,
              rules: TextRules | None = None, skipped: int = 0):
        made = cls.__new__(cls)
        made._pattern, made._dict, made._flat, made._total = pattern, table, flat, _check_total(total)
        made._rules, made._skipped = _checked_rules(pattern, rules, skipped)
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
        return (self._pattern == other._pattern and self._rules == other._rules
                and self._skipped == other._skipped and self._counts == other._counts)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        cut = "sentencepiece" if self._rules is not None else f"pattern={describe_pattern(self._pattern)}"
        return f"<PieceCounts {cut} pieces={len(self)} total={self._total}>"

    def __reduce__(self):
        # Pickled for worker processes and Dask: the pieces and how they were cut, no re-checks.
        return (_unpickled, (self._dict, self._flat, self._pattern, self._rules, self._skipped))

    # -- counts -------------------------------------------------------------

    @property
    def pattern(self) -> str | None:
        """The pre-tokenizer regex source that cut the pieces (None: no split)."""
        return self._pattern

    @property
    def sentencepiece(self) -> TextRules | None:
        """For a table of sentencepiece's words (:func:`bytepair.count_sentencepiece`), the text
        rules that made them (their meta pieces sorted); None for a table of pre-tokenized pieces."""
        return self._rules

    @property
    def skipped_lines(self) -> int:
        """The lines a table of sentencepiece's words left out as longer than ``max_sentence_length``."""
        return self._skipped

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
        if (self._rules is None) != (other._rules is None):
            raise ValueError("cannot combine a table of sentencepiece words with a table of "
                             "pre-tokenized pieces")
        if other._pattern != self._pattern:
            raise ValueError(
                "cannot combine piece counts made with different patterns: "
                f"{describe_pattern(self._pattern)} and {describe_pattern(other._pattern)}"
            )
        differ = self._rules.difference(other._rules) if self._rules is not None else None
        if differ is not None:
            name, mine, theirs = differ
            raise ValueError(f"cannot combine sentencepiece word counts made with different "
                             f"{name}: {mine} and {theirs}")

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
        self._skipped += other._skipped

    def __add__(self, other: PieceCounts) -> PieceCounts:
        if not isinstance(other, PieceCounts):
            return NotImplemented
        self._check_same_pattern(other)
        big, small = (self, other) if len(self) >= len(other) else (other, self)
        out = PieceCounts.trusted(dict(big._counts), self._pattern, sentencepiece=self._rules,
                                  skipped_lines=big._skipped)
        out.update(small)
        return out

    def __radd__(self, other) -> PieceCounts:
        # ``sum(tables)`` starts from 0.
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:
            return PieceCounts.trusted(dict(self._counts), self._pattern, sentencepiece=self._rules,
                                       skipped_lines=self._skipped)
        return NotImplemented

    # -- files --------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the table to ``path`` atomically (format: ``docs/format.md``).

        Pieces are written in byte order, so equal tables give equal files.
        Time O(p log p) for p pieces; memory about twice the table's bytes.
        """
        data, lengths, counts = self._in_byte_order()
        if not LITTLE_ENDIAN:
            lengths.byteswap()
            counts.byteswap()
        if self._pattern is not None or self._rules is not None:
            # What load would refuse is not written.
            ends = list(accumulate(lengths))
            problem = not_text(data, [0, *ends[:-1]] if ends else [], ends)
            if problem:
                raise ValueError(f"cannot save the table: {problem}")
        header = {"format": FORMAT, "version": VERSION, "pattern": self._pattern}
        if self._rules is not None:  # only these tables are version 3: others stay as they were
            header.update(version=SPM_VERSION, sentencepiece=self._rules.as_json(),
                          skipped_lines=self._skipped)
        header.update(pieces=len(counts), piece_bytes=len(data), total=self._total)
        line = json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n"
        compressor = zlib.compressobj(6)
        body = b"".join([
            compressor.compress(line),  # a copy, under zlib's checksum (``load`` compares)
            compressor.compress(planes(lengths.tobytes(), 4)),
            compressor.compress(planes(counts.tobytes(), 8)),
            compressor.compress(data),
            compressor.flush(),
        ])
        write_atomically(path, line + body)

    def _in_byte_order(self) -> tuple[bytes, array, array]:
        """``(data, lengths, counts)``: the pieces in byte order, as :meth:`save` writes them.
        A table counting made is sorted from its flat arrays in compiled code (sorting a dict
        of one bytes object per piece took most of ``bytepair count``'s time)."""
        if self._dict is None and _runs is not None:
            return _runs.sorted_flat(*self._flat)
        pieces = sorted(self._counts)
        for piece in pieces:
            if len(piece) > MAX_PIECE:
                raise ValueError(f"a piece of {len(piece)} bytes is longer than the format allows ({MAX_PIECE})")
        return (b"".join(pieces), array("I", map(len, pieces)),
                array("Q", map(self._counts.__getitem__, pieces)))

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
            header = read_header(line, name, trust_pattern)
            n, size = header["pieces"], header["piece_bytes"]
            # Version 2 repeats the header line at the start of the body, where
            # zlib's checksum covers it: a changed header byte no longer reads as valid.
            copy = line if header["version"] >= 2 else b""
            body = inflate(handle, len(copy) + 12 * n + size, copy, name)
        body = memoryview(body)[len(copy):]
        lengths = array("I", unplanes(body[:4 * n], 4))
        counts = array("Q", unplanes(body[4 * n:12 * n], 8))
        if not LITTLE_ENDIAN:
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
        rules = header.get("sentencepiece")
        problem = not_text(data, starts, ends) if header["pattern"] is not None or rules else None
        if problem:
            raise CountsFormatError(f"{name} is corrupt: {problem}")
        table = dict(zip((data[a:b] for a, b in zip(starts, ends)), counts))
        if len(table) != n:
            raise CountsFormatError(f"{name} is corrupt: a piece appears twice")
        return cls.trusted(table, header["pattern"], sentencepiece=rules,
                           skipped_lines=header.get("skipped_lines", 0))


def _unpickled(table: dict | None, flat: tuple | None, pattern: str | None, rules: TextRules | None,
               skipped: int) -> PieceCounts:
    if table is None:
        return PieceCounts.trusted_arrays(*flat, pattern, sentencepiece=rules, skipped_lines=skipped)
    return PieceCounts.trusted(table, pattern, sentencepiece=rules, skipped_lines=skipped)


def _checked_rules(pattern: str | None, rules: TextRules | None, skipped) -> tuple[TextRules | None, int]:
    """``(rules, skipped)`` of a table: the rules with their meta pieces sorted, and skipped
    lines only for a table of sentencepiece words (which no pattern cut)."""
    if rules is None:
        if skipped:
            raise ValueError("skipped_lines: only a table of sentencepiece words counts skipped lines")
        return None, 0
    from bytepair.split.spm_text import TextRules

    if not isinstance(rules, TextRules):
        raise TypeError(f"sentencepiece: expected TextRules, got {type(rules).__name__}")
    if pattern is not None:
        raise ValueError("pattern: a table of sentencepiece words has no pattern (give None)")
    if isinstance(skipped, bool) or not isinstance(skipped, int) or skipped < 0:
        raise ValueError(f"skipped_lines: {skipped!r} is not a non-negative integer")
    if rules.precompiled_charsmap is not None:
        raise ValueError("sentencepiece: rules with a model's own character map cannot make a table")
    return rules.canonical(), skipped


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
