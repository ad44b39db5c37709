"""Counting: documents -> pieces -> a table ``{piece UTF-8 bytes: count}``.

Three layers, each usable on its own (a cluster scheduler can call the first
two and sum the tables itself):

* :func:`count_documents` counts an iterable of documents in this process;
* :func:`count_part` counts one byte range of one file (see
  :meth:`bytepair.Files.parts`) in this process;
* :func:`count_pieces` and :func:`count_files` spread that work over
  ``workers`` threads or processes and sum the tables. The sum does not
  depend on how the work was split, so every split gives the same table.

What is counted comes from the read stage, as it yields it: documents
(:meth:`bytepair.Files.documents`, :func:`bytepair.read.corpus.read_file`) or
blocks of local text files with their offsets
(:func:`bytepair.read.blocks.file_blocks`, :meth:`bytepair.Files.blocks`);
nothing here opens a file. Files and in-memory documents with a named
pattern (or none) are split and counted in compiled code over large buffers
(``bytepair.split._split.PieceTable``); custom regexes go through ``regex``.

``source`` is the pre-tokenizer's regex source (:func:`bytepair.split.pretokenize.resolve_pattern`);
``None`` means no split: each document is one piece, counted as bytes.
"""

from __future__ import annotations

import os
import queue
import threading
from bisect import bisect_right
from collections import Counter, deque
from itertools import accumulate
from pathlib import Path
from typing import Callable, Iterable, Iterator, NamedTuple

from bytepair._util.errors import Advice, InputError
from bytepair.read import blocks
from bytepair.read.corpus import Files, RemoteFile, file_of, read_file, reads_in_blocks
from bytepair.split import fastsplit
from bytepair.counts.spill import Spill
from bytepair.counts.workers import process_pool, start_worker, unordered
from bytepair.split.pretokenize import PATTERNS, splitter  # noqa: F401 (PATTERNS: doctests)
from bytepair.counts.piece_counts import PieceCounts

#: Documents are counted in batches of about this many characters.
BATCH_CHARS = 1 << 21
#: Files are counted by workers in byte ranges of at least this size.
PART_BYTES = 1 << 20
#: No bound: nothing is ever spilled (the default of the helpers below).
NO_SPILL = Spill(None)


class Partial(NamedTuple):
    """One batch or file part as counted, as a worker reports it.

    ``size`` is the characters (batch) or bytes (file part) it covered;
    ``pid`` and ``thread`` (``threading.get_ident()``) say who counted it.
    ``counts`` is its table, or None when the table stays with the worker
    until the end (compiled counting).
    """

    counts: Counter | None
    size: int
    pid: int
    thread: int


def _partial(counts: Counter | None, size: int) -> Partial:
    return Partial(counts, size, os.getpid(), threading.get_ident())


def compiled_counter(source: str | None) -> str | None | bool:
    """The compiled pattern name for ``source`` (None: byte mode), or False when ``regex`` splits."""
    if not fastsplit.available():
        return False
    if source is None:
        return None
    return fastsplit.compiled_name(source) or False


def counts_bytes(source: str | None) -> bool:
    """Whether :func:`count_pieces` takes ``bytes`` documents for ``source`` (else ``str``)."""
    return source is None or compiled_counter(source) is not False


def _table_counter(table) -> Counter:
    return Counter(table.items())


def count_documents(documents: Iterable[str | bytes], source: str | None) -> Counter:
    """Piece counts of ``documents`` in this process: O(total characters).

    Documents are ``str`` when ``source`` is a pattern, ``bytes`` (or ``str``,
    counted as is) when it is ``None``. Empty documents add nothing.

    >>> sorted(count_documents(["a b a", "b"], PATTERNS["gpt2"]).items())
    [(b' a', 1), (b' b', 1), (b'a', 1), (b'b', 1)]
    """
    if source is None:
        return Counter(doc for doc in documents if doc)
    name = compiled_counter(source)
    if name:
        return fastsplit.count(documents, name)
    split = splitter(source)
    counts: Counter = Counter()
    for doc in documents:
        counts.update(split(doc))
    return Counter({piece.encode("utf-8"): n for piece, n in counts.items()})


