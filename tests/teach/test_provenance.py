"""Merge trees against the rules they are read from."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import bytepair
from bytepair.evaluation.checks import intermediate_tokens, unreachable_tokens
from bytepair.learn.rules import Merge
from bytepair.teach.provenance import Provenance, token_text

# Tiny alphabets: ties, runs like "aaaa", and multi-byte UTF-8 are the common case.
documents = st.lists(st.text(alphabet="ab é日", max_size=12), min_size=1, max_size=6)


def leaves(node: dict) -> list[dict]:
    return [node] if not node["children"] else [x for c in node["children"] for x in leaves(c)]


def check_tree(tok: bytepair.Tokenizer, token: int, node: dict) -> None:
    """Every node of the tree of ``token`` is its rule, field for field, down to bytes."""
    model = tok.model
    assert node["id"] == token
    data = tok.token_bytes(token)
    assert (node["text"], node["whole"]) == token_text(data)
    inner = token if tok.ids is None else tok.ids.index(token)
    if inner < 256:
        assert node["children"] == [] and node["rank"] is None and node["byte"] == inner
        return
    rule = model.merges[inner - 256]
    assert node["rank"] == rule.rank == inner - 256
    assert node["count"] == (rule.count or None)
    assert node["replacements"] == (rule.replacements or None)
    outer = (lambda i: i) if tok.ids is None else tok.ids.__getitem__
    assert [c["id"] for c in node["children"]] == [outer(rule.left), outer(rule.right)]
    assert b"".join(bytes([leaf["byte"]]) for leaf in leaves(node)) == data
    for child in node["children"]:
        check_tree(tok, child["id"], child)


@given(documents, st.integers(1, 12))
def test_trees_are_the_rules(docs, merges):
    tok = bytepair.Tokenizer(bytepair.train_bytes(docs, merges))
    provenance = Provenance(tok)
    unreachable = set(unreachable_tokens(tok.model))
    middle = set(intermediate_tokens(tok.merges) or ())
    for token in range(tok.vocab_size):
        tree = provenance.tree(token)
        check_tree(tok, token, tree)
        assert ("unreachable" in tree["flags"]) == (token in unreachable)
        assert ("intermediate-only" in tree["flags"]) == (token in middle)
        assert tree["stage"] is None


def test_flags_on_a_hand_made_table():
    # "bc" first, so "abc" = ("ab", "c") can never form; "ab" is only ever consumed.
    model = bytepair.ByteModel([Merge(0, 98, 99, 256, 1, 1), Merge(1, 97, 98, 257, 1, 1),
                                Merge(2, 257, 99, 258, 1, 1)])
    tok = bytepair.Tokenizer(model, ["<s>"])
    provenance = Provenance(tok)
    assert provenance.tree(258)["flags"] == ["unreachable"]
    assert "intermediate-only" in provenance.tree(257)["flags"]
    special = provenance.tree(259)
    assert special["flags"] == ["special"] and special["text"] == "<s>" and special["children"] == []


def test_superbpe_stages():
    text = ["the cat sat on the mat, the cat sat on the hat"] * 20
    tok = bytepair.train(text, merges=40, superbpe=256 + 15, progress=False)
    transition = tok.model.stages.transition
    provenance = Provenance(tok)
    stages = [provenance.tree(t)["stage"] for t in range(256, tok.model.vocab_size)]
    assert stages == [1 if t < transition else 2 for t in range(256, tok.model.vocab_size)]
    assert 2 in stages and 1 in stages
    for token in range(tok.model.vocab_size):
        check_tree(tok, token, provenance.tree(token))


def test_imported_ids_and_unknown_counts():
    # A tokenizer numbered another way (as imports are): trees speak its IDs, ranks are bytepair's.
    base = bytepair.train_bytes(["aaab abab"] * 3, 4)
    n = base.vocab_size
    ids = list(reversed(range(n)))
    tok = bytepair.Tokenizer(base, ids=ids)
    provenance = Provenance(tok)
    for token in range(n):
        check_tree(tok, token, provenance.tree(token))
    unknown = bytepair.Tokenizer(bytepair.ByteModel([Merge(0, 97, 97, 256, 0, 0)]))
    tree = Provenance(unknown).tree(256)
    assert tree["count"] is None and tree["replacements"] is None and tree["flags"] == []
    # Without counts, intermediate-only cannot be computed: unknown, not absent.
    assert tree["unknown"] == ["intermediate-only"]
    assert "unknown" not in Provenance(bytepair.Tokenizer(base)).tree(256)


@pytest.mark.parametrize("bad", [-1, 10**9, "3", 2.0, None, True])
def test_bad_ids_are_refused(bad):
    provenance = Provenance(bytepair.Tokenizer(bytepair.train_bytes(["aaa"], 1)))
    with pytest.raises(ValueError, match="id: expected a token ID"):
        provenance.tree(bad)
