"""The vocabulary of a fit: merge records, the selection order, and one replacement pass.

Every engine imports its ordering and its replacement rule from here, so the
semantics are written down exactly once.
"""

from __future__ import annotations

from collections import Counter
from typing import Hashable, NamedTuple, Sequence, TypeVar

Symbol = TypeVar("Symbol", bound=Hashable)


class Merge(NamedTuple):
    """One learned rule.

    ``count`` is the number of adjacent windows of ``(left, right)`` when the
    rule was chosen (overlapping windows count, weighted by sequence weight);
    ``replacements`` is the number of matches the left-to-right pass consumed.
    In byte mode the symbols are token IDs and ``token_id == 256 + rank``; in
    word mode they are strings and ``token_id == left + right``.

    >>> Merge(0, 97, 97, 256, 2, 1).replacements
    1
    """

    rank: int
    left: int | str
    right: int | str
    token_id: int | str
    count: int
    replacements: int


def priority(count: int, left, right) -> tuple:
    """Sort key of a candidate pair: smaller is better.

    Greatest count first; ties to the smallest left symbol, then the smallest
    right symbol (numeric IDs in byte mode, Python string order in word mode).

    >>> sorted([priority(1, 98, 97), priority(1, 97, 98), priority(2, 256, 97)])
    [(-2, 256, 97), (-1, 97, 98), (-1, 98, 97)]
    """
    return (-count, left, right)


def count_pairs(sequences: Sequence[Sequence], weights: Sequence[int]) -> Counter:
    """Weighted count of every adjacent window, overlapping windows included.

    Each sequence is a barrier: no window spans two sequences.

    >>> count_pairs([[97, 97, 97], [97, 98, 97]], [1, 1])
    Counter({(97, 97): 2, (97, 98): 1, (98, 97): 1})
    """
    counts: Counter = Counter()
    for sequence, weight in zip(sequences, weights):
        for pair, n in Counter(zip(sequence, sequence[1:])).items():
            counts[pair] += n * weight
    return counts


def replace_pair(sequence: Sequence, left, right, new) -> tuple[list, int]:
    """One left-to-right pass: a match consumes both tokens, output is not rescanned.

    Returns the new sequence and the number of matches.

    >>> replace_pair([97, 97, 97, 97, 97], 97, 97, 256)
    ([256, 256, 97], 2)
    """
    out = []
    matches = 0
    i = 0
    n = len(sequence)
    while i < n:
        if i + 1 < n and sequence[i] == left and sequence[i + 1] == right:
            out.append(new)
            matches += 1
            i += 2
        else:
            out.append(sequence[i])
            i += 1
    return out, matches
