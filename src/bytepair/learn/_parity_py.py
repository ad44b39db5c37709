"""Pure-Python twin of the compiled parity-aware loop (``bytepair.learn._parity``).

It is the readable statement of the fast loop and the fallback when the extension
cannot be imported (or when ties follow a ``key`` given as a function, which only
this twin takes). Both twins expose the same class, ``ParityLoop``, and are tested
equal, rule for rule, to :func:`bytepair.learn.parity_naive.fit`.

State: one pair engine per language (any ``PairEngine``: this twin only calls
its Python methods), one per dev set, and during the first ``global_merges``
rules one over every language; for each language (and the global engine) a
``SortedList`` of ``(-count, key(left), key(right), left, right)``, kept as
:class:`bytepair.learn.incremental.IncrementalEngine`'s word mode keeps its
queue: every pair counted at least the queue's *floor* is queued at or above its
true count; a stale entry is re-queued at its true count when it reaches the
front; when the front falls below the floor the floor is lowered and the pairs
that reach it are queued.
"""

from __future__ import annotations

from array import array
from collections import deque
from typing import Callable, Hashable, Sequence

from sortedcontainers import SortedList

from bytepair.learn.parity_rules import GLOBAL, Selector, ratio_scores, without_text


class _Queue:
    """One language's priority over one engine."""

    def __init__(self, engine, key: Callable[[int], Hashable], first_divisor: int,
                 divisor: int):
        self.engine = engine
        self.key = key
        self.divisor = divisor
        self.floor = max(1, engine.max_count() // first_divisor)
        self.entries = SortedList()
        self.add_raised(engine.raise_above(self.floor))

    def entry(self, count: int, left: int, right: int) -> tuple:
        return (-count, self.key(left), self.key(right), left, right)

    def add_raised(self, raised) -> None:
        entries = self.entries
        for left, right, old, count in raised:
            if old:
                entries.discard(self.entry(old, left, right))
            entries.add(self.entry(count, left, right))

    def best(self, min_frequency: int) -> tuple[int, int, int] | None:
        """``(count, left, right)`` of the best pair, or None when none reaches ``min_frequency``."""
        while True:
            top = self._valid_top()
            if top is not None and top[0] >= self.floor:
                return top if top[0] >= min_frequency else None
            if self.floor <= max(min_frequency, 1):
                return None
            self.floor = max(min_frequency, 1, self.floor // self.divisor)
            self.add_raised(self.engine.raise_above(self.floor))

    def _valid_top(self) -> tuple[int, int, int] | None:
        entries, engine = self.entries, self.engine
        while entries:
            neg_count, _, _, left, right = entries[0]
            true_count = engine.count(left, right)
            if true_count == -neg_count:
                return true_count, left, right
            entries.pop(0)  # stale: its count fell since it was queued (or it was merged)
            if engine.requeue(left, right):
                entries.add(self.entry(true_count, left, right))
        return None

    def merge(self, left: int, right: int, new: int) -> int:
        """Apply the rule to this engine; returns its weighted replacements."""
        replaced, raised = self.engine.merge(left, right, new, self.floor)
        self.add_raised(raised)
        return replaced


class _Letters:
    """Keys of the tie order by strings (:class:`ParityLoop`'s ``letters``)."""

    def __init__(self, letters: Sequence[Sequence[int]], descending: bool):
        self.descending = descending
        self.spelled = {token: tuple(text) for token, text in enumerate(letters)}

    def key(self, token: int) -> tuple:
        text = self.spelled[token]
        # The end marker sorts a string before its extensions (after, descending).
        return (*(-c for c in text), 1) if self.descending else (*text, -1)

    def join(self, left: int, right: int, made: int) -> None:
        self.spelled[made] = self.spelled[left] + self.spelled[right]


class ParityLoop:
    """The state of parity-aware training; :meth:`steps` learns. Arguments as the compiled
    twin's; ``key``, when given, orders ties instead of ``letters`` (any function of a
    token ID).

    >>> from bytepair.learn._engine_py import PairEngine
    >>> loop = ParityLoop([PairEngine(b"aab", [0, 3], [1]), PairEngine(b"cd", [0, 2], [1])],
    ...                   [PairEngine(b"ab", [0, 2], [1]), PairEngine(b"cdcd", [0, 4], [1])],
    ...                   [2, 4], None, "base", None, 0, 100, 2.0, None, False, 64, 4)
    >>> lefts, rights, new_ids, counts, replaced, languages = loop.steps(5, 1, lambda l, r, k: 256 + k)
    >>> list(zip(lefts, rights, languages))
    [(99, 100, 1), (97, 97, 0), (257, 98, 0)]
    """

    def __init__(self, engines: list, dev: list | None, lengths: Sequence[int],
                 ratio: Sequence[float] | None, variant: str, global_engine,
                 global_merges: int, window_size: int, alpha: float,
                 letters: Sequence[Sequence[int]] | None, descending: bool,
                 first_divisor: int, divisor: int, key: Callable[[int], Hashable] | None = None):
        self._letters = _Letters(letters, descending) if letters is not None and key is None else None
        if key is None:
            key = self._letters.key if self._letters is not None else (lambda token: token)
        self._queues = [_Queue(engine, key, first_divisor, divisor) for engine in engines]
        self._dev = list(dev) if dev is not None else None
        self._lengths = list(lengths)
        self._initial = list(lengths)
        self._ratio = list(ratio) if ratio is not None else None
        self._global_merges = global_merges
        self._global = (_Queue(global_engine, key, first_divisor, divisor)
                        if global_engine is not None else None)
        self._selector = Selector(variant, len(engines), window_size=window_size, alpha=alpha)
        self._exhausted = without_text(self._initial, self._ratio)
        self.rank = 0

    def steps(self, max_merges: int, min_frequency: int, join: Callable[[int, int, int], int]):
        """Learn up to ``max_merges`` rules; fewer when every language is exhausted.

        Returns arrays ``(lefts, rights, new_ids, counts, replacements, languages)``.
        """
        out = (array("I"), array("I"), array("I"), array("q"), array("q"), array("i"))
        while len(out[0]) < max_merges:
            rule = self._step(min_frequency, join)
            if rule is None:
                break
            for column, value in zip(out, rule):
                column.append(value)
        return out

    def _step(self, min_frequency: int, join) -> tuple | None:
        languages = len(self._queues)
        while len(self._exhausted) < languages:
            if self.rank < self._global_merges:
                language, queue = GLOBAL, self._global
            else:
                if self._global is not None:
                    self._global.engine.release()
                    self._global = None
                scores = (self._lengths if self._ratio is None
                          else ratio_scores(self._initial, self._lengths, self._ratio))
                language = self._selector.choose(scores, self._exhausted)
                queue = self._queues[language]
            best = queue.best(min_frequency)
            if best is None:
                if language == GLOBAL:
                    return None
                self._exhausted.add(language)
                continue
            count, left, right = best
            queue.entries.pop(0)
            return self._apply(count, left, right, language, join)
        return None

    def _apply(self, count: int, left: int, right: int, language: int, join) -> tuple:
        new = join(left, right, self.rank)
        if self._letters is not None:
            self._letters.join(left, right, new)
        replaced = 0
        for lang, queue in enumerate(self._queues):
            shrunk = queue.merge(left, right, new)
            if language in (GLOBAL, lang):  # the text that chose the rule
                replaced += shrunk
            if self._dev is None:
                self._lengths[lang] -= shrunk
        if self._dev is not None:
            for lang, engine in enumerate(self._dev):
                # No floor reached: a dev engine only measures its length.
                self._lengths[lang] -= engine.merge(left, right, new, 2**62)[0]
        if self._global is not None:
            self._global.merge(left, right, new)
        self.rank += 1
        return left, right, new, count, replaced, language

    @property
    def lengths(self) -> list[int]:
        """Each language's current token length: of its dev text, else of its training text."""
        return list(self._lengths)

    def resume(self, rank: int, initial: Sequence[int], recent: Sequence[int],
               exhausted: Sequence[int]) -> None:
        """Go on from a run that learned ``rank`` rules (the engines hold its text as they
        left it): ``initial`` is each language's length before any rule (the ratios' base),
        ``recent`` and ``exhausted`` the choice's state (:meth:`history`). Before any step."""
        self.rank = rank
        self._initial = list(initial)
        self._selector.recent = deque(recent)
        self._exhausted = set(exhausted)

    def history(self) -> tuple[list[int], list[int]]:
        """The choice's state, as :meth:`resume` takes it: the window's choices (oldest
        first) and the exhausted languages."""
        return list(self._selector.recent), sorted(self._exhausted)

    def queue(self, k: int) -> tuple[int, list[tuple[int, int, int]]]:
        """Language ``k``'s queue (``-1``: the global one) as ``(floor, entries)``, each
        entry ``(count, left, right)``, for checks."""
        queue = self._global if k < 0 else self._queues[k]
        if queue is None:
            return 1, []  # the global queue, freed with its engine
        return queue.floor, [(-e[0], e[3], e[4]) for e in queue.entries]

    def release(self) -> None:
        """Free every engine and queue."""
        for queue in self._queues:
            queue.engine.release()
            queue.entries.clear()
        for engine in self._dev or ():
            engine.release()
        if self._global is not None:
            self._global.engine.release()
            self._global = None
