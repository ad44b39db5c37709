"""A memory limit for training: what the engine will need, told before it is built.

The engine's memory is set by the input it is given (docs/design.md §6): per
token position a 4-byte slot and about 4 bytes of occurrence lists, the
flat arrays it is built from (1 byte per position and 16 per piece), and a
pair table that grows while merging. That table is the one part the counts
do not give: at 100 MB of English (GPT-2 split, vocabulary 32768) it ends at
485,000 pairs for 4.96 M positions, and its slots (it doubles in place) cost
about 7 bytes per position. :data:`BYTES_PER_POSITION` and
:data:`BYTES_PER_PIECE` cover all of it with a margin: at 100 MB the
estimate is 151 MiB, the peak measured 128 MiB (``python -m
benches.phase_memory --size 100MB``). It is a calibrated estimate, not a
bound: other text may need more, which the check while merging catches.

The estimate is checked before the engine is built, so a run that cannot fit
stops at once with one line that says how much it needs. While merging, the
resident size is read after each chunk of merges as well, and a run that
passes the limit all the same stops there instead of growing on until the
kernel's OOM killer ends it.
"""

from __future__ import annotations

import os

from bytepair._util.validate import format_memory
from bytepair.learn import incremental

#: Bytes per token position: the 4-byte slot, occurrence lists (4 per entry, with room for
#: their growth), the flat arrays the engine is built from, and the pair table.
BYTES_PER_POSITION = 18
#: Bytes per piece: its start offset and weight in the flat arrays and in the engine's layout,
#: and the 4-byte slot that ends it there.
BYTES_PER_PIECE = 36
#: The pure-Python twin keeps four Python lists of Python ints per position and dicts of pairs:
#: several times the compiled engine's size.
PYTHON_BYTES_PER_POSITION = 160


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


def engine_bytes(positions: int, pieces: int) -> int:
    """What the engine adds while learning from ``pieces`` pieces of ``positions`` bytes. O(1)."""
    compiled = incremental.default_backend() == "compiled"
    per_position = BYTES_PER_POSITION if compiled else PYTHON_BYTES_PER_POSITION
    return per_position * positions + BYTES_PER_PIECE * pieces


def check_engine_fits(limit: int | None, positions: int, pieces: int) -> None:
    """Raise :class:`MemoryLimitError` when the engine's estimate does not fit in ``limit``."""
    if limit is None:
        return
    held = resident_bytes()
    need = held + engine_bytes(positions, pieces)
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