def count_block(table, path: Path, offset: int, data: bytes, name: str | None,
                 per_line: bool) -> None:
    """Count one block of a file (its bytes from ``offset`` on) into ``table``.

    Invalid UTF-8 raises ValueError naming the file and the absolute byte offset.
    """
    try:
        table.count(data, name, per_line=per_line)
    except fastsplit.InvalidUTF8 as exc:
        raise InputError(
            f"{path}: invalid UTF-8 at byte offset {offset + exc.offset} (only byte mode, ",
            Advice("pretokenize=None"), ", accepts any bytes)"
        ) from None


def _in_blocks(path: Path | RemoteFile, source: str | None) -> bool:
    """Whether compiled code reads, splits and counts ``path`` in blocks (no Python object
    per document): local plain or gzip text, with a named pattern or none."""
    return compiled_counter(source) is not False and reads_in_blocks(path)


def part_into(table, path: Path | RemoteFile, start: int, end: int | None, source: str | None,
               per_line: bool, jsonl_field: str, text_column: str) -> Counter | None:
    """Count one part: into ``table`` when compiled code can, else return its Counter.

    Only local plain and gzip text is read in blocks
    (:func:`bytepair.read.blocks.file_blocks`; memory: one block plus the
    table); Parquet row groups, JSON Lines and fsspec URLs come as documents
    from :func:`bytepair.read.corpus.read_file`.
    """
    name = compiled_counter(source)
    if table is not None and _in_blocks(path, source):
        for offset, data, _ in blocks.file_blocks(path, start, end, per_line=per_line,
                                                  cut_documents=name is not None, mapped=True):
            count_block(table, path, offset, data, name, per_line)
        return None
    documents = read_file(path, text=source is not None, per_line=per_line,
                          jsonl_field=jsonl_field, start=start, end=end, text_column=text_column)
    if name is not False and table is not None and source is not None:
        table.add_documents(documents, name)
        return None
    return count_documents(documents, source)


def count_part(path: str | os.PathLike, start: int, end: int | None, source: str | None, *,
               per_line: bool = False, jsonl_field: str = "text",
               text_column: str = "text") -> Counter:
    """Piece counts of the documents in bytes ``[start, end)`` of one file (``end=None``: to the end).

    The range comes from :meth:`bytepair.Files.parts`, which cuts only at line
    ends or document cut points; for a Parquet file it is a range of row
    groups. ``path`` may be an fsspec URL. Local plain and gzip text with a
    named pattern or none is read in blocks and split and counted in compiled
    code; Parquet, JSON Lines and URLs are read as documents, then counted.
    O(range size).
    """
    table = fastsplit.table() if fastsplit.available() else None
    counts = part_into(table, file_of(path), start, end, source, per_line, jsonl_field,
                        text_column)
    return counts if counts is not None else _table_counter(table)


def _count_batch(job: tuple[list, str | None]) -> Partial:
    documents, source = job
    return _partial(count_documents(documents, source), sum(map(len, documents)))


def _batches(documents: Iterator, batch_chars: int) -> Iterator[list]:
    batch, size = [], 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if size >= batch_chars:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _on_threads(count: Callable[..., Partial], jobs: Iterable[tuple], workers: int,
                add: Callable[[Partial], None], spill: Spill = NO_SPILL) -> list:
    """``add(count(table, job))`` for every job, on ``workers`` threads.

    Compiled counting releases the GIL, so the threads count at the same time,
    each into a table of its own (returned: merge them). The jobs are made
    lazily in this thread (reading the next block, joining the next batch)
    while the threads count, at most ``2 * workers`` waiting at a time: memory
    stays bounded, and after an interrupt the pool waits for the jobs already
    running only (one block or batch each). A table over ``spill``'s bound is
    written out as a sorted run and replaced by an empty one.
    """
    from concurrent.futures import ThreadPoolExecutor  # not at import: it costs ~8 ms

    free = queue.SimpleQueue()
    for _ in range(workers):
        free.put(fastsplit.table())

    def run(job: tuple) -> Partial:
        table = free.get()
        try:
            partial = count(table, job)
            if spill.over(table):
                spill.write(table)
                table = fastsplit.table()
            return partial
        finally:
            free.put(table)

    with ThreadPoolExecutor(workers) as pool:
        pending: deque = deque()
        try:
            for job in jobs:
                pending.append(pool.submit(run, job))
                while len(pending) > 2 * workers or (pending and pending[0].done()):
                    add(_result(pending.popleft()))
            while pending:
                add(_result(pending.popleft()))
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    # Every thread has ended and given its table back.
    return [free.get() for _ in range(workers)]


