"""The course's round-by-round trace of a tiny byte-mode fit (format ``bpe-merges-v1``)."""

from __future__ import annotations

from typing import Iterator, Sequence

from .model import BYTE_TOKENS
from .rules import count_pairs, priority, replace_pair

#: First and last line of a trace; the version names the line format.
TRACE_BEGIN = "TRACE bpe-merges-v1 BEGIN"
TRACE_END = "TRACE bpe-merges-v1 END"


def _stage(stage: int, sequences: list[list[int]]) -> Iterator[str]:
    for index, sequence in enumerate(sequences):
        yield f"STAGE {stage} DOC {index} [{', '.join(map(str, sequence))}]"


def trace_lines(documents: Sequence[bytes], merges: int) -> Iterator[str]:
    """The ``bpe-merges-v1`` trace of a byte-mode fit, one line at a time.

    Built on :mod:`bytepair.rules` (the count, order and replacement pass of
    the reference trainer). Each round lists every candidate pair in
    ``(left, right)`` order, then the merge; each stage shows every document.
    Stops early when no pair is left. Cost: ``O(merges x corpus)``.

    >>> for line in trace_lines([b"aaa", b"aba"], 1):
    ...     print(line)
    TRACE bpe-merges-v1 BEGIN
    STAGE 0 DOC 0 [97, 97, 97]
    STAGE 0 DOC 1 [97, 98, 97]
    CANDIDATE rank=0 left=97 right=97 count=2 winner=yes
    CANDIDATE rank=0 left=97 right=98 count=1 winner=no
    CANDIDATE rank=0 left=98 right=97 count=1 winner=no
    MERGE rank=0 left=97 right=97 count=2 replacements=1 token=256 bytes_hex=6161
    STAGE 1 DOC 0 [256, 97]
    STAGE 1 DOC 1 [97, 98, 97]
    TRACE bpe-merges-v1 END
    """
    sequences = [list(document) for document in documents]
    weights = [1] * len(sequences)
    expansions = [bytes([i]) for i in range(BYTE_TOKENS)]
    yield TRACE_BEGIN
    yield from _stage(0, sequences)
    for rank in range(merges):
        counts = count_pairs(sequences, weights)
        if not counts:
            break
        left, right = winner = min(counts, key=lambda pair: priority(counts[pair], *pair))
        for pair in sorted(counts):
            yield (f"CANDIDATE rank={rank} left={pair[0]} right={pair[1]} count={counts[pair]} "
                   f"winner={'yes' if pair == winner else 'no'}")
        token = BYTE_TOKENS + rank
        replacements = 0
        for index, sequence in enumerate(sequences):
            sequences[index], matches = replace_pair(sequence, left, right, token)
            replacements += matches
        expansions.append(expansions[left] + expansions[right])
        yield (f"MERGE rank={rank} left={left} right={right} count={counts[winner]} "
               f"replacements={replacements} token={token} bytes_hex={expansions[token].hex()}")
        yield from _stage(rank + 1, sequences)
    yield TRACE_END
