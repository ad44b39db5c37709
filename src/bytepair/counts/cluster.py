"""Counting on a Dask cluster: one task per file part, tables summed on the cluster.

Each part of :meth:`bytepair.Files.parts` (a byte range of a text file, a
row group of a Parquet file) becomes one task that runs the same counter as
local counting (:func:`bytepair.counts.counting.count_part`) on a worker. The
partial tables are added pairwise by further tasks (a tree of depth
log2(parts)), so they never travel to the caller; only the final table does.

Workers open the files themselves: the paths must name the same files on
every worker (a shared file system) and are sent as absolute paths. The
merge loop is not distributed; it runs where :func:`bytepair.train` is
called, on the summed table.

``dask`` and ``distributed`` are the optional extra ``bytepair[dask]``.
"""

from __future__ import annotations

from typing import Callable

from bytepair.read.corpus import Files, portable_name
from bytepair.counts.counting import count_part
from bytepair.counts.piece_counts import PieceCounts

#: Seconds to wait for a scheduler named by its address before giving up.
CONNECT_TIMEOUT = 5
#: Parts are at least this many bytes: a task costs the scheduler about a millisecond.
PART_BYTES = 1 << 23


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "counting on a Dask cluster needs dask and distributed: pip install 'bytepair[dask]'"
        ) from None
    return distributed


def connect(address: str, timeout: float | None = None):
    """A ``distributed.Client`` for the scheduler at ``address`` (``tcp://host:8786``).

    An unreachable scheduler raises ``OSError`` after ``timeout`` seconds
    (default :data:`CONNECT_TIMEOUT`).
    """
    distributed = _distributed()
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    try:
        return distributed.Client(address, timeout=timeout, set_as_default=False)
    except OSError as exc:
        raise OSError(f"scheduler: cannot connect to {address!r}: {exc}") from None
    except ValueError as exc:  # a malformed address
        raise ValueError(f"scheduler: bad address {address!r}: {exc}") from None


def count_part_task(path: str, start: int, end: int | None, source: str | None,
                    per_line: bool, jsonl_field: str, text_column: str) -> PieceCounts:
    """The table of one file part; runs on a worker. O(part size)."""
    counts = count_part(path, start, end, source, per_line=per_line, jsonl_field=jsonl_field,
                        text_column=text_column)
    return PieceCounts.trusted(dict(counts), source)


def add_tables(left: PieceCounts, right: PieceCounts) -> PieceCounts:
    """The sum of two partial tables; runs on a worker. O(pieces of both)."""
    return left + right


def cluster_parts(client, files: Files, part_bytes: int | None = None) -> list[tuple]:
    """The parts of ``files`` the cluster counts, one task each: :meth:`Files.parts` of
    at least ``part_bytes`` (default :data:`PART_BYTES`), about four per worker thread."""
    distributed = _distributed()
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client, got {type(client).__name__}")
    threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
    if threads == 0:
        raise ValueError("client: the cluster has no workers")
    minimum = PART_BYTES if part_bytes is None else part_bytes
    return files.parts(max(minimum, files.total_bytes() // (4 * threads) + 1))


def count_on_cluster(client, files: Files, source: str | None, *,
                     part_bytes: int | None = None, progress_bar=None,
                     count: Callable[[str, int, int | None], PieceCounts] | None = None) -> PieceCounts:
    """The piece counts of ``files``, counted by the workers of ``client``.

    Parts hold at least ``part_bytes`` bytes (default :data:`PART_BYTES`), and about four per worker thread
    on large inputs. ``progress_bar`` advances by each part's size (bytes, or
    row groups' share of the file for Parquet) as its task finishes. The
    result equals local counting: the sum does not depend on the split.
    ``count(path, start, end)``, a picklable callable, counts a part instead of
    :func:`count_part_task` (sentencepiece's words count so).
    """
    distributed = _distributed()
    parts = cluster_parts(client, files, part_bytes)
    if not parts:
        return PieceCounts.trusted({}, source)
    import uuid
    from concurrent.futures import CancelledError  # distributed has it loaded already

    run = uuid.uuid4().hex[:12]
    keys = {f"bytepair-count-{run}-{i}": part for i, part in enumerate(parts)}
    try:
        return _count_parts(client, distributed, files, source, parts, run, progress_bar, count)
    except (OSError, ValueError, TypeError, ImportError, MemoryError):
        raise  # bytepair's own errors name the file; lost connections are OSError
    except CancelledError as exc:
        raise OSError(f"scheduler: lost the scheduler at {_address(client)} while counting "
                      f"({_one_line(exc)})") from None
    except distributed.KilledWorker as exc:
        key = exc.args[0] if exc.args else None
        raise OSError(f"cluster: {_part_name(keys.get(key))}: the task ended every worker that "
                      f"ran it (killed, or out of memory?): {_one_line(exc)}") from None
    except Exception as exc:
        raise OSError(f"cluster: counting failed on a worker: {type(exc).__name__}: "
                      f"{_one_line(exc)}") from None


def _count_parts(client, distributed, files: Files, source: str | None, parts: list, run: str,
                 progress_bar, count: Callable | None) -> PieceCounts:
    """Submit one task per part and the reduction tree; wait for the total."""
    if count is None:
        counted = [
            client.submit(count_part_task, portable_name(path), start, end, source, files.per_line,
                          files.jsonl_field, files.text_column, key=f"bytepair-count-{run}-{i}")
            for i, (path, start, end) in enumerate(parts)
        ]
    else:
        counted = [client.submit(count, portable_name(path), start, end, key=f"bytepair-count-{run}-{i}")
                   for i, (path, start, end) in enumerate(parts)]
    # The reduction tree is submitted at once; the scheduler runs each sum as
    # soon as its two inputs exist, while other parts are still being counted.
    level, depth = counted, 0
    while len(level) > 1:
        depth += 1
        pairs = [
            client.submit(add_tables, level[i], level[i + 1], key=f"bytepair-sum-{run}-{depth}-{i // 2}")
            for i in range(0, len(level) - 1, 2)
        ]
        level = pairs + level[len(level) - len(level) % 2:]
    total = level[0]
    sizes = {f.key: files.part_size(path, start, end) for f, (path, start, end) in zip(counted, parts)}
    for future in distributed.as_completed(counted, loop=client.loop):
        if future.status != "finished":
            future.result()  # raises the worker's exception (or the cancellation) here
        if progress_bar is not None:
            progress_bar.update(sizes[future.key])
    del counted, level
    return total.result()


def _part_name(part: tuple | None) -> str:
    if part is None:
        return "a part"
    path, start, end = part
    return f"{path} (part from {start} to {'the end' if end is None else end})"


def _address(client) -> str:
    try:
        return repr(client.scheduler.address)
    except AttributeError:
        return "its address"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
