"""Exact diagnostics of a byte model's rules, with no sample: broken tokens and the training curve.

* An *unreachable* token is one whose own bytes, encoded as one piece, do
  not give that one token: text can only reach it through a rule that a
  smaller rule pre-empts. Such a token is never produced by encoding.
* An *intermediate-only* token is one that encoding the training pieces never
  emits, because later rules always consume it. These are the under-trained
  tokens behind "glitch tokens".
* The *training curve*: rule ``r`` saves exactly ``replacements`` tokens on
  the training text, so the tokens saved at every vocabulary size are sums of
  the rules' counts, with no encoding.

The last two read the rules' ``replacements``, which every fit records (a
rule is learned only when it matches, so each has at least one). Rules
without them (a hand-made table, or counts from another corpus that do not
add up) make both unknown: the functions return None.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Sequence

from bytepair.learn.rules import Merge
from bytepair.model.models import BYTE_TOKENS, ByteModel


def unreachable_tokens(model: ByteModel) -> list[int]:
    """IDs of the learned tokens whose bytes, encoded as one piece, are not that one token.

    Whether token ``t`` is reachable depends only on the rules before it
    (later rules cannot merge a single token, nor make ``t``), so the list of
    a truncated model is this list's prefix below its size. O(total bytes of
    the tokens x log).

    >>> import bytepair
    >>> from bytepair.learn.rules import Merge
    >>> # "bc" first, so "abc" = ("ab", "c") can never form.
    >>> model = bytepair.ByteModel([Merge(0, 98, 99, 256, 1, 1), Merge(1, 97, 98, 257, 1, 1),
    ...                             Merge(2, 257, 99, 258, 1, 1)])
    >>> unreachable_tokens(model)
    [258]
    """
    return [token for token in range(BYTE_TOKENS, model.vocab_size)
            if model.encode_piece(model.token_bytes(token)) != [token]]


def final_training_counts(merges: Sequence[Merge]) -> list[int] | None:
    """How often each learned token occurs in the training pieces encoded with all of ``merges``.

    ``result[rank]`` is the weighted count of token ``256 + rank``: the
    replacements that made it less those of the later rules that consumed it
    (twice for a rule joining it with itself). Equal to counting the IDs of
    the final training sequences, weights included, without them. None when
    the rules carry no replacement counts or the counts do not add up. O(rules).

    >>> from bytepair.learn.rules import Merge
    >>> final_training_counts([Merge(0, 97, 97, 256, 3, 2), Merge(1, 256, 256, 257, 1, 1)])
    [0, 1]
    """
    left = [m.replacements for m in merges]
    if any(n <= 0 for n in left):
        return None
    for m in merges:
        for side in (m.left, m.right):
            if side >= BYTE_TOKENS:
                left[side - BYTE_TOKENS] -= m.replacements
    if any(n < 0 for n in left):
        return None
    return left


def intermediate_tokens(merges: Sequence[Merge]) -> list[int] | None:
    """IDs of the learned tokens that encoding the training pieces never emits (see
    :func:`final_training_counts`); None when unknown. O(rules).

    >>> from bytepair.learn.rules import Merge
    >>> intermediate_tokens([Merge(0, 97, 97, 256, 3, 2), Merge(1, 256, 256, 257, 1, 1)])
    [256]
    """
    counts = final_training_counts(merges)
    if counts is None:
        return None
    return [BYTE_TOKENS + rank for rank, count in enumerate(counts) if count == 0]


def intermediate_counts(merges: Sequence[Merge], merge_counts: Sequence[int]) -> dict[int, int] | None:
    """How many intermediate-only tokens the model truncated to each of ``merge_counts`` rules has.

    One pass up the ranks, keeping each token's count in the training
    encoding so far and how many of them are zero. None when unknown. O(rules).

    >>> from bytepair.learn.rules import Merge
    >>> intermediate_counts([Merge(0, 97, 97, 256, 3, 2), Merge(1, 256, 256, 257, 1, 1)], [1, 2])
    {1: 0, 2: 1}
    """
    if final_training_counts(merges) is None:
        return None
    wanted = set(merge_counts)
    live = [0] * len(merges)
    zeros = 0
    out = {0: 0} if 0 in wanted else {}
    for rank, m in enumerate(merges):
        live[rank] = m.replacements
        for side in (m.left, m.right):
            if side >= BYTE_TOKENS:
                before = live[side - BYTE_TOKENS]
                live[side - BYTE_TOKENS] = before - m.replacements
                # Counts only fall, and end at zero or more (checked above).
                zeros += before > 0 and before - m.replacements == 0
        if rank + 1 in wanted:
            out[rank + 1] = zeros
    return out


def tokens_saved(merges: Sequence[Merge]) -> list[int] | None:
    """``result[k]``: the tokens the first ``k`` rules save on the training text (weighted).

    Rule ``r`` replaces ``replacements`` pairs by one token each, so the
    training text encoded with ``k`` rules has ``bytes - result[k]`` tokens.
    None when the rules carry no replacement counts. O(rules).

    >>> from bytepair.learn.rules import Merge
    >>> tokens_saved([Merge(0, 97, 97, 256, 3, 2), Merge(1, 256, 256, 257, 1, 1)])
    [0, 2, 3]
    """
    if any(m.replacements <= 0 for m in merges):
        return None
    return list(accumulate((m.replacements for m in merges), initial=0))
