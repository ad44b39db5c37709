"""Where a token came from: its merge tree down to bytes, read from the model's rules.

Every learned token ``256 + r`` was made by rule ``r``, which joined two
earlier tokens; following the rules down gives a binary tree whose leaves are
the token's bytes. Each node carries what training recorded for its rule:

* ``rank``: the rule's place in the order (``token - 256`` in bytepair's numbering);
* ``count``: the pair's count when the rule was chosen;
* ``replacements``: the matches the left-to-right pass consumed;
* ``stage``: 1 or 2 for a SuperBPE model (rules below the transition are
  stage 1), None for others;
* ``flags``: ``"unreachable"`` (encoding the token's own bytes does not give
  it, so text never produces it), ``"intermediate-only"`` (encoding the
  training text never leaves it: later rules always consume it), ``"special"``;
* ``unknown``: the flags that cannot be computed for this model, so that their
  absence says nothing: ``["intermediate-only"]`` when the rules do not record
  their counts (an imported model) or come from staged training (SuperBPE).

Token IDs are the tokenizer's own (an imported ``tokenizer.json`` or tiktoken
file keeps its library's IDs); ranks are bytepair's. Imported rules carry no
counts (0): they are shown as unknown (None).

>>> from bytepair.learn.rules import Merge
>>> from bytepair.model.models import ByteModel
>>> from bytepair.model.tokenizer import Tokenizer
>>> tok = Tokenizer(ByteModel([Merge(0, 97, 97, 256, 3, 2), Merge(1, 256, 256, 257, 1, 1)]))
>>> tree = Provenance(tok).tree(257)
>>> tree["rank"], tree["count"], [child["id"] for child in tree["children"]]
(1, 1, [256, 256])
>>> Provenance(tok).tree(256)["flags"]
['intermediate-only']
"""

from __future__ import annotations

from bytepair.evaluation.checks import intermediate_tokens
from bytepair.model.models import BYTE_TOKENS
from bytepair.model.tokenizer import Tokenizer


def token_text(data: bytes) -> tuple[str, bool]:
    """A token's bytes as text, and whether they were whole UTF-8.

    Bytes that are not whole UTF-8 (half a character) are written in hex,
    two digits a byte separated by spaces.

    >>> token_text("é".encode()), token_text(b"\\xc3")
    (('é', True), ('C3', False))
    """
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return " ".join(f"{b:02X}" for b in data), False


class Provenance:
    """The merge trees of one tokenizer's tokens. The intermediate-only tokens are found once,
    at the first tree (O(rules)); a tree costs O(its nodes x the token's bytes) for the
    reachability checks."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        self.model = tokenizer.model
        self._intermediate: set[int] | None = None
        self._intermediate_known = True
        self._computed = False
        self._inner = tokenizer._in  # outer ID -> bytepair's ID (None: the same)
        self._outer = tokenizer._out  # bytepair's ID -> outer ID
        self._specials = {i: t for t, i in tokenizer.special_tokens.items()}

    def prepare(self) -> None:
        """Find the intermediate-only tokens now rather than at the first tree. O(rules)."""
        self._intermediate_set()

    def _intermediate_set(self) -> set[int] | None:
        if not self._computed:
            found = intermediate_tokens(self.model.merges)
            self._intermediate = None if found is None else set(found)
            self._computed = True
        return self._intermediate

    def outer_id(self, inner: int) -> int:
        return inner if self._outer is None else self._outer[inner]

    def inner_id(self, token_id: int) -> int:
        if not isinstance(token_id, int) or isinstance(token_id, bool) or not (
                0 <= token_id < self.tokenizer.vocab_size):
            raise ValueError(f"id: expected a token ID from 0 to {self.tokenizer.vocab_size - 1}, "
                             f"got {token_id!r}")
        return token_id if self._inner is None else self._inner[token_id]

    def tree(self, token_id: int) -> dict:
        """The merge tree of ``token_id`` (the tokenizer's ID) as nested dicts (see the module)."""
        inner = self.inner_id(token_id)
        if token_id in self._specials:
            return {"id": token_id, "text": self._specials[token_id], "whole": True, "rank": None,
                    "count": None, "replacements": None, "stage": None, "flags": ["special"],
                    "children": []}
        return self._node(inner)

    def _node(self, inner: int) -> dict:
        data = self.model.token_bytes(inner)
        text, whole = token_text(data)
        node = {"id": self.outer_id(inner), "text": text, "whole": whole, "rank": None,
                "count": None, "replacements": None, "stage": None, "flags": [], "children": []}
        if inner < BYTE_TOKENS:
            node["byte"] = inner
            return node
        rank = inner - BYTE_TOKENS
        rule = self.model.merges[rank]
        node["rank"] = rank
        # Imported rules carry no counts (0): unknown, not zero.
        node["count"] = rule.count or None
        node["replacements"] = rule.replacements or None
        stages = self.model.stages
        if stages is not None:
            node["stage"] = 1 if inner < stages.transition else 2
        if self.model.encode_piece(data) != [inner]:
            node["flags"].append("unreachable")
        middle = self._intermediate_set()
        if middle is None:
            node["unknown"] = ["intermediate-only"]
        elif inner in middle:
            node["flags"].append("intermediate-only")
        node["children"] = [self._node(rule.left), self._node(rule.right)]
        return node
