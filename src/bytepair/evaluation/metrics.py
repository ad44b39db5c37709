"""Numbers from token counts: Rényi efficiency, the Gini coefficient, and counts at smaller sizes.

Everything here works on a histogram of token IDs (``counts[id]`` = how often
the ID occurs), never on the token stream itself, so a sample of any length
costs O(vocabulary) once its IDs are counted.
"""

from __future__ import annotations

import math
from typing import Sequence

#: Zouhar et al.'s recommended order of the Rényi entropy.
RENYI_POWER = 2.5


def renyi_efficiency(counts: Sequence[int], power: float = RENYI_POWER,
                     vocab_size: int | None = None) -> float | None:
    """Rényi efficiency of a token distribution: ``H_power(p) / log2(V)``, O(len(counts)).

    ``counts`` holds how often each token occurs (zeros are skipped);
    ``power`` is the order of the Rényi entropy (not 1); ``vocab_size`` is
    ``V``, by default the number of tokens observed (nonzero counts), as
    ``tokenization_scorer.score(..., metric="renyi")`` does. None when the
    efficiency is undefined: no tokens, or ``V`` is 1.

    >>> renyi_efficiency([5, 5, 0, 0])
    1.0
    >>> round(renyi_efficiency([5, 5, 0, 0], vocab_size=4), 3)
    0.5
    >>> renyi_efficiency([7]) is None
    True
    """
    if power == 1:
        raise ValueError("power must not be 1 (that is Shannon entropy)")
    total = 0
    observed = 0
    for count in counts:
        if count:
            total += count
            observed += 1
    vocab_size = observed if vocab_size is None else vocab_size
    if total == 0 or vocab_size <= 1:
        return None
    # The probabilities first, as the reference does, so both round alike.
    mass = math.fsum((count / total) ** power for count in counts if count)
    return math.log2(mass) / (1 - power) / math.log2(vocab_size) + 0.0  # no -0.0


def gini(values: Sequence[float]) -> float | None:
    """The Gini coefficient of ``values``: mean absolute difference over twice the mean.

    0 when all are equal, towards 1 when one value holds everything. None for
    no values or a zero mean. O(n log n).

    >>> gini([1, 1, 1])
    0.0
    >>> gini([0, 0, 3])
    0.6666666666666666
    """
    values = sorted(values)
    n = len(values)
    total = math.fsum(values)
    if n == 0 or total == 0:
        return None
    # Sum over pairs of |x_i - x_j| from the sorted order: each x_i is larger
    # than the i values before it and smaller than the n - 1 - i after it.
    spread = math.fsum((2 * i - n + 1) * x for i, x in enumerate(values))
    return spread / (n * total)


def shrink_counts(counts, lefts: Sequence[int], rights: Sequence[int], base: int,
                  size: int, stop: int) -> int:
    """Turn the counts of an encoding with learned tokens below ``size`` into those below ``stop``.

    ``counts`` (a mutable sequence indexed by ID) holds how often each ID
    occurs when text is encoded with the learned tokens ``base .. size - 1``;
    ``lefts[t - base]`` and ``rights[t - base]`` are token ``t``'s halves.
    Afterwards it holds the counts of encoding the same text with the tokens
    below ``stop`` only. Returns how many more tokens that encoding has.
    O(size - stop).

    Why this is exact: encoding applies the rules in rank order, so encoding
    with fewer rules is the state the full encoding passed through after its
    last kept rule. Every token of the full encoding was made from two tokens
    of smaller ID, so undoing the rules from the last down to ``stop``, each
    occurrence of token ``t`` splits into one of its left and one of its right
    half, gives that state.

    >>> counts = [0, 0, 1, 2]  # IDs 2 = (0, 1) and 3 = (2, 0)
    >>> shrink_counts(counts, [0, 2], [1, 0], 2, 4, 2), counts
    (5, [5, 3, 0, 0])
    """
    added = 0
    for token in range(size - 1, stop - 1, -1):
        count = counts[token]
        if count:
            counts[lefts[token - base]] += count
            counts[rights[token - base]] += count
            counts[token] = 0
            added += count
    return added
