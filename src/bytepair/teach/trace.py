"""The course's round-by-round trace of a tiny byte-mode fit (format ``bpe-merges-v1``)."""

from __future__ import annotations

from typing import Iterator, Sequence

from bytepair.model.models import BYTE_TOKENS
from bytepair.learn.naive import fit

#: First and last line of a trace; the version names the line format.
TRACE_BEGIN = "TRACE bpe-merges-v1 BEGIN"
TRACE_END = "TRACE bpe-merges-v1 END"


def _stage(stage: int, sequences: list[list[int]]) -> list[str]:
    return [f"STAGE {stage} DOC {index} [{', '.join(map(str, sequence))}]"
            for index, sequence in enumerate(sequences)]


def trace_lines(documents: Sequence[bytes], merges: int) -> Iterator[str]:
    """The ``bpe-merges-v1`` trace of a byte-mode fit, one line at a time.

    Drives the reference trainer (:func:`bytepair.learn.naive.fit`) and prints what
    it sees each round: every candidate pair in ``(left, right)`` order, then
    the merge; each stage shows every document. Stops early when no pair is
    left. Cost: ``O(merges x corpus)``.
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
    documents = [bytes(document) for document in documents]
    expansions = [bytes([i]) for i in range(BYTE_TOKENS)]
    rounds: list[str] = []

    def show(counts, rule, sequences) -> None:
        for pair in sorted(counts):
            winner = "yes" if pair == (rule.left, rule.right) else "no"
            rounds.append(f"CANDIDATE rank={rule.rank} left={pair[0]} right={pair[1]} "
                          f"count={counts[pair]} winner={winner}")
        expansions.append(expansions[rule.left] + expansions[rule.right])
        rounds.append(f"MERGE rank={rule.rank} left={rule.left} right={rule.right} "
                      f"count={rule.count} replacements={rule.replacements} "
                      f"token={rule.token_id} bytes_hex={expansions[rule.token_id].hex()}")
        rounds.extend(_stage(rule.rank + 1, sequences))

    fit(documents, [1] * len(documents), merges, lambda left, right, rank: BYTE_TOKENS + rank,
        on_round=show)
    yield TRACE_BEGIN
    yield from _stage(0, [list(document) for document in documents])
    yield from rounds
    yield TRACE_END
