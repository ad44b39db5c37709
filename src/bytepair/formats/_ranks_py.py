"""tiktoken's merge loop on every token of a ranks table, in plain Python: the statement of
what the compiled ``bytepair.formats._ranks`` computes, and its twin without extensions."""

from __future__ import annotations

from array import array

#: The rank of a part that is a single byte absent from the tokens.
NONE = 0xFFFFFFFF


def tiktoken_parts(token: bytes, ranks: dict[bytes, int], below: int) -> list[bytes]:
    """tiktoken's merge loop on ``token`` with the tokens ranked below ``below``: at each
    step the adjacent pair whose joined bytes have the smallest rank, leftmost first.
    O(len(token)^2) lookups.

    >>> tiktoken_parts(b"abc", {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}, 5)
    [b'a', b'bc']
    """
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, where = below, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], below)
            if rank < best:
                best, where = rank, i
        if where < 0:
            break
        parts[where:where + 2] = [parts[where] + parts[where + 1]]
    return parts


def tiktoken_splits(data: bytes, starts) -> tuple[array, array, array]:
    """Each token's split by tiktoken's merge loop with the tokens ranked before it, as
    ``bytepair.formats._ranks.tiktoken_splits`` (which see) gives it."""
    if len(starts) < 1 or starts[0] != 0 or starts[-1] != len(data):
        raise ValueError("starts must begin at 0 and end at len(data)")
    tokens = [bytes(data[a:b]) for a, b in zip(starts, starts[1:])]
    if not all(tokens):
        raise ValueError(f"token {tokens.index(b'')} is empty (starts must increase)")
    ranks: dict[bytes, int] = {}
    for rank, token in enumerate(tokens):
        ranks.setdefault(token, rank)
    parts_out, lefts, rights = (array("I", bytes(4 * len(tokens))) for _ in range(3))
    for rank, token in enumerate(tokens):
        parts = tiktoken_parts(token, ranks, rank)
        parts_out[rank] = len(parts)
        if len(parts) == 2:
            lefts[rank] = ranks.get(parts[0], NONE)
            rights[rank] = ranks.get(parts[1], NONE)
    return parts_out, lefts, rights
