"""The reference trainer: recount everything, every round.

This module is the specification every faster engine is tested against. It is
deliberately plain; its cost is ``O(merges x corpus)``.

Rules of a fit:

* Each sequence (a document in byte mode, a distinct word in word mode) is a
  barrier: no pair spans two sequences. A sequence has a positive integer
  weight (a word's count) that multiplies everything counted in it.
* Each round counts every adjacent window, overlapping windows included
  (``aaa`` holds ``(a, a)`` twice).
* The winner has the greatest count; ties go to the smallest left symbol, then
  the smallest right symbol (see :func:`bytepair.learn.rules.priority`).
* The winner is replaced in one left-to-right pass per sequence; a match
  consumes both tokens and the output is not rescanned. Its ``replacements``
  can be smaller than its ``count`` when windows overlap.
* The requested number of merges is an upper bound: training ends early when
  no adjacent pair is left. A pair seen once is still learned.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Hashable, Mapping, Sequence

from bytepair.learn.rules import Merge, count_pairs, priority, replace_pair


def fit(
    sequences: Sequence[Sequence[Hashable]],
    weights: Sequence[int],
    merges: int,
    join: Callable[[Hashable, Hashable, int], Hashable],
    on_round: Callable[[Mapping[tuple, int], Merge, list[list]], None] | None = None,
    *,
    first_rank: int = 0,
    eligible: Callable[[Hashable, Hashable], bool] | None = None,
    count: Callable[[list[list], Sequence[int]], Mapping[tuple, int]] = count_pairs,
    choose: Callable[[Mapping[tuple, int]], tuple[tuple, int]] | None = None,
    replace: Callable[[list[list], Sequence[int], Hashable, Hashable, Hashable],
                      tuple[list[list], int]] | None = None,
) -> tuple[list[Merge], list[list]]:
    """Learn up to ``merges`` rules; ``join(left, right, rank)`` names each new symbol.

    Ranks start at ``first_rank`` (a warm start continues a rule list). With
    ``eligible``, a pair for which it is false is never chosen (SuperBPE's
    word cap, :mod:`bytepair.learn.superbpe`); training ends when no eligible
    pair is left.

    ``count``, ``choose`` and ``replace`` are the round's three pieces, the
    rules' own by default: :func:`~bytepair.learn.rules.count_pairs`, the
    smallest :func:`~bytepair.learn.rules.priority`, and
    :func:`~bytepair.learn.rules.replace_pair` in every sequence. The course's
    exercise trains with a learner's functions in their place: ``choose`` gets
    what ``count`` returned (a mapping, or ``(pair, count)`` entries) and
    returns one entry; ``replace(sequences, weights, left, right, new)``
    returns the new sequences and the weighted number of replacements.

    Returns the rules and the transformed sequences. ``on_round(counts, rule,
    sequences)``, when given, sees every round: the pair counts the winner
    was chosen from, the rule, and the sequences after its replacement pass
    (:mod:`bytepair.teach.trace` prints them).

    >>> rules, seqs = fit([b"aaa", b"aba"], [1, 1], 2, lambda l, r, rank: 256 + rank)
    >>> [(m.left, m.right, m.count, m.replacements) for m in rules]
    [(97, 97, 2, 1), (97, 98, 1, 1)]
    >>> seqs
    [[256, 97], [257, 97]]
    """
    seqs = [list(sequence) for sequence in sequences]
    rules: list[Merge] = []
    for rank in range(first_rank, first_rank + merges):
        counts = count(seqs, weights)
        if eligible is not None:
            counts = Counter({pair: c for pair, c in counts.items() if eligible(*pair)})
        if not counts:
            break
        if choose is None:
            (left, right), n = min(counts.items(), key=lambda item: priority(item[1], *item[0]))
        else:
            (left, right), n = choose(counts)
        new = join(left, right, rank)
        if replace is not None:
            seqs[:], replaced = replace(seqs, weights, left, right, new)
        else:
            replaced = 0
            for i, weight in enumerate(weights):
                seqs[i], matches = replace_pair(seqs[i], left, right, new)
                replaced += matches * weight
        rules.append(Merge(rank, left, right, new, n, replaced))
        if on_round is not None:
            on_round(counts, rules[-1], seqs)
    return rules, seqs
