"""The extension loop (:mod:`bytepair.learn.extend`) against the naive reference, on both engines."""

from __future__ import annotations

from array import array
from itertools import accumulate

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st


import extend_reference as reference
from bytepair.learn.extend import TokenTable, extend_rules

ALPHABET = [b"a", b"b", b" ", "é".encode()]
PATTERN = r" ?[^ ]+| +"


@st.composite
def bases(draw):
    """A byte-level base: 256 bytes under shuffled IDs, random merges of its tokens (some
    spelling a token that exists already), added tokens, and ``ignore_merges`` or not."""
    specials = draw(st.integers(0, 2))
    order = draw(st.permutations(range(256)))
    vocab = {bytes([b]): specials + position for position, b in enumerate(order)}
    tokens = list(ALPHABET[:3]) + [bytes([0xC3]), bytes([0xA9])]
    merges = []
    for _ in range(draw(st.integers(0, 12))):
        left, right = draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens))
        if (left, right) in merges:
            continue
        merges.append((left, right))
        if left + right not in vocab:
            vocab[left + right] = len(vocab) + specials
            tokens.append(left + right)
    if draw(st.booleans()):
        # A token no merge makes (reachable only by lookup, with ignore_merges).
        vocab.setdefault(b"ab a", len(vocab) + specials)
    added = {f"<{i}>": i for i in range(specials)}
    if draw(st.booleans()):
        added["<x>"] = len(vocab) + specials
    return vocab, merges, added, draw(st.booleans())


documents = st.lists(st.lists(st.sampled_from(["a", "b", " ", "é", "<0>", "<x>"]), max_size=12)
                     .map("".join), max_size=8)


def fast(documents, vocab, merges, added, ignore_merges, vocab_size, pattern, min_frequency=1,
         backend=None):
    counts = reference.pieces(documents, pattern, added, None)
    sequences = [reference.base_encoding(p, vocab, merges, ignore_merges) for p in counts]
    tokens = array("I", [t for seq in sequences for t in seq])
    starts = array("q", [0, *accumulate(map(len, sequences))])
    table = TokenTable({**{i: t for t, i in vocab.items()},
                        **{i: t.encode() for t, i in added.items() if i not in vocab.values()}})
    rules = extend_rules(tokens, starts, array("q", counts.values()), table,
                         new_tokens=vocab_size - len(table), min_frequency=min_frequency,
                         first_rank=len(merges), backend=backend)
    assert [m.rank for m in rules] == list(range(len(merges), len(merges) + len(rules)))
    return [(m.left, m.right, m.token_id) for m in rules]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bases(), documents, st.integers(0, 20), st.sampled_from([PATTERN, None]), st.integers(1, 3))
def test_fast_equals_reference(backend, base, docs, more, pattern, min_frequency):
    vocab, merges, added, ignore_merges = base
    size = len(set(vocab.values()) | set(added.values())) + more
    expected = reference.extend(docs, vocab=vocab, merges=merges, added=added, vocab_size=size,
                                pattern=pattern, ignore_merges=ignore_merges,
                                min_frequency=min_frequency)
    assert fast(docs, vocab, merges, added, ignore_merges, size, pattern, min_frequency,
                backend) == expected


def test_a_merge_that_spells_a_token_reuses_its_id(backend):
    # "a" + "ba" spells "aba", which the base holds (made as "ab" + "a") but never reaches
    # on "aba": its rank-0 merge is ("b", "a").
    vocab = {bytes([b]): b for b in range(256)}
    vocab.update({b"ba": 256, b"ab": 257, b"aba": 258})
    merges = [(b"b", b"a"), (b"a", b"b"), (b"ab", b"a")]
    docs = ["aba"] * 3 + ["abab"]
    rules = fast(docs, vocab, merges, {}, False, 260, None, backend=backend)
    assert rules[0] == (ord("a"), 256, 258)  # reused: no new ID
    assert rules == reference.extend(docs, vocab=vocab, merges=merges, added={}, vocab_size=260)


def test_ties_go_to_the_smallest_ids(backend):
    vocab = {bytes([b]): 255 - b for b in range(256)}  # byte order reversed
    rules = fast(["ab", "cd"], vocab, [], {}, False, 257, None, backend=backend)
    assert rules == [(255 - ord("c"), 255 - ord("d"), 256)]
