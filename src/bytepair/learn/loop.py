"""The merge loop: an engine stepped in chunks of merges, with hooks.

:func:`run` is the one loop every trainer steps its engine with: byte mode's
:class:`~bytepair.learn.incremental.IncrementalEngine` (plain training, SuperBPE's
stages, :func:`bytepair.train_bytes`) and the parity-aware
:class:`~bytepair.learn.parity.ParityEngine`; :class:`Engine` states what it needs of
them. Everything a run does besides merging (a progress bar, the memory limit, the
checkpoint's rules) is a :class:`Hook`, called once per chunk of :data:`LEARN_CHUNK`
merges. A chunk is one call into the engine (compiled: one call without the GIL), so
hooks cost nothing per merge.

>>> from bytepair.learn.incremental import IncrementalEngine
>>> engine = IncrementalEngine([b"aaab", b"ab"], [1, 1], byte_token)
>>> [(m.left, m.right) for m in run(engine, [], 3, 1)]
[(97, 97), (97, 98), (256, 257)]
"""

from __future__ import annotations

import operator
from array import array
from typing import Callable, Mapping, Protocol, Sequence

from bytepair._util.progress import progress_bar
from bytepair._util.validate import MAX_COUNT
from bytepair.counts.piece_counts import PieceCounts
from bytepair.learn import incremental
from bytepair.learn import ties as tie_orders
from bytepair.learn.budget import check_engine_fits, check_still_fits
from bytepair.learn.rules import Merge, byte_token

#: Merges learned per call into the engine; the hooks run between calls.
LEARN_CHUNK = 1024


class Engine(Protocol):
    """What :func:`run` steps: a merge engine of :mod:`bytepair.learn`.

    It holds the text as the rules so far left it, learns the next rules in one call,
    may forget pairs too rare to be learned, and checks its own invariants.
    """

    @property
    def rank(self) -> int:
        """The rules so far, a start's included: the rank of the next rule."""

    @property
    def positions(self) -> int:
        """The token positions it was built on: what its memory grows with."""

    def steps(self, max_merges: int, min_frequency: int = 1) -> Sequence[Merge]:
        """Learn up to ``max_merges`` rules; fewer when no pair is counted
        ``min_frequency`` times."""

    def keep_pairs_from(self, count: int) -> None:
        """Forget pairs counted fewer than ``count`` times, if it can; the rules stay exact."""

    def release(self) -> None:
        """End training and free its memory."""

    def _check(self) -> None:
        """Verify every invariant (tests call it after each step)."""


class Hook:
    """What a run does between chunks of merges. Every method does nothing unless overridden.

    :func:`run` calls ``start`` before the first chunk, ``after_chunk`` after each
    (``rules``: every rule so far, the start's included; ``learned``: this chunk's),
    ``finish`` when the run ends normally and ``close`` on every way out.
    """

    def start(self, rules: list[Merge], merges: int) -> None:
        pass

    def after_chunk(self, rules: list[Merge], learned: list[Merge], merges: int) -> None:
        pass

    def finish(self, rules: list[Merge]) -> None:
        pass

    def close(self) -> None:
        pass


class ProgressHook(Hook):
    """A bar of the merges learned (``progress`` as for :func:`bytepair.train`)."""

    def __init__(self, progress: bool | None):
        self.progress = progress
        self.bar = None

    def start(self, rules, merges):
        self.bar = progress_bar(self.progress, desc="merging", unit="merge", total=merges,
                                initial=len(rules))

    def after_chunk(self, rules, learned, merges):
        if self.bar is not None:
            self.bar.update(len(learned))

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class MemoryHook(Hook):
    """Stop with :class:`bytepair.MemoryLimitError` when the process passed ``limit`` bytes
    after a chunk, the last one included: a run past its limit writes nothing
    (:func:`bytepair.learn.budget.check_still_fits`)."""

    def __init__(self, limit: int | None):
        self.limit = limit

    def after_chunk(self, rules, learned, merges):
        check_still_fits(self.limit, len(rules))


