"""Counting: documents -> pieces -> a table ``{piece UTF-8 bytes: count}``.

Three layers, each usable on its own (a cluster scheduler can call the first
two and sum the tables itself):

* :func:`count_documents` counts an iterable of documents in this process;
* :func:`count_part` counts one byte range of one file (see
  :meth:`bytepair.Files.parts`) in this process;
* :func:`count_pieces` and :func:`count_files` spread that work over
  ``workers`` processes and sum the tables. The sum does not depend on how
  the work was split, so every split gives the same table.

``source`` is the pre-tokenizer's regex source (:func:`bytepair.pretokenize.resolve_pattern`);
``None`` means no split: each document is one piece, counted as bytes.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections import Counter
from typing import Callable, Iterable, Iterator, NamedTuple

from . import fastsplit
from .corpus import Files, file_of, read_file
from .pretokenize import PATTERNS, splitter

#: Documents are sent to counting workers in batches of about this many characters.
BATCH_CHARS = 1 << 21
#: Line-based files are counted by workers in byte ranges of at least this size.
PART_BYTES = 1 << 23


class Partial(NamedTuple):
    """The table of one batch or file part, as a worker returns it.

    ``size`` is the characters (batch) or bytes (file part) it covered and
    ``pid`` the process that counted it.
    """

    counts: Counter
    size: int
    pid: int


def _compiled_gpt2(source: str | None) -> bool:
    return source == PATTERNS["gpt2"] and fastsplit.available()


def count_documents(documents: Iterable[str | bytes], source: str | None) -> Counter:
    """Piece counts of ``documents`` in this process: O(total characters).

    Documents are ``str`` when ``source`` is a pattern, ``bytes`` (or ``str``,
    counted as is) when it is ``None``. Empty documents add nothing.

    >>> sorted(count_documents(["a b a", "b"], PATTERNS["gpt2"]).items())
    [(b' a', 1), (b' b', 1), (b'a', 1), (b'b', 1)]
    """
    if source is None:
        return Counter(doc for doc in documents if doc)
    if _compiled_gpt2(source):
        return fastsplit.count_gpt2(documents)
    split = splitter(source)
    counts: Counter = Counter()
    for doc in documents:
        counts.update(split(doc))
    return Counter({piece.encode("utf-8"): n for piece, n in counts.items()})


def count_part(path: str | os.PathLike, start: int, end: int | None, source: str | None, *,
               per_line: bool = False, jsonl_field: str = "text",
               text_column: str = "text") -> Counter:
    """Piece counts of the documents in bytes ``[start, end)`` of one file (``end=None``: to the end).

    The range comes from :meth:`bytepair.Files.parts`, which cuts only at line
    ends; for a Parquet file it is a range of row groups. ``path`` may be an
    fsspec URL. O(range size).
    """
    documents = read_file(file_of(path), text=source is not None, per_line=per_line,
                          jsonl_field=jsonl_field, start=start, end=end, text_column=text_column)
    return count_documents(documents, source)


#: prctl(2) option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def _start_worker(parent: int) -> None:
    """Pool initializer: signals as a worker needs them, and death with the parent.

    Only the parent reacts to Ctrl-C and SIGTERM: it stops the pool, whose
    ``terminate`` sends each worker SIGTERM, which ends it at once (whatever
    handler the parent had). On Linux the kernel sends SIGKILL to the worker when the
    parent dies, even by SIGKILL; elsewhere a worker outlives a killed parent
    until its current task is done (``docs/design.md``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Out of the parent's process group: a signal sent to the group (``timeout``,
    # ``kill -TERM -PGID``) must not kill an idle worker that holds the task
    # queue's lock, or the parent's pool shutdown waits for that lock for ever.
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the line above took effect


def _pool(workers: int, source: str | None):
    if _compiled_gpt2(source):
        fastsplit.split_gpt2("")  # build its table once, before workers fork
    return multiprocessing.get_context("fork").Pool(
        workers, initializer=_start_worker, initargs=(os.getpid(),))


def _count_batch(job: tuple[list, str | None]) -> Partial:
    documents, source = job
    return Partial(count_documents(documents, source), sum(map(len, documents)), os.getpid())


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


def count_pieces(documents: Iterable, source: str | None, *, workers: int = 1,
                 batch_chars: int = BATCH_CHARS, progress_bar=None,
                 on_partial: Callable[[Partial], None] | None = None) -> Counter:
    """Piece counts of a document stream, read once, in batches of about ``batch_chars``.

    With ``workers > 1`` the batches are counted in worker processes. Shipping
    text to a worker costs about as much as counting it when no regex runs
    (no pre-tokenizer, or the compiled GPT-2 splitter), so those are counted
    in this process whatever ``workers`` says. ``on_partial`` sees each
    batch's :class:`Partial` in this process. O(total characters).
    """
    jobs = ((batch, source) for batch in _batches(iter(documents), batch_chars))
    total: Counter = Counter()

    def add(partial: Partial) -> None:
        total.update(partial.counts)
        if progress_bar is not None:
            progress_bar.update(partial.size)
        if on_partial is not None:
            on_partial(partial)

    if workers <= 1 or source is None or _compiled_gpt2(source):
        for job in jobs:
            add(_count_batch(job))
    else:
        with _pool(workers, source) as pool:
            for partial in pool.imap_unordered(_count_batch, jobs):
                add(partial)
    return total


def _count_file_part(job: tuple) -> Partial:
    path, start, end, source, per_line, jsonl_field, text_column, size = job
    counts = count_part(path, start, end, source, per_line=per_line, jsonl_field=jsonl_field,
                        text_column=text_column)
    return Partial(counts, size, os.getpid())


def count_files(files: Files, source: str | None, *, workers: int, part_bytes: int = PART_BYTES,
                progress_bar=None, on_partial: Callable[[Partial], None] | None = None) -> Counter:
    """Piece counts of ``files``, each worker process reading its own byte ranges.

    Only the tables travel between processes, not the text. Parts hold at
    least ``part_bytes`` bytes, and about four per worker on large inputs
    (:meth:`bytepair.Files.parts`: gzip files and whole-file documents are one
    part each). ``on_partial`` sees each part's :class:`Partial` in this
    process. O(total bytes) work, spread over ``workers``.
    """
    part = max(part_bytes, files.total_bytes() // (4 * workers) + 1)
    jobs = [(path, start, end, source, files.per_line, files.jsonl_field, files.text_column,
             files.part_size(path, start, end))
            for path, start, end in files.parts(part)]
    total: Counter = Counter()
    with _pool(workers, source) as pool:
        for partial in pool.imap_unordered(_count_file_part, jobs):
            total.update(partial.counts)
            if progress_bar is not None:
                progress_bar.update(partial.size)
            if on_partial is not None:
                on_partial(partial)
    return total
