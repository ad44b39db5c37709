"""The incremental engine: local count updates and an exact lazy priority queue.

The pair engine (compiled ``bytepair.learn._engine`` or its pure-Python twin
``bytepair.learn._engine_py``) owns the linked token lists, the exact pair counts
and the occurrence index. The priority is a ``sortedcontainers.SortedList``:
in word mode this module keeps it, with entries ``(-queued_count, left_key,
right_key)`` ordered by the symbols' strings, and runs the step loop; in byte
mode (IDs sort as numbers) the engine owns it, with each entry packed into
one int (:func:`bytepair.learn.rules.packed_priority`), and runs many steps per
call (``PairEngine.fit``), leaving superseded entries to be dropped when they
reach the front (lazy deletion; docs/design.md §2.6a).

Why the queue stays exact although decreases are not applied eagerly: every
pair whose count is at least the *floor* is queued at or above its true count
(a merge reports every such increase, and the caller re-queues it at once).
So when the first entry's queued count equals its true count and reaches the
floor, no other pair can beat it: a queued pair's true key is at least its
queued key, which is at least the first entry's, and an unqueued pair counts
less than the floor. When the first entry is stale it is re-queued at its
true count and the search repeats; when it falls below the floor, the floor
is lowered and the pairs that now reach it are queued.

The floor keeps the many pairs that are seen only a few times (most pairs a
merge creates) out of the SortedList until the training gets down to them.
"""

from __future__ import annotations

import gc
import os
import warnings
from array import array
from contextlib import contextmanager
from itertools import accumulate
from typing import Callable, Sequence

from sortedcontainers import SortedList

from bytepair._util.backend import extensions_wanted
from bytepair.learn.rules import Merge, priority, unpack_priority

_CompiledEngine = None
if extensions_wanted():
    try:
        from bytepair.learn._engine import PairEngine as _CompiledEngine
    except ImportError:  # pragma: no cover - depends on how the package was installed
        pass
from bytepair.learn._engine_py import PairEngine as _PythonEngine

BACKENDS = {"compiled": _CompiledEngine, "python": _PythonEngine}

#: The first floor is the greatest count divided by this ...
FIRST_FLOOR_DIVISOR = 64
#: ... and each time the queue runs below it, it is divided by this.
FLOOR_DIVISOR = 4


def default_backend() -> str:
    """The backend used when none is named: ``BYTEPAIR_BACKEND`` if set, else compiled when importable."""
    chosen = os.environ.get("BYTEPAIR_BACKEND", "")
    if chosen:
        if chosen not in BACKENDS:
            raise ValueError(
                f"BYTEPAIR_BACKEND must be one of {sorted(BACKENDS)}, got {chosen!r}"
            )
        return chosen
    if _CompiledEngine is None:
        warnings.warn(
            "bytepair's compiled engine is not importable; using the slower "
            "pure-Python engine (reinstall without BYTEPAIR_NO_EXTENSIONS to fix)",
            RuntimeWarning,
            stacklevel=3,
        )
        return "python"
    return "compiled"


def engine_class(backend: str | None):
    name = backend or default_backend()
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {name!r}")
    cls = BACKENDS[name]
    if cls is None:
        raise ImportError("the compiled engine bytepair.learn._engine is not installed")
    return cls


