"""Pure-Python twin of the compiled pair engine (``bytepair.learn._engine``).

It is the readable statement of the incremental algorithm and the fallback
when the extension cannot be imported. Both twins expose the same class,
``PairEngine``, and are tested to behave identically.

State, for ``n`` token positions in sequences laid end to end:

* ``tok[i]``: the token at position ``i``; ``prev[i]`` / ``next[i]``: the
  neighbouring live positions, ``-1`` at a sequence end (the barrier) and
  ``REMOVED`` for a position consumed by a merge. This is the linked token list.
* ``count[pair]``: weighted number of adjacent windows, kept exact after every
  merge by local updates (no recount).
* ``where[pair]``: positions ``i`` where ``(tok[i], tok[next[i]])`` was that
  pair when recorded. Entries may go stale; a merge re-checks each one.
* ``queued[pair]``: the count under which the pair sits in the caller's
  priority queue (0: not queued). A merge reports every pair whose count rose
  above its queued count and reached the caller's ``floor``; decreases are
  left for the caller to correct lazily, and pairs below the floor stay out
  of the queue until the caller lowers it (:meth:`PairEngine.raise_above`).
* ``shape[t]`` (only under a word cap, :meth:`PairEngine.limit_words`): the
  SuperBPE shape of token ``t`` (:func:`bytepair.learn.superbpe.shape`). A pair
  whose joined bytes hold more words than the cap never enters the queue; it
  is still counted, like any other pair.

The engine can also own the queue and run the whole step loop
(:meth:`PairEngine.open_queue`, :meth:`PairEngine.fit`); docs/design.md
§2.6a says why its lazy deletion keeps the choice exact.
"""

from __future__ import annotations

from array import array
from collections import defaultdict

from sortedcontainers import SortedList

from bytepair.learn.rules import packed_priority, unpack_priority
from bytepair.learn.superbpe import joined_shape

REMOVED = -2
#: Positions are 32-bit signed in the compiled engine, with one slot per sequence end: both
#: twins refuse more positions and sequences together.
MAX_POSITIONS = 2**31 - 2
#: Token IDs are below 2**31: the compiled engine marks consumed positions and sequence
#: ends with the top bit of a position's 32-bit slot. Both twins refuse larger IDs.
TOKEN_LIMIT = 2**31


def token_id(new: int) -> int:
    """``new``, the ID a merge gives its token, checked to fit the engine's range."""
    if not 0 <= new < TOKEN_LIMIT:
        raise ValueError(f"new token ID {new} is out of range: the pair engine holds IDs "
                         f"from 0 to {TOKEN_LIMIT - 1}")
    return new


