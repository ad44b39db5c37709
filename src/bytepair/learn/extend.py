"""Extending a tokenizer's vocabulary on the pair engine, keeping every ID it has.

Plain training starts every piece as its bytes and numbers tokens ``256 + rank``. Extending
starts every piece as the base tokenizer's own encoding of it, in the base's IDs, and hands
the engine a ``join`` that names each merged token: the ID of the token whose bytes the two
sides spell together when the vocabulary holds it already (the merge is recorded, the
vocabulary does not grow), else the next free ID, above every ID of the base. The engine
itself is the one plain training runs (:class:`bytepair.learn.incremental.IncrementalEngine`):
the greatest count, ties to the smallest ``(left, right)`` in these IDs, which is Hugging
Face's rule, replacement left to right. The naive statement is the test reference
(``tests/learn/extend_reference.py``).

>>> table = TokenTable({0: b"a", 1: b"b", 2: b"ab"})
>>> rules = extend_rules(array("I", [0, 1, 0, 1, 0, 1]), array("q", [0, 6]), array("q", [1]),
...                      table, new_tokens=1)
>>> [(m.left, m.right, m.token_id) for m in rules]
[(0, 1, 2), (2, 2, 3)]
>>> table.spelled(3)
b'abab'
"""

from __future__ import annotations

from array import array
from typing import Mapping, Sequence

from bytepair.learn.incremental import IncrementalEngine
from bytepair.learn.loop import Hook, run
from bytepair.learn.rules import Merge


class TokenTable:
    """Every token's bytes by ID, and the ID of every spelling: the ``join`` of extension.

    ``tokens`` maps each ID of the base (its model's tokens and its added tokens) to its
    bytes. New IDs start at ``first_new`` (default: one above the largest). O(1) per join.
    """

    def __init__(self, tokens: Mapping[int, bytes], first_new: int | None = None):
        self._bytes: dict[int, bytes] = dict(tokens)
        self._ids: dict[bytes, int] = {}
        for token_id in sorted(self._bytes, reverse=True):  # the smallest ID wins a spelling
            self._ids[self._bytes[token_id]] = token_id
        top = max(self._bytes, default=-1) + 1
        self.next_id = top if first_new is None else max(first_new, top)
        self.base_size = len(self._bytes)
        self.added = 0

    def __len__(self) -> int:
        return len(self._bytes)

    def spelled(self, token_id: int) -> bytes:
        return self._bytes[token_id]

    def id_of(self, data: bytes) -> int | None:
        return self._ids.get(data)

    def join(self, left: int, right: int, rank: int) -> int:
        """The ID of ``left``'s bytes followed by ``right``'s: an existing token's, or a new one."""
        data = self._bytes[left] + self._bytes[right]
        found = self._ids.get(data)
        if found is not None:
            return found
        new = self.next_id
        self.next_id += 1
        self._bytes[new] = data
        self._ids[data] = new
        self.added += 1
        return new


def extend_rules(tokens: array, starts: array, weights: array, table: TokenTable, *,
                 new_tokens: int, min_frequency: int = 1, first_rank: int = 0,
                 backend: str | None = None, hooks: Sequence[Hook] = ()) -> list[Merge]:
    """The rules that add up to ``new_tokens`` tokens to ``table``, learned on pieces.

    ``tokens`` holds every piece's starting IDs laid end to end (``array("I")``), ``starts``
    the offset of each piece and then the total, ``weights`` each piece's count. Stops early
    when no pair is seen ``min_frequency`` times. A rule whose token the vocabulary holds
    already counts as a rule, not as a token. ``hooks`` (:class:`bytepair.learn.loop.Hook`:
    progress, a memory limit) run between calls of the engine, their ``merges`` being
    ``new_tokens``. Per rule: as plain training's engine.
    """
    engine = IncrementalEngine.from_arrays(tokens, starts, weights, table.join,
                                           backend=backend, first_rank=first_rank)
    try:
        return run(engine, [], new_tokens, min_frequency, hooks, made=lambda: table.added)
    finally:
        engine.release()