def kept_pairs_floor(count: int, learned: int, merges: int) -> int:
    """How often a pair must be counted for the engine to keep it, once ``learned`` of
    the ``merges`` rules this engine learns are out and the last was counted ``count``
    times.

    A guess at half the count of the last rule to come, from the counts'
    fall with the rank: the count of rule k fell like k ** -1.2 to k ** -1.6
    on the benchmark corpora, so ``count * (learned / merges) ** 2`` is below
    the last rule's. Guessing too high costs one recount of every pair; too
    low, memory.
    """
    return int(count * (learned / merges) ** 2 / 2)


def run(engine: Engine, rules: list[Merge], merges: int, min_frequency: int,
        hooks: Sequence[Hook] = (), *, made: Callable[[], int] | None = None) -> list[Merge]:
    """Step ``engine`` until ``rules`` (extended in place and returned) holds ``merges`` rules
    or no pair reaches ``min_frequency``, calling ``hooks`` once per chunk, in their order.

    ``made``, when given, counts what ``merges`` bounds instead of the rules: an extension
    stops at a number of new tokens, and a rule that reuses a token the base has adds none.
    The engine's floor of kept pairs assumes every rule counts, so it is left out then.
    """
    first = len(rules)  # rules that were there before this engine (a warm start, stage 1)
    counted = made if made is not None else (lambda: len(rules))
    if min_frequency > 1:
        # No pair counted fewer times will be learned: the engine need not keep one
        # (SuperBPE's stage 2 runs on its stretches with min_frequency at the cut's floor).
        engine.keep_pairs_from(min_frequency)
    try:
        for hook in hooks:
            hook.start(rules, merges)
        while counted() < merges:
            chunk = min(merges - counted(), LEARN_CHUNK)
            learned = engine.steps(chunk, min_frequency)
            rules += learned
            if learned and made is None:
                engine.keep_pairs_from(kept_pairs_floor(learned[-1].count, len(rules) - first,
                                                         merges - first))
            for hook in hooks:
                hook.after_chunk(rules, learned, merges)
            if len(learned) < chunk:
                break  # no pair left reaches min_frequency
        for hook in hooks:
            hook.finish(rules)
    finally:
        for hook in hooks:
            hook.close()
    return rules


def check_total(sequences, weights, name: str) -> None:
    """Refuse sequences whose weighted windows could overflow the engine's signed 64-bit counts.

    ``sum(weight * len)`` bounds the windows from above and runs in C; only
    when it is too large is the exact sum needed.
    """
    if sum(map(operator.mul, weights, map(len, sequences))) <= MAX_COUNT:
        return
    if sum(w * max(len(s) - 1, 0) for s, w in zip(sequences, weights)) > MAX_COUNT:
        raise ValueError(f"{name} hold more than 2**63 - 1 weighted pairs")


def check_flat_total(data: bytes, starts: array, weights: array) -> None:
    """:func:`check_total` of pieces laid end to end; O(1) when every weight is small."""
    if not weights or len(data) * max(weights) <= MAX_COUNT:
        return
    lengths = map(operator.sub, starts[1:], starts[:-1])
    if sum(map(operator.mul, weights, lengths)) > MAX_COUNT:
        lengths = map(operator.sub, starts[1:], starts[:-1])
        if sum(w * max(n - 1, 0) for n, w in zip(lengths, weights)) > MAX_COUNT:
            raise ValueError("corpus pieces hold more than 2**63 - 1 weighted pairs")


