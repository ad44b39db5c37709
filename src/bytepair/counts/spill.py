"""Sorted runs: piece tables written to disk and merged back, so that counting
memory is bounded by the distinct pieces and not by workers times tables.

A *run* is a table written in piece byte order, one record per piece
(little-endian int64 count, uint32 length, the piece's bytes). Runs of any
number and size merge in one streaming pass (:func:`merge_runs`): the
smallest piece at the head of every run is taken next, equal pieces are
summed, and the result is built directly as flat arrays. A sum does not
depend on how the counts were split into runs, so a spilled count equals an
in-memory count, piece for piece.

:class:`Spill` holds a temporary directory (under ``TMPDIR``) and the bound;
counting asks it whether a table is over the bound and hands it the table to
write. The directory is removed when the ``with`` block ends, by success,
error, Ctrl-C or SIGTERM (which the command line turns into Ctrl-C).
"""

from __future__ import annotations

import heapq
import itertools
import os
import struct
import sys
import threading
from array import array
from pathlib import Path
from typing import Iterable, Iterator

from bytepair._util.atomic import open_atomically
from bytepair.counts.piece_counts import PieceCounts

#: What one distinct piece costs in a counting table, as an estimate: a 32-byte
#: slot of the compiled table at 30..60% load, or a Counter entry with its
#: bytes and int objects, plus the piece itself for long pieces.
BYTES_PER_PIECE = 128
#: The first bytes of a run file.
MAGIC = b"bytepair-run 1\n"
_RECORD = struct.Struct("<qI")
#: Records are written and read in buffers of about this size.
_BUFFER = 1 << 20
#: mallopt(3): allocations from this size on are mmap'ed (and given back when freed).
_M_MMAP_THRESHOLD = -3


def give_freed_tables_back() -> None:
    """Keep glibc's mmap threshold at 1 MiB for the rest of the process.

    Subtle: glibc raises the threshold each time a large mmap'ed block is
    freed, so the tables that replace spilled ones come from the threads'
    heaps, which fragment and are not given back: with two threads the process
    kept growing past the bound. Done only when a bound is asked for.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes  # at first use: not part of importing bytepair

            ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, _BUFFER)
        except (OSError, AttributeError):
            pass  # not glibc: its allocator has its own policy


def write_run(handle, items: Iterable[tuple[bytes, int]]) -> int:
    """Write ``items`` (``(piece, count)``, sorted by piece, distinct) as a run to
    the binary ``handle``; returns the number of records. O(pieces + bytes)."""
    handle.write(MAGIC)
    pack = _RECORD.pack
    chunk: list[bytes] = []
    size = written = 0
    for piece, count in items:
        chunk.append(pack(count, len(piece)))
        chunk.append(piece)
        size += 12 + len(piece)
        written += 1
        if size >= _BUFFER:
            handle.write(b"".join(chunk))
            chunk, size = [], 0
    handle.write(b"".join(chunk))
    return written


def save_run(path: str | os.PathLike, items: Iterable[tuple[bytes, int]]) -> None:
    """:func:`write_run` to ``path`` atomically: the whole run appears, or nothing."""
    with open_atomically(path) as handle:
        write_run(handle, items)


def read_run(path: str | os.PathLike) -> Iterator[tuple[bytes, int]]:
    """The ``(piece, count)`` records of the run at ``path``, streamed. A file that
    is not a whole run raises ValueError naming it."""
    unpack = _RECORD.unpack_from
    with open(path, "rb", buffering=_BUFFER) as handle:
        if handle.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{os.fspath(path)!r} is not a bytepair run file")
        read = handle.read
        while True:
            head = read(12)
            if not head:
                return
            if len(head) < 12:
                raise ValueError(f"{os.fspath(path)!r} is truncated")
            count, length = unpack(head)
            piece = read(length)
            if len(piece) < length:
                raise ValueError(f"{os.fspath(path)!r} is truncated")
            yield piece, count


def sorted_items(table) -> list[tuple[bytes, int]]:
    """The items of a Counter, dict or compiled ``PieceTable``, sorted by piece."""
    items = table.items()
    if isinstance(items, dict):
        items = items.items()  # PieceTable.items() returns a dict
    return sorted(items)


def merge_runs(runs: Iterable[Iterable[tuple[bytes, int]]], source: str | None) -> PieceCounts:
    """The sum of sorted ``runs`` (iterables of ``(piece, count)``, each sorted by
    piece) as one :class:`PieceCounts` cut with ``source``.

    A k-way merge: O(records * log runs) time; memory the result's flat arrays
    plus one record per run.

    >>> dict(merge_runs([[(b"a", 1), (b"b", 2)], [(b"a", 3), (b"c", 1)]], None))
    {b'a': 4, b'b': 2, b'c': 1}
    """
    data = bytearray()
    starts = array("q", [0])
    counts = array("q")
    last, total = None, 0
    for piece, count in heapq.merge(*runs):
        if piece == last:
            total += count
            continue
        if last is not None:
            data += last
            starts.append(len(data))
            counts.append(total)
        last, total = piece, count
    if last is not None:
        data += last
        starts.append(len(data))
        counts.append(total)
    return PieceCounts._from_flat(bytes(data), starts, counts, source)


class Spill:
    """Where counting tables go when they pass ``memory`` bytes (shared by ``tables``).

    ``memory``
        The bound on counting tables, in bytes (estimated as
        :data:`BYTES_PER_PIECE` per distinct piece); None: never spill.
    ``tables``
        How many tables are alive at once (one per worker, and the collector's):
        each may hold its share of ``memory``.
    """

    def __init__(self, memory: int | None, tables: int = 1):
        self.limit = None if memory is None else max(1, memory // (BYTES_PER_PIECE * max(1, tables)))
        self.runs: list[Path] = []
        self._directory: str | None = None
        self._names = itertools.count()
        self._lock = threading.Lock()

    def __enter__(self) -> Spill:
        if self.limit is not None:
            give_freed_tables_back()
            import tempfile  # at first use: not part of importing bytepair

            self._directory = tempfile.mkdtemp(prefix="bytepair-spill-")
        return self

    def __exit__(self, *exc) -> None:
        if self._directory is not None:
            import shutil  # at first use: slow at start-up

            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    @property
    def directory(self) -> str | None:
        """The temporary directory (None when nothing spills)."""
        return self._directory

    def over(self, table) -> bool:
        """Whether ``table`` (anything with a length) has passed its share of the bound."""
        return self.limit is not None and table is not None and len(table) > self.limit

    def write(self, table) -> Path:
        """Write ``table`` as a sorted run into the directory and remember it; the
        caller empties the table. Safe from several threads."""
        with self._lock:
            path = Path(self._directory) / f"run-{os.getpid()}-{next(self._names)}"
        save_run(path, sorted_items(table))
        with self._lock:
            self.runs.append(path)
        return path

    def adopt(self, paths: Iterable[str | os.PathLike]) -> None:
        """Remember runs that worker processes wrote into the directory."""
        with self._lock:
            self.runs.extend(map(Path, paths))

    def merge(self, tables: list, source: str | None) -> PieceCounts:
        """The sum of every run written and the ``tables`` still in memory.

        ``tables`` (a list) is emptied: each table is written as a run in turn and let go
        (a Counter is cleared), so that the merge holds the result and one record per
        run, not the tables and their sorted items besides."""
        while tables:
            table = tables.pop()
            if table is not None and len(table):
                self.write(table)
                if isinstance(table, dict):
                    table.clear()  # the caller's Counter
            del table
        return merge_runs(map(read_run, self.runs), source)
