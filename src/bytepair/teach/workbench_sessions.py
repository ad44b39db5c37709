"""The workbench's memory: each corpus read once, and how far each trainer got on it.

The page keeps nothing on the server: each request carries the corpus and the
number of merges done so far. So the server reads a corpus once and gathers
its equal rows (:class:`Session`, kept for a few recent corpora), and a round
of every trainer of the workbench depends only on the current rows, so the
reference, each broken variant and the learner's functions continue from the
rows they last reached on the same corpus (:class:`Progress`): one more merge
costs one round, ``O(distinct rows)`` for the reference.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, NamedTuple

from bytepair.learn.rules import Merge
from bytepair.teach.workbench_corpus import MODES, Corpus, parse


class Session(NamedTuple):
    """A parsed corpus with its equal rows gathered: what every request on it shares.

    ``distinct`` holds each distinct row once, in order of first appearance,
    with ``weights`` summed over its copies; ``row_of[i]`` is row ``i``'s
    distinct row. Equal rows are trained once, as the library's word mode
    does: the rules are the same, and a 2,000-word text has about 500
    distinct words.
    """

    corpus: Corpus
    distinct: list
    weights: list[int]
    row_of: list[int]
    texts: list[str]      # each distinct row's text
    symbols: int          # first symbols in all, each row times its weight
    key: tuple


def gather(rows: list, weights: list[int]) -> tuple[list, list[int], list[int]]:
    """Equal rows gathered: the distinct rows in order of first appearance, their summed
    weights, and each row's distinct row.

    >>> gather([["a"], ["b"], ["a"]], [1, 2, 3])
    ([['a'], ['b']], [4, 2], [0, 1, 0])
    """
    index: dict[tuple, int] = {}
    distinct, summed, row_of = [], [], []
    for row, weight in zip(rows, weights):
        key = tuple(row)
        j = index.get(key)
        if j is None:
            j = index[key] = len(distinct)
            distinct.append(list(row))
            summed.append(0)
        summed[j] += weight
        row_of.append(j)
    return distinct, summed, row_of


class _Recent:
    """A small thread-safe table of the most recently used entries."""

    def __init__(self, size: int):
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()

    def get(self, key, make: Callable):
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
                return value
        value = make()  # outside the lock: other corpora are not held up
        with self._lock:
            value = self._entries.setdefault(key, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The most recent corpora, parsed.
_sessions = _Recent(8)


def session(payload: dict) -> Session:
    """The :class:`Session` of a request's corpus: read once, then found by its text.

    Refuses bad input in one line, as :func:`parse` does.
    """
    mode = payload.get("mode", "words")
    text = payload.get("corpus")
    eow = payload.get("end_of_word", True)
    if mode not in MODES or not isinstance(text, str) or not isinstance(eow, bool):
        parse(payload)  # raises the request's one-line refusal
    key = (mode, eow and mode != "bytes", text)
    return _sessions.get(key, lambda: _new_session(parse(payload), key))


def _new_session(corpus: Corpus, key: tuple) -> Session:
    distinct, weights, row_of = gather(corpus.rows, corpus.weights)
    texts: list = [None] * len(distinct)
    for i, j in enumerate(row_of):
        if texts[j] is None:
            texts[j] = corpus.texts[i]
    symbols = sum(len(row) * w for row, w in zip(distinct, weights))
    return Session(corpus, distinct, weights, row_of, texts, symbols, key)


# -- progress: a click continues where the trainer got to ------------------------------

class Progress:
    """Where each trainer got to on recent corpora, so that a click continues it.

    Every trainer of the workbench (the reference, each broken variant, the
    learner's functions) does rounds that depend only on the current rows: the
    rounds from the rows after ``k`` merges, ranks from ``k``, are exactly
    those a fresh run does after its ``k``-th. So for each trainer on each
    corpus (a key) the rules learned so far are kept, with the rows after
    every :data:`EVERY`-th merge and after the last merge asked for; the
    :data:`ENTRIES` most recent keys are kept. One more merge costs one round;
    going back starts from the nearest point before.
    """

    EVERY = 20
    ENTRIES = 24

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: OrderedDict = OrderedDict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def fit(self, key, rows: list, merges: int, run: Callable,
            keep_before: bool = False) -> tuple[list[Merge], list, list | None]:
        """The rules and rows after ``merges`` rounds (fewer if no pair is left), and with
        ``keep_before`` the rows before the last round (None before the first).

        ``rows`` are the starting rows of the key; ``run(rows, first_rank, n,
        on_round)`` does up to ``n`` rounds from ``rows``, calling
        ``on_round(rule, before, after)`` after each, and returns the rules and
        the rows. Stored rows are shared: callers must not modify them.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = {"rules": [], "points": {0: (rows, None)},
                                              "end": None, "last": 0}
            self._entries.move_to_end(key)
            while len(self._entries) > self.ENTRIES:
                self._entries.popitem(last=False)
            end = entry["end"]
            target = merges if end is None else min(merges, end)
            start = max(k for k in entry["points"] if k <= target)
            current, before = entry["points"][start]
            known = entry["rules"][:start]
        if start == target:
            return known, current, before
        passed: dict = {}
        last_before: list = [before]

        def on_round(rule: Merge, previous: list, after: list) -> None:
            done = rule.rank + 1
            if done % self.EVERY == 0:  # the lists of rows may be reused: shallow copies
                passed[done] = (list(after), list(previous) if keep_before else None)
            last_before[0] = previous

        more, current = run(current, start, target - start, on_round)
        rules = known + more
        done = len(rules)
        before = list(last_before[0]) if keep_before and more else before
        with self._lock:
            points = entry["points"]
            points.update(passed)
            previous_last = entry["last"]
            if previous_last % self.EVERY and previous_last != entry["end"]:
                points.pop(previous_last, None)  # one point only that is not a multiple
            points[done] = (current, before)
            entry["last"] = done
            if len(rules) > len(entry["rules"]):
                entry["rules"] = rules
            if done < target:
                entry["end"] = done
        return rules, current, before


progress = Progress()


def clear_caches() -> None:
    """Forget every corpus read and every trainer's progress (tests compare with a fresh run)."""
    _sessions.clear()
    progress.clear()