#: How long the main thread waits on a worker at a time (seconds), between looks at signals.
SIGNAL_POLL = 0.25


def _result(future):
    """``future.result()``, waited for in short steps, as :func:`_unordered` waits for processes:
    a SIGINT or SIGTERM that the kernel hands to a counting thread only sets a flag, and the
    main thread runs its handler (the interrupt) only once it wakes up, not when the block
    being counted is done, however long that takes."""
    from concurrent.futures import wait  # not at import, as the pools

    while not wait([future], timeout=SIGNAL_POLL).done:
        pass
    return future.result()


def _merged(tables: list):
    """One table holding the sum of ``tables`` (the first, with the others added)."""
    total = tables[0]
    for table in tables[1:]:
        total.merge(table)
    return total


def _count_compiled_batches(batches: Iterator[list], name: str | None, workers: int,
                            add: Callable[[Partial], None], spill: Spill) -> list:
    """Count batches of ``bytes`` documents in compiled code, on ``workers`` threads.

    Each batch is joined into one buffer with its document bounds and counted
    without the GIL, so threads count in parallel while this thread joins
    the next batch. One table per thread (returned, to merge).
    """

    def count(table, job: tuple) -> Partial:
        data, bounds, first, size = job
        try:
            table.count(data, name, offsets=bounds)
        except fastsplit.InvalidUTF8 as exc:
            ends = bounds[1::2]
            doc = bisect_right(ends, exc.offset)
            start = bounds[2 * doc]
            raise ValueError(f"corpus[{first + doc}]: invalid UTF-8 at byte offset "
                             f"{exc.offset - start}") from None
        return _partial(None, size)

    def jobs() -> Iterator[tuple]:
        first_index = 0
        for batch in batches:
            ends = list(accumulate(map(len, batch)))
            starts = [0, *ends[:-1]]
            yield b"".join(batch), fastsplit.bounds(starts, ends), first_index, ends[-1]
            first_index += len(batch)

    return _on_threads(count, jobs(), workers, add, spill)


def _collector(total: Counter, progress_bar, on_partial: Callable[[Partial], None] | None,
               spill: Spill = NO_SPILL) -> Callable[[Partial], None]:
    """What both pools do with each Partial in this process: sum (spilling the sum
    when it passes the bound), show progress, report."""

    def add(partial: Partial) -> None:
        if partial.counts is not None:
            total.update(partial.counts)
            if spill.over(total):
                spill.write(total)
                total.clear()
        if progress_bar is not None:
            progress_bar.update(partial.size)
        if on_partial is not None:
            on_partial(partial)

    return add


def _piece_counts(counts: Counter, tables: list, source: str | None,
                  spill: Spill) -> PieceCounts:
    """``counts`` plus the compiled ``tables`` (plus the runs ``spill`` wrote) as one
    :class:`PieceCounts`.

    When the tables hold every count, the result keeps their flat arrays: no
    Python object is made per piece on the way to the merge loop. Spilled
    runs are merged with the tables in one streaming pass.
    """
    if spill.runs:
        everything = [counts, *tables]
        tables.clear()  # the caller's list: the tables go as they are written out
        return spill.merge(everything, source)
    tables = [table for table in tables if table is not None]
    if tables and not counts:
        # Summed straight into the flat arrays, each table freed as it is read.
        # One table a counting thread: as many threads sum them.
        return PieceCounts.trusted_arrays(*fastsplit.merged_arrays(tables, len(tables)), source)
    if tables:
        counts.update(_table_counter(_merged(tables)))
    return PieceCounts.trusted(dict(counts), source)