class IncrementalEngine:
    """Learns one rule per :meth:`step`, equal to :func:`bytepair.learn.naive.fit`.

    ``sequences`` are lists of integer symbol IDs with positive ``weights``.
    ``join(left, right, rank)`` returns the new symbol's ID; ranks start at
    ``first_rank`` (a warm start continues an existing rule list). ``keys``, when
    given, maps an ID to the key it sorts by (word mode: its string);
    otherwise IDs sort as numbers (byte mode). ``key_to_id`` inverts ``keys``.
    ``word_limit``, a pair ``(shapes, max_words)``, is SuperBPE's word cap
    (byte mode; see :meth:`PairEngine.limit_words` and :mod:`bytepair.learn.superbpe`).

    Per merge the cost is O(k log k + u log P) for the k occurrences of the
    merged pair and the u queue updates among P queued pairs.

    >>> t = IncrementalEngine([[97, 97, 97], [97, 98, 97]], [1, 1],
    ...                        lambda l, r, rank: 256 + rank)
    >>> t.step(), t.step()
    (Merge(rank=0, left=97, right=97, token_id=256, count=2, replacements=1), Merge(rank=1, left=97, right=98, token_id=257, count=1, replacements=1))
    >>> t.sequences()
    [[256, 97], [257, 97]]
    """

    def __init__(
        self,
        sequences: Sequence[Sequence[int]],
        weights: Sequence[int],
        join: Callable[[int, int, int], int],
        *,
        keys: list | None = None,
        key_to_id: dict | None = None,
        backend: str | None = None,
        first_rank: int = 0,
        word_limit: tuple | None = None,
    ):
        starts = array("q", [0])
        starts.extend(accumulate(map(len, sequences)))
        tokens: bytes | array
        if set(map(type, sequences)) <= {bytes}:
            tokens = b"".join(sequences)  # byte mode: the engine widens bytes itself
        else:
            tokens = array("I")
            for seq in sequences:
                tokens.extend(seq)
        self._engine = engine_class(backend)(tokens, starts, array("q", weights))
        self.positions = len(tokens)
        self._open(join, keys, key_to_id, first_rank, word_limit)

    @property
    def rank(self) -> int:
        """The rules so far, ``first_rank`` included: the rank of the next rule."""
        return self._rank

    @property
    def _floor(self) -> int:
        return self._engine.floor if self._keys is None else self._word_floor

    @classmethod
    def from_arrays(cls, tokens: bytes | array, starts: array, weights: array,
                    join: Callable[[int, int, int], int], *, backend: str | None = None,
                    first_rank: int = 0, word_limit: tuple | None = None) -> "IncrementalEngine":
        """A byte-mode engine from flat arrays: every sequence's tokens laid end to
        end (``bytes`` or an ``array("I")``), ``starts`` (one offset per sequence,
        then the total) and ``weights``. The engine reads them in C. O(n)."""
        engine = cls.__new__(cls)
        engine._engine = engine_class(backend)(tokens, starts, weights)
        engine.positions = len(tokens)
        engine._open(join, None, None, first_rank, word_limit)
        return engine

    @classmethod
    def taking_arrays(cls, arrays: list, join: Callable[[int, int, int], int], *,
                      backend: str | None = None, first_rank: int = 0,
                      word_limit: tuple | None = None,
                      sequences: bool = True) -> "IncrementalEngine":
        """:meth:`from_arrays` of ``arrays = [tokens, starts, weights]``, which it empties
        once the engine has laid the tokens out: when the caller holds them nowhere
        else, they are freed before the engine's pair index is built. With
        ``sequences=False``, :meth:`sequences` is refused and the engine keeps 4 bytes
        a sequence less (for a caller that wants only the rules)."""
        engine = cls.__new__(cls)
        engine.positions = len(arrays[0])
        engine._engine = engine_class(backend)(None, None, None, owned=arrays,
                                               sequences=sequences)
        engine._open(join, None, None, first_rank, word_limit)
        return engine

    def _open(self, join, keys, key_to_id, first_rank: int, word_limit: tuple | None = None) -> None:
        if word_limit is not None:
            if keys is not None:
                raise ValueError("a word cap is for byte mode (IDs that sort as numbers)")
            self._engine.limit_words(*word_limit)
        self._join = join
        self._keys = keys
        self._key_to_id = key_to_id
        self._rank = first_rank
        first_floor = max(1, self._engine.max_count() // FIRST_FLOOR_DIVISOR)
        if keys is None:
            # IDs sort as numbers: the engine owns the queue and runs the loop.
            self._engine.open_queue(first_floor)
            self._queue = self._engine.queue
        else:
            self._word_floor = first_floor
            self._queue = SortedList(
                priority(c, self._key(left), self._key(right))
                for left, right, _, c in self._engine.raise_above(first_floor)
            )

    def _key(self, symbol: int):
        return symbol if self._keys is None else self._keys[symbol]

    def _id(self, key) -> int:
        return key if self._key_to_id is None else self._key_to_id[key]

    def steps(self, max_merges: int, min_frequency: int = 1) -> list[Merge]:
        """Learn up to ``max_merges`` rules; fewer when no pair has ``min_frequency`` windows left."""
        if self._keys is not None:
            rules = []
            while len(rules) < max_merges and (rule := self.step(min_frequency)) is not None:
                rules.append(rule)
            return rules
        lefts, rights, new_ids, counts, replacements = self._engine.fit(
            max_merges, min_frequency, self._join, self._rank, FLOOR_DIVISOR
        )
        first = self._rank
        self._rank += len(lefts)
        return list(map(Merge, range(first, self._rank), lefts, rights, new_ids, counts, replacements))

    def step(self, min_frequency: int = 1) -> Merge | None:
        """Learn the next rule; None when no pair has at least ``min_frequency`` windows."""
        if self._keys is None:
            rules = self.steps(1, min_frequency)
            return rules[0] if rules else None
        while True:
            best = self._valid_top()
            if best is not None and best[0] >= self._floor:
                break
            # Pairs below the floor may beat the queue's best: lower the floor.
            if self._floor <= max(min_frequency, 1):
                return None  # nothing left reaches min_frequency
            self._word_floor = max(min_frequency, 1, self._floor // FLOOR_DIVISOR)
            self._requeue_raised(self._engine.raise_above(self._floor))
        count, left, right = best
        if count < min_frequency:
            return None
        self._queue.pop(0)
        rank = self._rank
        new = self._join(left, right, rank)
        replacements, raised = self._engine.merge(left, right, new, self._floor)
        self._requeue_raised(raised)
        self._rank += 1
        return Merge(rank, left, right, new, count, replacements)

    def _valid_top(self) -> tuple[int, int, int] | None:
        """``(count, left, right)`` of the first queue entry, once it is not stale."""
        queue, engine = self._queue, self._engine
        while queue:
            neg_count, left_key, right_key = queue[0]
            left, right = self._id(left_key), self._id(right_key)
            true_count = engine.count(left, right)
            if true_count == -neg_count:
                return true_count, left, right
            # Stale: the count fell since it was queued. Re-queue and look again.
            queue.pop(0)
            if engine.requeue(left, right):
                queue.add(priority(true_count, left_key, right_key))
        return None

    def _requeue_raised(self, raised) -> None:
        queue = self._queue
        for left, right, old, count in raised:
            left_key, right_key = self._key(left), self._key(right)
            if old:
                queue.remove(priority(old, left_key, right_key))
            queue.add(priority(count, left_key, right_key))

    def keep_pairs_from(self, count: int) -> None:
        """Let the engine forget pairs counted fewer than ``count`` times; the rules stay exact.

        A pair's count never grows after the merge that made it, so none of
        them can be a rule counted ``count`` times or more; if the rules come
        down below ``count``, the engine counts every pair again (design.md
        §2.6b). Only the compiled engine with its own queue (byte mode) keeps
        fewer pairs; elsewhere this does nothing.
        """
        keep = getattr(self._engine, "keep_pairs_from", None)
        if keep is not None and self._keys is None:
            keep(count)

    def release(self) -> None:
        """End training and free the engine's memory (the compiled engine frees it
        without the GIL, so this may run on another thread). O(pairs + positions)."""
        self._engine.release()

    def sequences(self, release: bool = False) -> list[list[int]]:
        """The current transformed sequences; ``release=True`` ends training and frees its state first."""
        return self._engine.sequences(release)

    def _check(self) -> None:
        """Verify every invariant: links, counts, occurrence index and queue.

        Every pair counted at least the floor is queued at or above its true
        count, and every queue entry matches the engine's queued count.
        """
        counts, queued = self._engine.check()
        if self._keys is None:
            self._queue = self._engine.queue  # made anew when the engine counted again
            self._check_packed_queue(counts, queued)
            return
        entries = {(lk, rk): -nc for nc, lk, rk in self._queue}
        assert len(entries) == len(self._queue), "a pair is queued twice"
        assert entries == {
            (self._key(l), self._key(r)): q for (l, r), q in queued.items()
        }, "queue and engine disagree on queued counts"
        for (left, right), c in counts.items():
            if c >= self._floor and self._engine.eligible(left, right):
                assert queued.get((left, right), 0) >= c, f"pair {(left, right)} queued below its count"
            elif not self._engine.eligible(left, right):
                assert (left, right) not in queued, f"pair {(left, right)} is over the word cap but queued"


    def _check_packed_queue(self, counts: dict, queued: dict) -> None:
        # Lazy deletion: an entry is current when its count is the pair's
        # queued count; others are harmless leftovers, dropped at the front.
        current = {}
        for entry in self._queue:
            count, left, right = unpack_priority(entry)
            if queued.get((left, right)) == count:
                current[(left, right)] = count
        assert current == queued, "queue and engine disagree on queued counts"
        for (left, right), c in counts.items():
            if c >= self._floor and self._engine.eligible(left, right):
                assert queued.get((left, right), 0) >= c, f"pair {(left, right)} queued below its count"
            elif not self._engine.eligible(left, right):
                assert (left, right) not in queued, f"pair {(left, right)} is over the word cap but queued"


@contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector for a block.

    Building the outputs allocates one list per sequence; each batch of
    allocations would otherwise trigger a collection that walks every list
    made so far. The block creates no cycles, so nothing is left uncollected.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def fit(
    sequences: Sequence[Sequence[int]],
    weights: Sequence[int],
    merges: int,
    join: Callable[[int, int, int], int],
    **options,
) -> tuple[list[Merge], list[list[int]]]:
    """Same contract as :func:`bytepair.learn.naive.fit`, for integer symbols."""
    engine = IncrementalEngine(sequences, weights, join, **options)
    rules = engine.steps(merges)
    with gc_paused():
        return rules, engine.sequences(release=True)


#: Engines of at least this many token positions are freed on a thread of their own.
RELEASE_ON_THREAD_POSITIONS = 1 << 20


def release_meanwhile(engine) -> None:
    """Free an engine's memory (any :class:`bytepair.learn.loop.Engine`), on a thread of its
    own when it was built on :data:`RELEASE_ON_THREAD_POSITIONS` token positions or more,
    while the caller goes on (makes the model).

    Stage 2's engine holds an occurrence list per pair seen more than twice,
    each a block of its own: at 100 MB of text, freeing them took 0.3 s of CPU
    in the caller's thread. The compiled engine frees without the GIL; the
    thread is not a daemon, so the interpreter waits for it before it exits.
    A small engine is freed at once: no thread outlives a small training (a
    fork right after would find it running).
    """
    if engine.positions < RELEASE_ON_THREAD_POSITIONS:
        engine.release()
        return
    import threading  # at first use, not at import

    threading.Thread(target=engine.release, name="bytepair-release").start()