class PairEngine:
    """Linked token lists with an exact pair count and an occurrence index.

    ``tokens`` holds every sequence laid end to end, ``starts`` the offset of
    each sequence plus the total length, ``weights`` one positive weight per
    sequence.

    >>> e = PairEngine([97, 97, 97, 97, 98, 97], [0, 3, 6], [1, 1])
    >>> sorted(e.pair_counts())
    [(97, 97, 2), (97, 98, 1), (98, 97, 1)]
    >>> e.merge(97, 97, 256)
    (1, [(256, 97, 0, 1)])
    >>> e.sequences()
    [[256, 97], [97, 98, 97]]
    """

    def __init__(self, tokens, starts, weights, owned: list | None = None,
                 sequences: bool = True):
        if owned is not None:  # as the compiled engine: [tokens, starts, weights], emptied below
            tokens, starts, weights = owned
        self._keeps_sequences = sequences  # as the compiled engine: without, sequences() refuses
        n = len(tokens)
        if n + len(weights) > MAX_POSITIONS:
            raise ValueError(
                f"the corpus has {n} token positions in {len(weights)} sequences; one engine "
                f"holds at most {MAX_POSITIONS} positions and sequence ends together"
            )
        if len(starts) != len(weights) + 1 or starts[len(starts) - 1] != n:
            raise ValueError("starts must hold one offset per sequence plus the total length")
        top = max(tokens, default=0)
        if top >= TOKEN_LIMIT:
            raise ValueError(f"tokens: token ID {top} is too large; the pair engine holds "
                             f"IDs below {TOKEN_LIMIT}")
        self._starts = list(starts)
        self._tok = list(tokens)
        self._prev = list(range(-1, n - 1))
        self._next = list(range(1, n + 1))
        self._weight_at = [0] * n
        for s, weight in enumerate(weights):
            lo, hi = starts[s], starts[s + 1]
            if lo < hi:
                self._prev[lo] = -1
                self._next[hi - 1] = -1
            self._weight_at[lo:hi] = [weight] * (hi - lo)
        if owned is not None:
            owned.clear()
        self.queue: SortedList | None = None  # owned once open_queue is called
        self.floor = 0
        self._shape: list[int] = []  # token shapes, by ID, under a word cap
        self._max_words = 0  # 0: no cap
        self._count: dict[tuple[int, int], int] = {}
        self._queued: dict[tuple[int, int], int] = {}
        self._where: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
        for i in range(n):
            j = self._next[i]
            if j >= 0:
                pair = (self._tok[i], self._tok[j])
                self._count[pair] = self._count.get(pair, 0) + self._weight_at[i]
                self._where[pair].append(i)

    def limit_words(self, shapes, max_words: int) -> None:
        """Never queue a pair whose joined bytes hold more than ``max_words`` words.

        ``shapes`` gives the shape of every token there is so far, by ID
        (:func:`bytepair.learn.superbpe.shape`); each merge adds its new
        token's. Call before the queue is filled. O(tokens).
        """
        if max_words < 1:
            raise ValueError(f"max_words must be at least 1, got {max_words}")
        top = max((t for i, t in enumerate(self._tok) if self._next[i] != REMOVED), default=-1)
        if len(shapes) <= top:
            raise ValueError(f"shapes: {len(shapes)} given, but the sequences hold token {top}")
        self._shape = list(shapes)
        self._max_words = max_words

    def eligible(self, left: int, right: int) -> bool:
        """Whether the pair may be learned: always, unless a word cap excludes it. O(1)."""
        return (not self._max_words
                or joined_shape(self._shape[left], self._shape[right]) >> 2 <= self._max_words)

    def pair_counts(self) -> list[tuple[int, int, int]]:
        """Every pair with a nonzero count, as ``(left, right, count)``; marks each as queued."""
        return [(left, right, c) for left, right, _, c in self.raise_above(1)]

    def raise_above(self, floor: int) -> list[tuple[int, int, int, int]]:
        """Queue every pair with ``count >= floor`` above its queued count. O(pairs).

        Returns ``(left, right, old_queued, count)`` for each; its queued count
        becomes ``count``.
        """
        raised = []
        for pair, c in self._count.items():
            q = self._queued.get(pair, 0)
            if c >= floor and c > q and self.eligible(*pair):
                raised.append((pair[0], pair[1], q, c))
                self._queued[pair] = c
        return raised

    def max_count(self) -> int:
        """The greatest pair count (0 when no pair is left). O(pairs)."""
        return max(self._count.values(), default=0)

    def count(self, left: int, right: int) -> int:
        """Current weighted count of ``(left, right)``. O(1)."""
        return self._count.get((left, right), 0)

    def requeue(self, left: int, right: int) -> int:
        """Record that the pair is queued again under its current count, and return it."""
        c = self._count.get((left, right), 0)
        if c:
            self._queued[(left, right)] = c
        else:
            self._queued.pop((left, right), None)
        return c

    def _add(self, pair, delta):
        c = self._count.get(pair, 0) + delta
        if c:
            self._count[pair] = c
        else:
            # No live occurrence is left: free its index entry.
            del self._count[pair]
            self._where.pop(pair, None)

    def merge(self, left: int, right: int, new: int, floor: int = 1):
        """Replace ``(left, right)`` by ``new`` everywhere, left to right.

        Returns ``(replacements, raised)`` where ``raised`` lists, in pair
        order, ``(l, r, old_queued, count)`` for every pair whose count now exceeds
        its queued count and is at least ``floor`` (their queued count becomes
        ``count``). The merged
        pair itself is taken to be off the queue. Cost: O(k log k) for the k
        recorded occurrences of the pair.
        """
        new = token_id(new)
        tok, prev, nxt, weight_at = self._tok, self._prev, self._next, self._weight_at
        pair = (left, right)
        if self._max_words:
            shape = self._shape
            shape.extend([0] * (new + 1 - len(shape)))
            shape[new] = joined_shape(shape[left], shape[right])
        self._queued.pop(pair, None)
        # Ascending positions are left to right within every sequence, which
        # is what makes overlapping matches (`aaa`) resolve like the naive pass.
        positions = sorted(set(self._where.pop(pair, ())))
        replaced = 0
        touched = []
        for i in positions:
            j = nxt[i]
            # Skip stale entries: consumed positions and changed tokens.
            if j < 0 or tok[i] != left or tok[j] != right:
                continue
            w = weight_at[i]
            before, after = prev[i], nxt[j]
            if before >= 0:
                t = tok[before]
                self._add((t, left), -w)
                self._add((t, new), w)
                self._where[(t, new)].append(before)
                touched.append((t, new))
            if after >= 0:
                t = tok[after]
                self._add((right, t), -w)
                self._add((new, t), w)
                self._where[(new, t)].append(i)
                touched.append((new, t))
            self._add(pair, -w)
            tok[i] = new
            nxt[i] = after
            if after >= 0:
                prev[after] = i
            nxt[j] = prev[j] = REMOVED
            replaced += w
        raised = []
        for p in sorted(set(touched)):
            c = self._count.get(p, 0)
            q = self._queued.get(p, 0)
            if c > q and c >= floor and self.eligible(*p):
                raised.append((p[0], p[1], q, c))
                self._queued[p] = c
        return replaced, raised

    def open_queue(self, floor: int) -> None:
        """Own the priority queue from now on, holding every pair counted ``>= floor``. O(P log P).

        The queue is a ``SortedList`` of :func:`~bytepair.learn.rules.packed_priority`
        entries. An entry is current when its count equals the pair's queued
        count; any other entry is left behind by a later re-queue (lazy
        deletion) and is dropped when it reaches the front.
        """
        self.floor = floor
        self.queue = SortedList(packed_priority(c, left, right)
                                for left, right, _, c in self.raise_above(floor))

    def _valid_front(self) -> tuple[int, int, int] | None:
        """``(count, left, right)`` of the first current, exact entry; None when the queue empties."""
        queue = self.queue
        while queue:
            queued_count, left, right = unpack_priority(queue[0])
            q = self._queued.get((left, right), 0)
            if q != queued_count:
                queue.pop(0)  # left behind by a later re-queue of the pair
                continue
            c = self._count.get((left, right), 0)
            if c == q:
                return c, left, right
            # The count changed since it was queued: re-queue at the true count.
            queue.pop(0)
            if self.requeue(left, right):
                queue.add(packed_priority(c, left, right))
        return None

    def fit(self, max_merges: int, min_frequency: int, join, first_rank: int, floor_divisor: int):
        """Learn up to ``max_merges`` rules with the queue of :meth:`open_queue`.

        Stops early when no pair has ``min_frequency`` windows. Pairs sort by
        number (byte mode). ``join(left, right, rank)`` gives the new ID;
        ranks start at ``first_rank``. When the best current entry is below
        the floor, the floor is divided by ``floor_divisor`` (not below
        ``min_frequency``) and the pairs that reach it are queued. Returns arrays
        ``(lefts, rights, new_ids, counts, replacements)``, one item per rule.
        Per rule: the merge, plus O(log P) per queue entry added or dropped.
        """
        lefts, rights, new_ids = array("I"), array("I"), array("I")
        counts, replacements = array("q"), array("q")
        queue = self.queue
        if queue is None:
            raise RuntimeError("call open_queue before fit")
        min_frequency = max(min_frequency, 1)
        while len(lefts) < max_merges:
            best = self._valid_front()
            while best is None or best[0] < self.floor:
                # Pairs below the floor may beat the queue's best: lower it.
                if self.floor <= min_frequency:
                    return lefts, rights, new_ids, counts, replacements
                self.floor = max(min_frequency, self.floor // floor_divisor)
                queue.update(packed_priority(c, left, right)
                             for left, right, _, c in self.raise_above(self.floor))
                best = self._valid_front()
            count, left, right = best
            if count < min_frequency:
                break
            queue.pop(0)
            new = token_id(join(left, right, first_rank + len(lefts)))
            replaced, raised = self.merge(left, right, new, self.floor)
            for raised_left, raised_right, _, c in raised:
                queue.add(packed_priority(c, raised_left, raised_right))
            lefts.append(left)
            rights.append(right)
            new_ids.append(new)
            counts.append(count)
            replacements.append(replaced)
        return lefts, rights, new_ids, counts, replacements

    def release(self) -> None:
        """Drop the counts, the index, the queue and the positions: the engine is empty
        afterwards and cannot merge (the compiled twin frees them without the GIL)."""
        self._count, self._queued, self._where = {}, {}, defaultdict(list)
        self.queue = None
        self._starts, self._tok, self._prev, self._next, self._weight_at = [0], [], [], [], []

    def sequences(self, release: bool = False) -> list[list[int]]:
        """The current token sequences, by walking the links.

        ``release=True`` first frees the counts, the index and the queue
        (the engine cannot merge afterwards).
        """
        if not self._keeps_sequences:
            raise ValueError("this engine was built with sequences=False: it does not keep "
                             "the order of its sequences")
        if release:
            self._count, self._queued, self._where = {}, {}, defaultdict(list)
            self.queue = None
        out = []
        for s in range(len(self._starts) - 1):
            lo, hi = self._starts[s], self._starts[s + 1]
            seq = []
            i = lo if lo < hi else -1
            while i >= 0:
                seq.append(self._tok[i])
                i = self._next[i]
            out.append(seq)
        return out

    def check(self) -> tuple[dict, dict]:
        """Verify links, counts and the occurrence index against a recount.

        Raises AssertionError on any inconsistency; returns the counts and
        the queued counts for the caller to compare with its queue.
        """
        recount: dict[tuple[int, int], int] = {}
        for s in range(len(self._starts) - 1):
            lo, hi = self._starts[s], self._starts[s + 1]
            i = lo if lo < hi else -1
            assert i < 0 or self._prev[i] == -1, "sequence start has a predecessor"
            while i >= 0:
                j = self._next[i]
                if j >= 0:
                    assert self._prev[j] == i, f"links disagree at {i}->{j}"
                    pair = (self._tok[i], self._tok[j])
                    recount[pair] = recount.get(pair, 0) + self._weight_at[i]
                    assert i in self._where.get(pair, ()), f"occurrence {pair} at {i} not indexed"
                i = j
        assert recount == self._count, "incremental counts differ from a recount"
        return dict(self._count), dict(self._queued)
