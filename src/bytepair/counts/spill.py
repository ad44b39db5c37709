"""Sorted runs: piece tables written to disk and merged back, so that counting
memory is bounded by the distinct pieces and not by workers times tables.

A *run* is a table written in piece byte order, one record per piece
(little-endian int64 count, uint32 length, the piece's bytes). Runs of any
number and size merge in one streaming pass (:func:`merge_runs`): the
smallest piece at the head of every run is taken next, equal pieces are
summed, and the result is built directly as flat arrays. A sum does not
depend on how the counts were split into runs, so a spilled count equals an
in-memory count, piece for piece.

With the compiled modules, a compiled table is written out sorted in C
(``bytepair.counts._runs``), and runs are merged in key ranges
(:func:`merge_run_files`): each run is read in chunks of whole records; the
smallest of the chunks' last pieces bounds a range, every run's records up to
it are summed in a compiled table, and the ranges, disjoint, are laid end to
end. No Python object is made per piece on either side, and memory is the
result plus one chunk per run and one range's table. The pure-Python
:func:`merge_runs` is the reference it is tested against.

:class:`Spill` holds a temporary directory and the bound; counting asks it
whether a table is over the bound and hands it the table to write. The
directory is removed when the ``with`` block ends, by success, error, Ctrl-C
or SIGTERM (which the command line turns into Ctrl-C).

A process killed outright (SIGKILL, out of memory, power loss) cannot clean
up, so every spill directory sits in one known place,
``$TMPDIR/bytepair-spill-<uid>/<pid>-<random>/`` (:func:`spill_root`), beside
a lock file that its process holds (``flock``) while it lives. The kernel
drops the lock when the process dies, however it dies; every later count (a
new run or a ``--resume``) first removes the directories whose lock it can
take (:func:`remove_abandoned`).
"""

from __future__ import annotations

import bisect
import contextlib
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
from bytepair.split import fastsplit

_runs = None
if fastsplit.available():  # as BYTEPAIR_NO_EXTENSIONS says
    try:
        from bytepair.counts import _runs
        from bytepair.split._split import PieceTable
    except ImportError:  # pragma: no cover - a pure-Python install: the twin does it all
        _runs = None

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


def save_table(path: str | os.PathLike, table) -> None:
    """``table`` (a Counter, dict or compiled ``PieceTable``) as a run at ``path``, atomically;
    a compiled table is sorted in C, with no Python object per piece."""
    if _runs is None or isinstance(table, dict):
        save_run(path, sorted_items(table))
        return
    with open_atomically(path) as handle:
        handle.write(MAGIC)
        handle.write(_runs.sorted_records(table))


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


#: The chunks of all runs being merged together hold about this many bytes.
MERGE_BYTES = 4 << 20
#: ... and each run's chunk at least this many (a longer record is read whole all the same).
MIN_CHUNK = 1 << 12


class _Chunks:
    """The records of one run file, a chunk of whole records at a time (compiled merge)."""

    def __init__(self, handle, name: str, size: int):
        if handle.read(len(MAGIC)) != MAGIC:
            raise ValueError(f"{name!r} is not a bytepair run file")
        self.handle, self.name, self.size = handle, name, size
        self.buffer, self.starts, self.first = b"", array("q", [0]), 0

    def fill(self) -> bool:
        """Whether records are left; reads the next chunk when this one is used up."""
        if self.first < len(self.starts) - 1:
            return True
        tail = self.buffer[self.starts[-1]:]
        while True:
            more = self.handle.read(self.size)
            buffer = tail + more if tail else more
            starts = _runs.record_starts(buffer)
            if len(starts) > 1:
                self.buffer, self.starts, self.first = buffer, starts, 0
                return True
            if not more:
                if buffer:
                    raise ValueError(f"{self.name!r} is truncated")
                return False
            tail = buffer  # one record longer than a chunk: read on

    def key(self, index: int) -> bytes:
        """The piece of record ``index`` of the chunk."""
        at = self.starts[index]
        (length,) = _LENGTH.unpack_from(self.buffer, at + 8)
        return self.buffer[at + 12:at + 12 + length]

    def take_through(self, bound: bytes) -> bytes:
        """The chunk's records whose piece is at most ``bound``, taken off the chunk."""
        end = bisect.bisect_right(range(len(self.starts) - 1), bound, lo=self.first, key=self.key)
        taken = self.buffer[self.starts[self.first]:self.starts[end]]
        self.first = end
        return taken


_LENGTH = struct.Struct("<I")