class RestoredHooks(Hook):
    """``hooks`` as they see a run on relabelled bytes (``ties="tokenizers"``,
    :mod:`bytepair.learn.ties`): the rules from index ``first`` on in bytepair's byte IDs."""

    def __init__(self, hooks: Sequence[Hook], first: int):
        self.hooks, self.first = hooks, first

    def start(self, rules, merges):
        for hook in self.hooks:
            hook.start(rules, merges)

    def after_chunk(self, rules, learned, merges):
        for hook in self.hooks:
            # A view, not a copy per hook: hooks that only count rules never restore them.
            hook.after_chunk(_Restored(rules, self.first), tie_orders.restore(learned), merges)

    def finish(self, rules):
        restored = tie_orders.restore(rules, self.first)
        for hook in self.hooks:
            hook.finish(restored)

    def close(self):
        for hook in self.hooks:
            hook.close()


class _Restored(Sequence):
    """Rules in bytepair's byte IDs, restored from relabelled ones on demand (a lazy view)."""

    def __init__(self, rules: list[Merge], first: int):
        self.rules, self.first = rules, first

    def __len__(self):
        return len(self.rules)

    def __getitem__(self, index):
        return tie_orders.restore(self.rules, self.first)[index]

    def __iter__(self):
        return iter(tie_orders.restore(self.rules, self.first))


def learn_counts(counts: PieceCounts | Mapping[bytes, int], merges: int, *, min_frequency: int = 1,
                 start=None, release: bool = False, limit: int | None = None,
                 hooks: Sequence[Hook] = (), ties: str = "bytepair") -> list[Merge]:
    """Rules from weighted pieces: up to ``merges`` in total, ``start``'s included.

    ``start`` is a byte model (its ``merges`` and ``encode_piece``) whose rules go
    first, or None. The order of the pieces does not matter (counts are sums), so
    without ``start`` they go to the engine as the table holds them, laid end to
    end (:meth:`PieceCounts.flat`). ``release`` empties ``counts`` once the engine
    has laid them out, so that the table's memory (at 1 GB of text, 87 MB of flat
    arrays) is free while merging. ``limit`` (bytes, or None) refuses an engine whose
    estimate does not fit before it is built. ``ties="tokenizers"``: the engine learns on
    relabelled bytes (:mod:`bytepair.learn.ties`), in Hugging Face's tie order; its rules
    go back to bytepair's byte IDs before anyone (hooks included) sees them.
    """
    if not isinstance(counts, PieceCounts):
        counts = PieceCounts.trusted(dict(counts), None)
    rules = list(start.merges) if start is not None else []
    if rules:
        pieces = list(counts)
        # Encoding with the start's rules only shortens the pieces: their bytes bound it.
        check_engine_fits(limit, sum(map(len, pieces)), len(pieces), merges - len(rules))
        weights = array("q", counts.values())
        sequences = [array("I", start.encode_piece(p)) for p in pieces]
        if ties == "tokenizers":
            sequences = list(map(tie_orders.relabel_ids, sequences))
        check_total(sequences, weights, "corpus pieces")
        engine = incremental.IncrementalEngine(sequences, weights, byte_token,
                                               first_rank=len(rules))
        del pieces, sequences
    else:
        data, starts, weights = counts.flat()
        check_flat_total(data, starts, weights)
        check_engine_fits(limit, len(data), len(weights), merges - len(rules))
        if ties == "tokenizers":
            data = tie_orders.relabel(data)
        arrays = [data, starts, weights]
        del data, starts, weights
        if release:
            # The engine frees the table's arrays once it has laid them out, before
            # it builds its pair index: at 1 GB of text they are 0.2 GB.
            counts.release()
        # Only the rules are wanted: the engine need not keep where each piece lies.
        engine = incremental.IncrementalEngine.taking_arrays(arrays, byte_token, sequences=False)
    if release:
        counts.release()
    if ties != "tokenizers":
        return run(engine, rules, merges, min_frequency, hooks)
    first = len(rules)
    rules = tie_orders.restore(run(engine, rules, merges, min_frequency,
                                   [RestoredHooks(hooks, first)]), first)
    tie_orders.check_distinct(rules, first)
    return rules
