"""A memory limit for training: counting kept inside it, and what the engine will
need, told before any work and again before the engine is built.

Three checks, each with one line that says how much is needed:

1. *Before any work* (:func:`check_forecast`): 32 MiB read from places spread
   evenly over the input (:func:`sample_blocks`) are counted, and the distinct
   pieces and their bytes are extrapolated to the whole input by Heaps' law
   ``x(n) = x(s) * (n / s) ** beta``, ``beta`` measured inside the sample two ways
   (:func:`forecast`). The run is refused at once when this expected need passes
   the limit by more than :data:`FORECAST_ERROR`, so that a run that could fit is
   not refused on a guess. On simulated text whose distinct pieces keep growing the
   need was 0.98 of the measured peak at 1 GB (``python -m benches.max_memory need
   --language synthetic``; docs/simulated-scale.md has every rung), and on 100 MB of
   English the distinct pieces' bytes and number came out at 0.99 of the truth. A
   corpus that repeats itself is what it misjudges: blocks from its copies look like
   new text, so its forecast is high.
2. *While counting* (:func:`counting_plan`): the counting tables spill to disk
   as sorted runs (:mod:`bytepair.counts.spill`) within a share of what the
   limit leaves, with fewer workers when each one's table would be too small.
3. *Before the engine is built* (:func:`check_engine_fits`): the exact counts
   give the engine's need (:func:`engine_bytes`). While merging, the resident
   size is read after each chunk of merges as well (the last one included), and
   once more when the model is made from the rules (after the engine is freed),
   and a run that passes the limit all the same stops there, with nothing written,
   instead of growing on until the kernel's OOM killer ends it. Writing the model
   file adds little (it is written in parts), and the command line writes the
   model it trained, not a copy.

The engine's memory is set by its input (docs/design.md §6): per token
position a 4-byte slot and occurrence lists, per piece the slot that ends
it, and a pair table that grows while merging (with the rules, a Python
object each); the counts' flat arrays, held when counting ends, are freed
once the engine has laid the pieces out. :data:`BYTES_PER_POSITION`,
:data:`BYTES_PER_PIECE` and :data:`BYTES_PER_MERGE` are calibrated on what the
process grows by from the end of counting to its peak, GPT-2 split, vocabulary
32768, 2 threads (``python -m benches.phase_memory --language synthetic --threads 2
--size SIZE``; docs/simulated-scale.md): the estimate was 1.01 to 1.15 times the
measured growth at 100 MB, 300 MB, 1, 3 and 10 GB. It is a calibrated estimate,
not a bound: other text may need more, which the check while merging catches.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

from bytepair._util.errors import ArgumentError
from bytepair._util.validate import format_memory
from bytepair.read.corpus import Files, is_jsonl, is_parquet
from bytepair.split import fastsplit
from bytepair.learn import incremental

# Calibrated on the engine as it is: when its layout changes, measure again with
# ``python -m benches.phase_memory --language synthetic --threads 2 --size SIZE`` at 100MB,
# 300MB, 1GB, 3GB and 10GB, and keep the estimate at or just above the growth.

#: Bytes per token position: the 4-byte slot, occurrence lists and the pair table, as they
#: grow from the end of counting to the peak, less the counts' flat arrays freed on the way
#: (5.7 to 6.6 measured from 100 MB to 10 GB, with the per-merge cost below taken out).
BYTES_PER_POSITION = 6
#: Bytes per piece: the 4-byte slot that ends it in the engine, and its 4-byte place in the
#: layout order while the pieces are laid out.
BYTES_PER_PIECE = 8
#: Bytes per merge: the rule (a Python object in the list of rules) and the pairs it creates.
BYTES_PER_MERGE = 400
#: The pure-Python twin keeps four Python lists of Python ints per position and dicts of pairs:
#: several times the compiled engine's size.
PYTHON_BYTES_PER_POSITION = 160

#: The forecast reads this many blocks ...
SAMPLE_BLOCKS = 64
#: ... of this many bytes each (and on to the next line end): 32 MiB in all, counted in
#: about a second. A smaller sample sees the growth of the first megabytes of text, which
#: is not yet the growth of the rest, and extrapolates it too far.
SAMPLE_BLOCK = 1 << 19
#: Inputs smaller than this are not forecast: counting them is the quick way to know.
FORECAST_FROM = 4 * SAMPLE_BLOCKS * SAMPLE_BLOCK
#: How far the forecast's need may be from the measured peak: it refuses before any work
#: only when its need passes the limit by more than this share, so that a run that could
#: fit is not refused on a guess (within it, the exact counts decide after counting).
FORECAST_ERROR = 0.25

#: Of what the limit leaves when counting starts, the counting tables may hold this share;
#: the rest is for the blocks being read, a table being written out as a sorted run (a
#: Python object per piece while it is sorted) and the flat arrays the runs are merged into.
COUNT_SHARE = 0.4
#: Each counting table gets at least this much of the share, else there are fewer workers:
#: a smaller table would spill a run every few blocks.
MIN_TABLE_BYTES = 16 << 20


class MemoryLimitError(ArgumentError, MemoryError):
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
        raise MemoryLimitError("max_memory", f": {format_memory(limit)} is less than this "
                               f"process holds before training ({format_memory(held)})")


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
            "max_memory", f": training needs about {format_memory(need)} ("
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
            "max_memory", f": training passed the limit of {format_memory(limit)} after "
            f"{learned:,} merges ({format_memory(held)} in use); stopped before the "
            "system runs out")


# -- before any work: a forecast from a sample -------------------------------------------------


class Forecast(NamedTuple):
    """What the whole input will hold, extrapolated from a sample of it.

    ``sample`` and ``total`` are bytes read and bytes of input; ``positions`` and
    ``pieces`` are ``(low, expected)`` forecasts of the distinct pieces' bytes and their
    number, the low one :data:`FORECAST_ERROR` below the expected one.
    """

    sample: int
    total: int
    positions: tuple[int, int]
    pieces: tuple[int, int]

    def need(self, merges: int, held: int) -> tuple[int, int]:
        """``(low, expected)`` bytes the process will need at its peak, from ``held``: the
        expected need, and :data:`FORECAST_ERROR` below it."""
        positions, pieces = self.positions[1], self.pieces[1]
        expected = held + flat_bytes(positions, pieces) + engine_bytes(positions, pieces, merges)
        return round(expected / (1 + FORECAST_ERROR)), expected


def _sampled(files: Files, source: str | None) -> str | None | bool:
    """The compiled pattern name to sample ``files`` with (None: byte mode), or False when the
    input cannot be sampled by seeking: gzip, JSON Lines, Parquet, URLs, custom regexes, and
    byte mode with whole files as documents (each file one piece)."""
    if not can_sample(files):
        return False
    if source is None:
        return None if files.per_line else False
    return fastsplit.compiled_name(source) or False


def can_sample(files: Files) -> bool:
    """Whether ``files`` can be sampled by seeking (plain text files) and counted compiled."""
    return fastsplit.available() and all(_plain(path) for path in files.paths)


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


def grown(at_sample: int, sample: int, total: int, beta: float) -> int:
    """``at_sample``, what ``sample`` bytes hold, extrapolated to ``total`` bytes by Heaps'
    law ``x ~ n ** beta``; never less than ``at_sample`` nor more than ``total``.

    >>> grown(200, 2000, 8000, 1.0)  # proportional
    800
    >>> grown(100, 2000, 8000, 0.5)  # 4 ** 0.5
    200
    """
    return min(total, max(at_sample, round(at_sample * (total / sample) ** beta)))


def forecast(files: Files, source: str | None) -> Forecast | None:
    """The :class:`Forecast` for ``files`` split with ``source``, or None when they cannot be
    sampled or are small enough to count (below :data:`FORECAST_FROM` bytes). About a second.

    The sample's growth is measured two ways, in one count: from the first halves of
    every other block to the first halves of all (more blocks), and from there to the
    whole blocks (longer blocks). More blocks are places further apart than the text's
    neighbouring lines, which overrates the growth of text whose documents differ (by
    source, by topic); longer blocks are more of the same documents, which underrates it
    where a document repeats its own words. Where the text is alike throughout the two
    agree. The mean of the two exponents is extrapolated to the input's size
    (:func:`grown`): the expected forecast; the low one is :data:`FORECAST_ERROR` below
    it."""
    name = _sampled(files, source)
    if name is False:
        return None
    return forecast_counted(files, lambda table, data: table.count(data, name, per_line=files.per_line))


def forecast_counted(files: Files, count) -> Forecast | None:
    """:func:`forecast` with ``count(table, data)`` counting each sampled block into a piece
    table (sentencepiece's words count this way); None below :data:`FORECAST_FROM` bytes."""
    total = sum(path.stat().st_size for path in files.paths)
    if total < FORECAST_FROM:
        return None
    blocks = sample_blocks(files)
    firsts = [_first_half(block) for block in blocks]
    seconds = [block[len(first):] for block, first in zip(blocks, firsts)]
    table = fastsplit.table()
    stages = []
    try:
        for part in (firsts[::2], firsts[1::2], seconds):
            for data in part:
                count(table, data)
            data, _, counts = table.arrays()
            stages.append((sum(map(len, part)), len(data), len(counts)))
    except fastsplit.InvalidUTF8:
        return None  # counting names the file and the offset
    fewer = stages[0]
    shorter = (fewer[0] + stages[1][0], *stages[1][1:])
    whole = (shorter[0] + stages[2][0], *stages[2][1:])
    expected = []
    for i in (1, 2):  # the distinct pieces' bytes, their number
        beta = (exponent(shorter[0], shorter[i], fewer[0], fewer[i])
                + exponent(whole[0], whole[i], shorter[0], shorter[i])) / 2
        expected.append(grown(whole[i], whole[0], total, beta))
    low = [round(x / (1 + FORECAST_ERROR)) for x in expected]
    return Forecast(whole[0], total, (low[0], expected[0]), (low[1], expected[1]))


def _first_half(block: bytes) -> bytes:
    """A block's lines up to the first line end past its middle (all of it if none)."""
    cut = block.find(b"\n", len(block) // 2)
    return block if cut < 0 else block[:cut + 1]


def exponent(size: int, at_size: int, part: int, at_part: int) -> float:
    """``beta`` of ``x ~ n ** beta`` from ``x(part) = at_part`` to ``x(size) = at_size``,
    clamped to 0..1 (0 when it cannot be measured).

    >>> exponent(2000, 200, 1000, 100), exponent(4000, 200, 1000, 100)
    (1.0, 0.5)
    """
    if at_part <= 0 or part <= 0 or size <= part:
        return 0.0
    return min(1.0, max(0.0, math.log(at_size / at_part) / math.log(size / part)))


def check_forecast(limit: int | None, files, source: str | None, merges: int) -> None:
    """Raise :class:`MemoryLimitError` before any work when the :func:`forecast` for
    ``files`` does not fit in ``limit`` even if it is :data:`FORECAST_ERROR` too high."""
    if limit is None or not isinstance(files, Files):
        return
    seen = forecast(files, source)
    if seen is None:
        return
    least, expected = seen.need(merges, resident_bytes())
    if least > limit:
        raise MemoryLimitError(
            "max_memory", f": training this corpus needs about {format_memory(expected)} "
            f"(forecast from {format_memory(seen.sample)} read across its "
            f"{format_memory(seen.total)}), more than the limit of {format_memory(limit)} "
            f"even if the forecast is {FORECAST_ERROR:.0%} high; nothing was counted")


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
