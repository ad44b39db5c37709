"""The vocabulary of a fit: merge records, the selection order, and one replacement pass.

Every engine imports its ordering and its replacement rule from here, so the
semantics are written down exactly once.
"""

from collections import Counter
from typing import Hashable, NamedTuple, Sequence, TypeVar

Symbol = TypeVar("Symbol", bound=Hashable)


class Merge(NamedTuple):
    """One learned rule: ``rank`` (its place in the order, from 0) joins ``left`` and ``right``
    into ``token_id``.

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


#: Byte mode's first learned token: IDs 0-255 are the bytes.
BYTE_TOKENS = 256


def byte_token(left: int, right: int, rank: int) -> int:
    """The ID of byte mode's rule ``rank``: ``256 + rank`` (whatever it joins).

    >>> byte_token(97, 97, 0)
    256
    """
    return BYTE_TOKENS + rank


def priority(count: int, left, right) -> tuple:
    """Sort key of a candidate pair: smaller is better.

    Greatest count first; ties to the smallest left symbol, then the smallest
    right symbol (numeric IDs in byte mode, Python string order in word mode).

    >>> sorted([priority(1, 98, 97), priority(1, 97, 98), priority(2, 256, 97)])
    [(-2, 256, 97), (-1, 97, 98), (-1, 98, 97)]
    """
    return (-count, left, right)


#: Counts are below 2**63; packed priorities put the count above 64 bits of IDs.
_TOP_COUNT = 2**63 - 1
_ID_BITS = 32
_ID_MASK = 2**_ID_BITS - 1


def packed_priority(count: int, left: int, right: int) -> int:
    """:func:`priority` of a pair of integer IDs below ``2**32``, as one int.

    Orders exactly as the tuple does: ``(2**63 - 1 - count, left, right)``
    written as bit fields from most to least significant. A queue of these
    compares machine-sized integers instead of tuples.

    >>> sorted([packed_priority(1, 98, 97), packed_priority(1, 97, 98),
    ...         packed_priority(2, 256, 97)]) == [packed_priority(2, 256, 97),
    ...         packed_priority(1, 97, 98), packed_priority(1, 98, 97)]
    True
    >>> unpack_priority(packed_priority(5, 2**32 - 1, 7))
    (5, 4294967295, 7)
    """
    return ((_TOP_COUNT - count) << (2 * _ID_BITS)) | (left << _ID_BITS) | right


def unpack_priority(entry: int) -> tuple[int, int, int]:
    """``(count, left, right)`` of a :func:`packed_priority`."""
    return (_TOP_COUNT - (entry >> (2 * _ID_BITS)), (entry >> _ID_BITS) & _ID_MASK,
            entry & _ID_MASK)


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
