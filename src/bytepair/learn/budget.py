"""A memory limit for training: counting kept inside it, and what the engine will
need, told before any work and again before the engine is built.

Three checks, each with one line that says how much is needed:

1. *Before any work* (:func:`check_forecast`): a few MiB read from places spread
   evenly over the input (:func:`sample_blocks`) are counted, and the distinct
   pieces and their bytes are extrapolated to the whole input with a growth law
   ``x(n) = x(s) * (n / s) ** beta``, ``beta`` measured inside the sample (the
   sample against its every other block). The number of distinct pieces grows
   more slowly the more text is read, so ``beta`` measured on a small sample is
   too large. The forecast that decides uses :data:`OPTIMISTIC_GROWTH` times it,
   so that a run that could fit is not refused on a guess; the expected need,
   shown in the message, uses :data:`EXPECTED_GROWTH`. On English of 10 MB to
   1 GB the optimistic forecast was 0.67 to 0.99 of the real values, the expected
   one 0.85 to 1.49 (``python -m benches.max_memory forecast --size 10MB 30MB
   100MB 1GB``). A corpus that repeats itself is what it misjudges: blocks from
   its copies look like new text, so its forecast is high.
2. *While counting* (:func:`counting_plan`): the counting tables spill to disk
   as sorted runs (:mod:`bytepair.counts.spill`) within a share of what the
   limit leaves, with fewer workers when each one's table would be too small.
3. *Before the engine is built* (:func:`check_engine_fits`): the exact counts
   give the engine's need (:func:`engine_bytes`). While merging, the resident
   size is read after each chunk of merges as well, and a run that passes the
   limit all the same stops there instead of growing on until the kernel's
   OOM killer ends it.

The engine's memory is set by its input (docs/design.md §6): per token
position a 4-byte slot and occurrence lists, per piece its start offset
and weight, and a pair table that grows while merging (with the rules, a
Python object each). :data:`BYTES_PER_POSITION`, :data:`BYTES_PER_PIECE` and
:data:`BYTES_PER_MERGE` are calibrated on what the process grows by from the
end of counting to its peak, GPT-2 split, vocabulary 32768, 2 threads
(``python -m benches.phase_memory --language synthetic --size 100MB 300MB 1GB``
and ``--size 100MB`` on real English; docs/simulated-scale.md): the estimate was 1.09 to
1.17 times the measured growth from 100 MB to 1 GB, and the whole forecast
(what is held, the flat arrays and the engine) 1.05 to 1.06 times the measured
peak. It is a calibrated estimate, not a bound: other text may need more, which
the check while merging catches.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

from bytepair._util.validate import format_memory
from bytepair.read.corpus import Files, is_jsonl, is_parquet
from bytepair.split import fastsplit
from bytepair.learn import incremental

# Calibrated on the engine as it is: when its layout changes, measure again with
# ``python -m benches.phase_memory --language synthetic --threads 2 --size 100MB 300MB 1GB``
# and ``python -m benches.memory_model`` and keep the estimate at or just above the growth.

#: Bytes per token position: the 4-byte slot, occurrence lists and the pair table, as they
#: grow from the end of counting to the peak (4.3 to 4.8 measured from 100 MB to 1 GB, with the
#: per-piece and per-merge costs below taken out).
BYTES_PER_POSITION = 5
#: Bytes per piece: its start offset and weight in the flat arrays and in the engine's layout,
#: and the 4-byte slot that ends it there.
BYTES_PER_PIECE = 36
#: Bytes per merge: the rule (a Python object in the list of rules) and the pairs it creates.
BYTES_PER_MERGE = 400
#: The pure-Python twin keeps four Python lists of Python ints per position and dicts of pairs:
#: several times the compiled engine's size.
PYTHON_BYTES_PER_POSITION = 160

#: The forecast reads this many blocks ...
SAMPLE_BLOCKS = 64
#: ... of this many bytes each (and on to the next line end): 4 MiB in all.
SAMPLE_BLOCK = 1 << 16
#: Inputs smaller than this are not forecast: counting them is the quick way to know.
FORECAST_FROM = 4 * SAMPLE_BLOCKS * SAMPLE_BLOCK
#: The growth exponent measured inside the sample, times this, decides whether to refuse.
OPTIMISTIC_GROWTH = 0.8
#: ... and times this gives the expected need that the message names.
EXPECTED_GROWTH = 0.9

#: Of what the limit leaves when counting starts, the counting tables may hold this share;
#: the rest is for the blocks being read, a table being written out as a sorted run (a
#: Python object per piece while it is sorted) and the flat arrays the runs are merged into.
COUNT_SHARE = 0.4
#: Each counting table gets at least this much of the share, else there are fewer workers:
#: a smaller table would spill a run every few blocks.
MIN_TABLE_BYTES = 16 << 20


class MemoryLimitError(MemoryError, ValueError):
    """Training would need more memory than ``max_memory`` allows (a ``ValueError`` too, so
    that the command line reports it as a bad argument)."""


def resident_bytes() -> int:
    """The resident set size of this process, in bytes (0 where ``/proc`` is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def check_limit_now(limit: int | None) -> None:
    """Refuse a ``limit`` (bytes, or None: none) that this process passes already, before any work."""
    held = resident_bytes()
    if limit is not None and held > limit:
        raise MemoryLimitError(f"max_memory: {format_memory(limit)} is less than this process "
                               f"holds before training ({format_memory(held)})")


def engine_bytes(positions: int, pieces: int, merges: int = 0) -> int:
    """What the engine adds while learning ``merges`` rules from ``pieces`` pieces of
    ``positions`` bytes. O(1).

    >>> engine_bytes(1000, 10, 5) == 1000 * BYTES_PER_POSITION + 10 * BYTES_PER_PIECE \\
    ...     + 5 * BYTES_PER_MERGE or incremental.default_backend() != "compiled"
    True
    """
    compiled = incremental.default_backend() == "compiled"
    per_position = BYTES_PER_POSITION if compiled else PYTHON_BYTES_PER_POSITION
    return per_position * positions + BYTES_PER_PIECE * pieces + BYTES_PER_MERGE * merges


def flat_bytes(positions: int, pieces: int) -> int:
    """The flat arrays of the counts (:meth:`PieceCounts.flat`): held while the engine is built."""
    return positions + 16 * pieces


def check_engine_fits(limit: int | None, positions: int, pieces: int, merges: int = 0) -> None:
    """Raise :class:`MemoryLimitError` when the engine's estimate does not fit in ``limit``."""
    if limit is None:
        return
    held = resident_bytes()
    need = held + engine_bytes(positions, pieces, merges)
    if need > limit:
        raise MemoryLimitError(
            f"max_memory: training needs about {format_memory(need)} ("
            f"{format_memory(held)} held now, the counts included, and about "
            f"{format_memory(need - held)} for the merge engine on {positions:,} bytes of "
            f"{pieces:,} distinct pieces), more than the limit of {format_memory(limit)}")


def check_still_fits(limit: int | None, learned: int) -> None:
    """Raise :class:`MemoryLimitError` when the process has grown past ``limit`` while merging."""
    if limit is None:
        return
    held = resident_bytes()
    if held > limit:
        raise MemoryLimitError(
            f"max_memory: training passed the limit of {format_memory(limit)} after "
            f"{learned:,} merges ({format_memory(held)} in use); stopped before the "
            "system runs out")


# -- before any work: a forecast from a sample -------------------------------------------------


class Forecast(NamedTuple):
    """What the whole input will hold, extrapolated from a sample of it.

    ``sample`` and ``total`` are bytes read and bytes of input; ``positions`` and
    ``pieces`` are ``(optimistic, expected)`` forecasts of the distinct pieces'
    bytes and their number.
    """

    sample: int
    total: int
    positions: tuple[int, int]
    pieces: tuple[int, int]

    def need(self, merges: int, held: int) -> tuple[int, int]:
        """``(optimistic, expected)`` bytes the process will need at its peak, from ``held``."""
        return tuple(held + flat_bytes(p, d) + engine_bytes(p, d, merges)
                     for p, d in zip(self.positions, self.pieces))


def _sampled(files: Files, source: str | None) -> str | None | bool:
    """The compiled pattern name to sample ``files`` with (None: byte mode), or False when the
    input cannot be sampled by seeking: gzip, JSON Lines, Parquet, URLs, custom regexes, and
    byte mode with whole files as documents (each file one piece)."""
    if not fastsplit.available() or not all(_plain(path) for path in files.paths):
        return False
    if source is None:
        return None if files.per_line else False
    return fastsplit.compiled_name(source) or False


def _plain(path) -> bool:
    return (isinstance(path, os.PathLike) and path.suffix != ".gz" and not is_jsonl(path)
            and not is_parquet(path))


def sample_blocks(files: Files, blocks: int | None = None,
                  block: int | None = None) -> list[bytes]:
    """``blocks`` reads of about ``block`` bytes (default :data:`SAMPLE_BLOCKS` and
    :data:`SAMPLE_BLOCK`) at places spread evenly over the files (as if laid end to end),
    each from a line start to a line end. O(blocks) small reads."""
    blocks = SAMPLE_BLOCKS if blocks is None else blocks
    block = SAMPLE_BLOCK if block is None else block
    sizes = [path.stat().st_size for path in files.paths]
    total = sum(sizes)
    out = []
    for k in range(blocks):
        at = total * k // blocks
        for path, size in zip(files.paths, sizes):
            if at < size:
                break
            at -= size
        with open(path, "rb") as handle:
            handle.seek(at)
            if at:
                handle.readline()  # from the next line start: no piece cut in two
            out.append(handle.read(block) + handle.readline())
    return out


def _distinct(blocks: list[bytes], name: str | None, per_line: bool) -> tuple[int, int]:
    """``(bytes, number)`` of the distinct pieces of ``blocks``."""
    table = fastsplit.table()
    for data in blocks:
        table.count(data, name, per_line=per_line)
    data, _, counts = table.arrays()
    return len(data), len(counts)


def grown(at_sample: int, at_half: int, sample: int, half: int, total: int,
          factor: float) -> int:
    """``at_sample`` extrapolated from ``sample`` to ``total`` bytes by ``x ~ n ** beta``, with
    ``beta`` measured from ``half`` to ``sample`` bytes (``at_half`` to ``at_sample``), clamped
    to 0..1, times ``factor``. Never more than ``total``.

    >>> grown(200, 100, 2000, 1000, 8000, 1.0)  # beta 1: proportional
    800
    >>> grown(141, 100, 2000, 1000, 8000, 0.5)  # beta 0.5 halved: 4 ** 0.25
    199
    """
    if at_half <= 0 or half <= 0 or sample <= half:
        return at_sample
    beta = min(1.0, max(0.0, math.log(at_sample / at_half) / math.log(sample / half)))
    return min(total, max(at_sample, round(at_sample * (total / sample) ** (beta * factor))))


def forecast(files: Files, source: str | None) -> Forecast | None:
    """The :class:`Forecast` for ``files`` split with ``source``, or None when they cannot be
    sampled or are small enough to count (below :data:`FORECAST_FROM` bytes). About 40 ms."""
    name = _sampled(files, source)
    if name is False:
        return None
    total = sum(path.stat().st_size for path in files.paths)
    if total < FORECAST_FROM:
        return None
    blocks = sample_blocks(files)
    half = blocks[::2]
    sample, half_size = sum(map(len, blocks)), sum(map(len, half))
    try:
        positions, pieces = _distinct(blocks, name, files.per_line)
        half_positions, half_pieces = _distinct(half, name, files.per_line)
    except fastsplit.InvalidUTF8:
        return None  # counting names the file and the offset
    return Forecast(sample, total, *(
        tuple(grown(whole, part, sample, half_size, total, factor)
              for factor in (OPTIMISTIC_GROWTH, EXPECTED_GROWTH))
        for whole, part in ((positions, half_positions), (pieces, half_pieces))))


def check_forecast(limit: int | None, files, source: str | None, merges: int) -> None:
    """Raise :class:`MemoryLimitError` before any work when even the optimistic
    :func:`forecast` for ``files`` does not fit in ``limit``."""
    if limit is None or not isinstance(files, Files):
        return
    seen = forecast(files, source)
    if seen is None:
        return
    least, expected = seen.need(merges, resident_bytes())
    if least > limit:
        raise MemoryLimitError(
            f"max_memory: training this corpus needs about {format_memory(expected)} ("
            f"{format_memory(least)} on the most hopeful forecast, from "
            f"{format_memory(seen.sample)} read across its "
            f"{format_memory(seen.total)}), more than the limit of {format_memory(limit)}; "
            "nothing was counted")


# -- while counting ------------------------------------------------------------------------------


def counting_plan(limit: int, count_memory: int | None, workers: int) -> tuple[int, int]:
    """``(count_memory, workers)`` that keep counting inside ``limit``: the tables' bound is
    :data:`COUNT_SHARE` of what the limit leaves now (or ``count_memory`` when smaller), and
    the workers are as many as give each table (and the collector's) :data:`MIN_TABLE_BYTES`.

    >>> counting_plan(1 << 30, None, 4)[1] <= 4
    True
    """
    room = max(1, limit - resident_bytes())
    bound = max(1, int(room * COUNT_SHARE))
    if count_memory is not None:
        bound = min(bound, count_memory)
    fitting = bound // MIN_TABLE_BYTES - 1  # one table per worker, plus the collector's
    return bound, max(1, min(workers, fitting))
