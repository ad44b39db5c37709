"""Parity-aware BPE: which language chooses the next merge, written down once.

Parity-aware BPE (Foroutan et al., "Parity-Aware Byte-Pair Encoding", ACL 2026,
arXiv 2508.04796) learns from one corpus per language. Each round one language is
chosen, the most frequent pair *in that language's counts* becomes the rule, and
the rule is applied to every language's text (and dev set). This module holds the
parts every engine shares: the record of a step and the choice of the language.
They follow Hugging Face ``tokenizers``' ``ParityBpeTrainer`` (0.23) exactly,
quirks included, so that the rules can be compared one for one.

The choice, from ``scores`` (one per language):

* ``base`` with a dev set: the language whose dev text is longest in tokens now;
  ties go to the first language (in the order the languages were given).
* ``base`` with ``ratio``: the language whose compression of its training text,
  ``(initial length / current length) / ratio``, is lowest; ties to the first.
* ``window`` (either score): the best language as above, unless it won more than
  ``alpha / languages`` of the last ``window_size`` choices; then the next best,
  and so on; when every language is over its share, the last one looked at. The
  search looks at languages from the first: when no language is left that is
  neither passed over nor exhausted, it lands on the first language.

A language whose best pair is counted fewer than ``min_frequency`` times (or that
has no pair left) is *exhausted*: it is never chosen again by ``base``; ``window``
treats its score as the lowest possible. The step that found it exhausted learns
nothing (but ``window`` has recorded the choice). Training ends when every
language is exhausted.
"""

from __future__ import annotations

import math
from collections import deque
from typing import NamedTuple, Sequence

#: The ``language`` of a rule learned from the summed counts (``global_merges``).
GLOBAL = -1
VARIANTS = ("base", "window")


class ParityMerge(NamedTuple):
    """One parity-aware rule: :class:`bytepair.learn.rules.Merge`'s fields and the language
    that chose it (its index, or :data:`GLOBAL` during the first ``global_merges``).

    ``count`` and ``replacements`` are the pair's count and the matches its pass
    consumed (weighted) in the training text that chose it: the chosen language's, or
    all languages' when global. So ``replacements <= count`` as in plain BPE, and a
    parity model truncates, saves and loads like any other. (The pass is made in every
    language's text; the others' matches are not recorded.)
    """

    rank: int
    left: int
    right: int
    token_id: int
    count: int
    replacements: int
    language: int


class Selector:
    """Chooses the language of each step; the state of the ``window`` variant.

    ``scores`` given to :meth:`choose` are larger for the language that needs a
    merge more: the dev-set length, or minus the ratio-adjusted compression
    (:func:`ratio_scores`). O(languages x window_size) per step.

    >>> s = Selector("window", 2, window_size=2, alpha=1.0)
    >>> [s.choose([9, 1], set()) for _ in range(4)]
    [0, 0, 1, 0]
    """

    def __init__(self, variant: str, languages: int, *, window_size: int = 100,
                 alpha: float = 2.0):
        self.variant = variant
        self.languages = languages
        self.window_size = window_size
        self.threshold = alpha / languages
        self.recent: deque[int] = deque()

    def choose(self, scores: Sequence[float], exhausted: set[int]) -> int:
        if self.variant == "base":
            best, best_score = 0, -math.inf
            for i, score in enumerate(scores):
                if i not in exhausted and score > best_score:  # ties: the first
                    best, best_score = i, score
            return best
        # window: exhausted languages score lowest; one over its share of the
        # window is passed over for the next best. As in ParityBpeTrainer, the
        # search starts from language 0, so a step whose candidates are all
        # passed over or exhausted may land on language 0.
        values = [-math.inf if i in exhausted else s for i, s in enumerate(scores)]
        open_ = [True] * len(values)
        while True:
            best, best_score = 0, -math.inf
            for i, score in enumerate(values):
                if open_[i] and score > best_score:
                    best, best_score = i, score
            if self.recent.count(best) / self.window_size <= self.threshold:
                break
            if best_score == -math.inf:
                # No open language is left that is not exhausted. ParityBpeTrainer
                # would search forever here (it closes language 0 again and again);
                # it stops at the same language wherever it does stop.
                break
            open_[best] = False
            if not any(open_):
                break
        self.recent.append(best)
        if len(self.recent) > self.window_size:
            self.recent.popleft()
        return best


def ratio_scores(initial: Sequence[int], current: Sequence[int],
                 ratio: Sequence[float]) -> list[float]:
    """Minus each language's compression over its target: larger needs a merge more.

    Computed in floating point as ``(initial / current) / ratio``, the order of
    operations ``ParityBpeTrainer`` uses, so that near-ties fall the same way.

    >>> ratio_scores([10, 10], [5, 8], [1.0, 1.0])
    [-2.0, -1.25]
    """
    return [-(_divide(float(i), float(c)) / r) for i, c, r in zip(initial, current, ratio)]


def without_text(initial: Sequence[int], ratio: Sequence[float] | None) -> set[int]:
    """The languages exhausted before the first step: with ``ratio``, those without text."""
    return {i for i, length in enumerate(initial) if not length} if ratio is not None else set()


def _divide(a: float, b: float) -> float:
    """``a / b`` as IEEE 754 says (a language with no text left: NaN or infinity)."""
    if b:
        return a / b
    return math.nan if not a else math.copysign(math.inf, a)