def count_pieces(documents: Iterable, source: str | None, *, workers: int = 1,
                 batch_chars: int = BATCH_CHARS, progress_bar=None,
                 on_partial: Callable[[Partial], None] | None = None,
                 count_memory: int | None = None) -> PieceCounts:
    """Piece counts of a document stream, read once, in batches of about ``batch_chars``.

    With a named pattern (or none) and the compiled extension, ``documents``
    must be ``bytes`` (as :func:`bytepair.read.corpus.iter_documents` gives them
    with ``text=False``): each batch is joined and counted in compiled code on
    ``workers`` threads. Otherwise (a custom regex) batches of ``str`` go to
    ``workers`` processes. ``on_partial`` sees each batch's :class:`Partial`
    in this process. ``count_memory`` (bytes; None: no bound) bounds the
    tables: one that passes its share is written to a temporary file as a
    sorted run, and the runs are merged at the end (:mod:`bytepair.counts.spill`);
    the table is the same. O(total characters).
    """
    workers = max(1, workers)
    with Spill(count_memory, workers + 1) as spill:
        total: Counter = Counter()
        add = _collector(total, progress_bar, on_partial, spill)
        name = compiled_counter(source)
        if name is not False:
            tables = _count_compiled_batches(_batches(iter(documents), batch_chars), name,
                                             workers, add, spill)
            return _piece_counts(total, tables, source, spill)
        jobs = ((batch, source) for batch in _batches(iter(documents), batch_chars))
        if workers <= 1 or source is None:
            for job in jobs:
                add(_count_batch(job))
        else:
            with process_pool(workers) as pool:
                for partial in unordered(pool, _count_batch, jobs, 2 * workers,
                                          lambda _: "corpus"):
                    add(partial)
        return _piece_counts(total, [], source, spill)


# The table of a file-counting worker process, handed back once at the end.
_WORKER_TABLE = None
_WORKER_BARRIER = None
_WORKER_SPILL: Spill | None = None
_WORKER_RUNS: list = []


def _start_file_worker(parent: int, barrier, spill: Spill) -> None:
    """Pool initializer of :func:`count_files`: the worker lifecycle, then one table."""
    global _WORKER_TABLE, _WORKER_BARRIER, _WORKER_SPILL, _WORKER_RUNS
    start_worker(parent)
    _WORKER_TABLE = fastsplit.table() if fastsplit.available() else None
    _WORKER_BARRIER = barrier
    _WORKER_SPILL = spill
    _WORKER_RUNS = []


def _count_file_part_into(table, job: tuple) -> Partial:
    path, start, end, source, per_line, jsonl_field, text_column, size = job
    counts = part_into(table, path, start, end, source, per_line, jsonl_field, text_column)
    return _partial(counts, size)


def _count_file_block(table, job: tuple) -> Partial:
    path, offset, data, name, per_line, progress = job
    count_block(table, path, offset, data, name, per_line)
    return _partial(None, progress)


def _count_file_part(job: tuple) -> Partial:
    global _WORKER_TABLE
    partial = _count_file_part_into(_WORKER_TABLE, job)
    if _WORKER_SPILL.over(_WORKER_TABLE):
        # Into the parent's temporary directory; the parent learns the name at the end.
        _WORKER_RUNS.append(_WORKER_SPILL.write(_WORKER_TABLE))
        _WORKER_TABLE = fastsplit.table()
    return partial


def _part_name(job: tuple) -> str:
    """The file and range of a :func:`count_files` job, for messages."""
    path, start, end = job[:3]
    return f"{path} (part from {start} to {'the end' if end is None else end})"


def _hand_back(_) -> tuple[object, list]:
    # Every worker takes exactly one of these: each waits until all have one.
    _WORKER_BARRIER.wait()
    return _WORKER_TABLE, _WORKER_RUNS