def merge_run_files(paths: list, source: str | None, chunks: int = MERGE_BYTES) -> PieceCounts:
    """:func:`merge_runs` of the run files at ``paths``, in compiled code where it can
    (see the module's docstring); the same table either way. ``chunks``: the bytes of
    all runs' chunks together (a key range's table takes about five times that).
    O(records) in C plus O(log records) Python per key range."""
    if _runs is None:
        return merge_runs(map(read_run, paths), source)
    size = max(MIN_CHUNK, chunks // max(1, len(paths)))
    data, starts, counts = bytearray(), array("q", [0]), array("q")
    with contextlib.ExitStack() as stack:
        runs = [_Chunks(stack.enter_context(open(path, "rb")), os.fspath(path), size)
                for path in paths]
        while runs := [run for run in runs if run.fill()]:
            bound = min(run.key(len(run.starts) - 2) for run in runs)
            summed = PieceTable.from_bytes(b"".join([run.take_through(bound) for run in runs]))
            piece_data, piece_starts, piece_counts = summed.arrays()
            del summed
            starts.extend(map(len(data).__add__, piece_starts[1:]))
            data += piece_data
            counts.extend(piece_counts)
    return PieceCounts.trusted_arrays(bytes(data), starts, counts, source)


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
    return PieceCounts.trusted_arrays(bytes(data), starts, counts, source)


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
        self.memory = memory or 0
        self.limit = None if memory is None else max(1, memory // (BYTES_PER_PIECE * max(1, tables)))
        self.runs: list[Path] = []
        self._directory: str | None = None
        self._names = itertools.count()
        self._lock = threading.Lock()
        self._lock_file: int | None = None

    def __enter__(self) -> Spill:
        remove_abandoned()
        if self.limit is not None:
            give_freed_tables_back()
            self._directory, self._lock_file = _claim_directory()
        return self

    def __exit__(self, *exc) -> None:
        if self._directory is not None:
            _release_directory(self._directory, self._lock_file)
            self._directory = self._lock_file = None

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
        save_table(path, table)
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
        # A key range's table costs about five times its chunks: a small share of the bound.
        return merge_run_files(self.runs, source, min(MERGE_BYTES, max(1 << 18, self.memory // 8)))


# -- where spill files live, and who cleans up after a killed run ----------------------------

def spill_root() -> str:
    """``$TMPDIR/bytepair-spill-<uid>``: the directory that holds every run's spill directory."""
    import tempfile  # at first use: not part of importing bytepair

    user = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"bytepair-spill-{user}")


def _own_root() -> str | None:
    """:func:`spill_root`, made if need be; None when it is not a private directory of ours (then
    each run gets a directory of its own in TMPDIR, as ``tempfile.mkdtemp`` makes them)."""
    root = spill_root()
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(root)
    except OSError:
        return None
    import stat

    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        return None  # someone else's, or a link: not a place to write or delete in
    return root


def _claim_directory() -> tuple[str, int | None]:
    """A new spill directory and the descriptor of its held lock file (None without locks).

    The lock file is made under a name that cleaners ignore, locked, and only then
    renamed to ``<name>.lock``: a cleaner never sees an unlocked lock file of a live run.
    """
    import tempfile

    root = _own_root()
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock, no later clean-up
        fcntl = None
    if root is None or fcntl is None:
        return tempfile.mkdtemp(prefix="bytepair-spill-"), None
    for attempt in range(5):
        try:
            handle, claiming = tempfile.mkstemp(prefix=f"{os.getpid()}-", suffix=".claiming",
                                                dir=root)
            break
        except FileNotFoundError:  # another run removed the empty root just now
            if attempt == 4:
                raise
            root = _own_root() or root
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        name = claiming.removesuffix(".claiming")
        os.mkdir(name, 0o700)
        os.rename(claiming, name + ".lock")
    except BaseException:
        os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(claiming)
        raise
    return name, handle


def _release_directory(directory: str, lock_file: int | None) -> None:
    import shutil  # at first use: slow at start-up

    shutil.rmtree(directory, ignore_errors=True)
    if lock_file is not None:
        with contextlib.suppress(OSError):
            os.unlink(directory + ".lock")
        os.close(lock_file)
        with contextlib.suppress(OSError):  # the last run out leaves TMPDIR as it found it
            os.rmdir(os.path.dirname(directory))


def remove_abandoned() -> list[str]:
    """Remove the spill directories in :func:`spill_root` whose process is gone (its lock can
    be taken); returns them. Cheap when there are none: one failed ``listdir``."""
    try:
        names = os.listdir(spill_root())
    except OSError:
        return []
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        return []
    import shutil

    removed = []
    root = spill_root()
    for name in names:
        if not name.endswith(".lock"):
            continue
        lock = os.path.join(root, name)
        try:
            handle = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # held: its run is alive
            directory = lock.removesuffix(".lock")
            shutil.rmtree(directory, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(lock)
            removed.append(directory)
        finally:
            os.close(handle)
    with contextlib.suppress(OSError):  # empty now: leave TMPDIR as it was before any spill
        os.rmdir(root)
    return removed