def counted_in_blocks(files: Files, source: str | None) -> bool:
    """Whether :func:`count_files` reads, splits and counts all of ``files`` in blocks,
    in compiled code that releases the GIL (local plain or gzip text, a named
    pattern): then it starts no processes (it counts on threads, or in the
    caller's thread with one worker), and other work may run beside it."""
    return source is not None and all(_in_blocks(p, source) for p in files.paths)


def count_files(files: Files, source: str | None, *, workers: int, part_bytes: int = PART_BYTES,
                progress_bar=None, on_partial: Callable[[Partial], None] | None = None,
                count_memory: int | None = None) -> PieceCounts:
    """Piece counts of ``files``, spread over ``workers``.

    Local plain and gzip text with a named pattern is read here, file after
    file, in blocks of about ``part_bytes`` (per line: ending at line ends;
    a whole-file document: at cut points), and ``workers`` threads count the
    blocks in compiled code, which releases the GIL, each into a table of its
    own (merged at the end; nothing is pickled). Reading overlaps counting,
    so one large gzip file is counted on every worker too. JSON Lines,
    Parquet, URLs and custom regexes need Python per document: the workers
    are processes then, each reading its own parts (byte ranges of about
    ``part_bytes`` from :meth:`bytepair.Files.parts`; a gzip file is one
    part), counting them all into one table, sent back once at the end (only
    tables travel between processes, never text). With one worker everything
    is counted in this thread. ``on_partial`` sees each block's or part's
    :class:`Partial` in this thread. O(total bytes) work; memory per worker:
    about one block plus its table. ``count_memory`` (bytes; None: no bound)
    bounds all the tables together: one that passes its share is written to
    a temporary file as a sorted run, and the runs are merged at the end
    (:mod:`bytepair.counts.spill`); the table is the same.
    """
    with Spill(count_memory, max(1, workers) + 1) as spill:
        return _count_files(files, source, workers, part_bytes, progress_bar, on_partial, spill)


def _count_files(files: Files, source: str | None, workers: int, part_bytes: int, progress_bar,
                 on_partial: Callable[[Partial], None] | None, spill: Spill) -> PieceCounts:
    """:func:`count_files` inside its spill directory."""
    total: Counter = Counter()
    add = _collector(total, progress_bar, on_partial, spill)
    name = compiled_counter(source)
    # Byte mode: nearly every line is a distinct piece, so merging worker
    # tables would cost about what counting does; count here.
    if workers > 1 and counted_in_blocks(files, source):
        jobs = ((path, offset, data, name, files.per_line, progress)
                for path, offset, data, progress in files.blocks(part_bytes, cut_documents=True,
                                                                 mapped=True))
        tables = _on_threads(_count_file_block, jobs, workers, add, spill)
        return _piece_counts(total, tables, source, spill)

    # Only the named patterns have proven cut points (docs/design.md 4.3.1).
    cut = bool(name)
    jobs = [(path, start, end, source, files.per_line, files.jsonl_field, files.text_column,
             files.part_size(path, start, end))
            for path, start, end in files.parts(part_bytes, cut_documents=cut)]
    workers = 1 if source is None else max(1, min(workers, len(jobs)))
    tables = []
    if workers == 1:
        table = fastsplit.table() if fastsplit.available() else None
        for job in jobs:
            add(_count_file_part_into(table, job))
            if spill.over(table):
                spill.write(table)
                table = fastsplit.table()
        tables.append(table)
    else:
        import multiprocessing

        barrier = multiprocessing.get_context("fork").Barrier(workers)
        with process_pool(workers, _start_file_worker, (barrier, spill)) as pool:
            for partial in unordered(pool, _count_file_part, jobs, 2 * workers, _part_name):
                add(partial)
            shown = ", ".join(map(str, files.paths[:2])) + (", ..." if len(files.paths) > 2 else "")
            handed = list(unordered(pool, _hand_back, range(workers), workers, lambda _: shown))
        tables = [table for table, _ in handed]
        for _, runs in handed:
            spill.adopt(runs)
        del handed  # the tables are in ``tables`` only: a merge past a spill lets them go
    return _piece_counts(total, tables, source, spill)
