"""The worked examples of the course chapters, field for field, on every engine.

Byte mode follows chapter 000 (``aaa`` | ``aba``), word mode follows 001
(``low``/``lower``/``newest``/``widest``) and 003 (``low``/``lower``/``lowest``
with an end-of-word symbol). Every expected value below is one the chapters
state; everything else is derived from the inputs.
"""

import os

import pytest
from hypothesis import given, strategies as st

import bytepair
from bytepair import Merge
from bytepair.learn import naive
from bytepair.learn.rules import count_pairs, priority, replace_pair

ENGINES = ["naive", "incremental-compiled", "incremental-python"]


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """An engine name for ``engine=``; the incremental one is pinned to a backend."""
    name, _, backend = request.param.partition("-")
    if backend:
        if backend == "compiled" and os.environ.get("BYTEPAIR_SKIP_COMPILED"):
            pytest.skip("BYTEPAIR_SKIP_COMPILED is set")
        monkeypatch.setenv("BYTEPAIR_BACKEND", backend)
    return name


def positions(model) -> int:
    return sum(len(sequence) for sequence in model.sequences)


# --- byte mode: chapter 000 -------------------------------------------------


def test_aaa_aba_two_merges(engine):
    model = bytepair.train_bytes([b"aaa", b"aba"], 2, engine=engine)
    assert model.merges == [
        Merge(rank=0, left=97, right=97, token_id=256, count=2, replacements=1),
        Merge(rank=1, left=97, right=98, token_id=257, count=1, replacements=1),
    ]
    assert model.token_bytes(256) == bytes.fromhex("61 61")
    assert model.token_bytes(257) == bytes.fromhex("61 62")
    assert model.sequences == [[256, 97], [257, 97]]
    assert model.vocab_size == 258
    # Each transformed document still expands to its original bytes.
    assert [model.decode(s) for s in model.sequences] == [
        bytes.fromhex("61 61 61"),
        bytes.fromhex("61 62 61"),
    ]


def test_str_documents_are_their_utf8_bytes(engine):
    as_str = bytepair.train_bytes(["aaa", "aba"], 2, engine=engine)
    as_bytes = bytepair.train_bytes([b"aaa", b"aba"], 2, engine=engine)
    assert as_str.merges == as_bytes.merges
    assert as_str.sequences == as_bytes.sequences


def test_first_round_leaves_aba_unchanged(engine):
    model = bytepair.train_bytes([b"aaa", b"aba"], 1, engine=engine)
    assert model.sequences == [[256, 97], [97, 98, 97]]


def test_token_positions_fall_six_five_four(engine):
    fits = [bytepair.train_bytes([b"aaa", b"aba"], k, engine=engine) for k in range(3)]
    assert [positions(m) for m in fits] == [6, 5, 4]
    assert [m.vocab_size for m in fits] == [256, 257, 258]


def test_second_round_ties_go_to_smallest_left_id(engine):
    after_one = bytepair.train_bytes([b"aaa", b"aba"], 1, engine=engine)
    # Three candidates, each seen once: scores (1,-97,-98), (1,-98,-97), (1,-256,-97).
    assert count_pairs(after_one.sequences, [1, 1]) == {(97, 98): 1, (98, 97): 1, (256, 97): 1}
    second = bytepair.train_bytes([b"aaa", b"aba"], 2, engine=engine).merges[1]
    assert (second.left, second.right, second.count) == (97, 98, 1)


def test_ties_go_to_smallest_left_then_right_id(engine):
    left_decides = bytepair.train_bytes([b"ba", b"ab"], 1, engine=engine).merges
    assert (left_decides[0].left, left_decides[0].right) == (97, 98)
    right_decides = bytepair.train_bytes([b"ac", b"ab"], 1, engine=engine).merges
    assert (right_decides[0].left, right_decides[0].right) == (97, 98)


def test_greater_count_beats_smaller_ids(engine):
    first = bytepair.train_bytes([b"ab", b"zz", b"zz"], 1, engine=engine).merges[0]
    assert (first.left, first.right, first.count) == (122, 122, 2)


def test_document_order_does_not_change_the_fit(engine):
    documents = [b"abab", b"ba", b"aab", b"bbb", b"ab"]
    forward = bytepair.train_bytes(documents, 20, engine=engine)
    backward = bytepair.train_bytes(documents[::-1], 20, engine=engine)
    assert forward.merges == backward.merges
    assert backward.sequences == forward.sequences[::-1]


def test_rule_bytes_join_expansions_not_ids(engine):
    # A rule for (256, 97), where 256 stores 61 61, stores 61 61 61.
    model = bytepair.train_bytes([b"aaa"], 2, engine=engine)
    assert (model.merges[1].left, model.merges[1].right) == (256, 97)
    assert model.token_bytes(model.merges[1].token_id) == bytes.fromhex("61 61 61")


@pytest.mark.parametrize("documents", [[b"a", b"a"], [b"a", b"b"]], ids=["a|a", "a|b"])
def test_document_boundary_is_a_barrier(engine, documents):
    model = bytepair.train_bytes(documents, 5, engine=engine)
    assert model.merges == []
    assert model.vocab_size == 256
    assert model.sequences == [list(d) for d in documents]
    # The same bytes inside one document do form a pair.
    joined = bytepair.train_bytes([b"".join(documents)], 5, engine=engine)
    assert [(m.left, m.right) for m in joined.merges] == [tuple(b"".join(documents))]


def test_spaces_are_ordinary_bytes(engine):
    model = bytepair.train_bytes([b"a a"], 2, engine=engine)
    assert [(m.left, m.right) for m in model.merges] == [(32, 97), (97, 256)]
    assert model.token_bytes(257) == b"a a"


def test_overlap_count_three_replacements_two(engine):
    model = bytepair.train_bytes([b"aaaa"], 1, engine=engine)
    assert model.merges == [Merge(0, 97, 97, 256, count=3, replacements=2)]
    assert model.sequences == [[256, 256]]


def test_requested_merges_is_an_upper_bound(engine):
    # Ten distinct bytes in one document allow exactly nine merges.
    documents = [b"abcdefghij"]
    asked_twelve = bytepair.train_bytes(documents, 12, engine=engine)
    assert len(asked_twelve.merges) == 9
    assert asked_twelve.vocab_size == 256 + 9
    assert asked_twelve.sequences == [[256 + 8]]
    # Every pair was seen once, and a count-one pair is still learned.
    assert all(m.count == 1 and m.replacements == 1 for m in asked_twelve.merges)
    assert asked_twelve.merges == bytepair.train_bytes(documents, 9, engine=engine).merges


def test_zero_merges_keeps_bytes_and_sequences(engine):
    documents = [b"aaa", b"aba", b""]
    model = bytepair.train_bytes(documents, 0, engine=engine)
    assert model.merges == []
    assert model.vocab_size == 256
    assert model.sequences == [list(d) for d in documents]
    assert [model.token_bytes(i) for i in range(256)] == [bytes([i]) for i in range(256)]


def test_empty_corpus_learns_nothing(engine):
    assert bytepair.train_bytes([], 3, engine=engine).merges == []
    assert bytepair.train_bytes([b"", b""], 3, engine=engine).sequences == [[], []]


# --- word mode: chapter 001 -------------------------------------------------

WORDS_001 = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
RULES_001 = [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")]


def test_learn_bpe_example(engine):
    rules = bytepair.learn_bpe(WORDS_001, 4, engine=engine)
    assert rules == RULES_001
    assert bytepair.encode("lowest", rules) == ["low", "est"]
    assert bytepair.encode("xyz", rules) == ["x", "y", "z"]


def test_es_and_st_tie_at_nine(engine):
    start = [list(word) for word in WORDS_001]
    counts = count_pairs(start, list(WORDS_001.values()))
    assert counts[("e", "s")] == counts[("s", "t")] == 9 == max(counts.values())
    first = bytepair.train_words(WORDS_001, 4, engine=engine).merges[0]
    assert (first.left, first.right, first.token_id, first.count) == ("e", "s", "es", 9)


def test_word_order_does_not_change_the_rules(engine):
    reversed_counts = dict(reversed(list(WORDS_001.items())))
    assert bytepair.learn_bpe(reversed_counts, 4, engine=engine) == RULES_001


def test_word_model_encode_matches_function(engine):
    model = bytepair.train_words(WORDS_001, 4, engine=engine)
    assert model.rules == RULES_001
    assert model.encode("lowest") == ["low", "est"]
    assert model.encode("xyz") == ["x", "y", "z"]


# --- word mode with an end-of-word symbol: chapter 003 ----------------------

LOW_003 = {"low": 1, "lower": 1, "lowest": 1}


def test_first_rule_l_o_applies_to_all_three_words(engine):
    start = [list(word) + ["</w>"] for word in LOW_003]
    counts = count_pairs(start, [1, 1, 1])
    assert counts[("l", "o")] == counts[("o", "w")] == 3 == max(counts.values())

    model = bytepair.train_words(LOW_003, 1, end_of_word="</w>", engine=engine)
    assert model.rules == [("l", "o")]
    assert model.merges[0].count == 3
    assert model.merges[0].replacements == 3
    assert model.words == {
        "low": ("lo", "w", "</w>"),
        "lower": ("lo", "w", "e", "r", "</w>"),
        "lowest": ("lo", "w", "e", "s", "t", "</w>"),
    }


def test_abab_counts_both_occurrences(engine):
    model = bytepair.train_words({"abab": 1}, 1, end_of_word="</w>", engine=engine)
    assert model.merges[0][1:5] == ("a", "b", "ab", 2)
    assert model.words["abab"] == ("ab", "ab", "</w>")


def test_aaa_word_counts_two_merges_one(engine):
    model = bytepair.train_words({"aaa": 1}, 1, engine=engine)
    assert model.merges == [Merge(0, "a", "a", "aa", count=2, replacements=1)]
    assert model.words["aaa"] == ("aa", "a")


def test_word_ties_use_python_string_order(engine):
    # "A" < "b" < "c" as Python strings: uppercase sorts first.
    assert bytepair.learn_bpe({"ba": 1, "Ab": 1}, 1, engine=engine) == [("A", "b")]
    assert bytepair.learn_bpe({"ac": 1, "ab": 1}, 1, engine=engine) == [("a", "b")]


def test_word_merges_stop_when_no_pair_is_left(engine):
    model = bytepair.train_words({"ab": 4, "c": 9}, 10, engine=engine)
    assert model.rules == [("a", "b")]
    assert model.words == {"ab": ("ab",), "c": ("c",)}


def test_encode_with_end_of_word_replays_the_learned_rules(engine):
    rules = bytepair.learn_bpe(LOW_003, 10, end_of_word="</w>", engine=engine)
    model = bytepair.train_words(LOW_003, 10, end_of_word="</w>", engine=engine)
    for word, symbols in model.words.items():
        assert bytepair.encode(word, rules, end_of_word="</w>") == list(symbols)
        assert "".join(symbols) == word + "</w>"


# -- the round's pieces, given -------------------------------------------------------------

@given(st.lists(st.lists(st.sampled_from("ab"), max_size=6), min_size=1, max_size=4),
       st.integers(0, 5))
def test_the_rules_own_pieces_given_are_the_reference(words, merges):
    """naive.fit with count, choose and replace given as the rules' own is naive.fit: the
    course's exercise puts a learner's functions in their place."""
    def choose(counts):
        return min(counts.items(), key=lambda item: priority(item[1], *item[0]))

    def replace(rows, weights, left, right, new):
        done = [replace_pair(row, left, right, new) for row in rows]
        return [row for row, _ in done], sum(n * w for (_, n), w in zip(done, weights))

    weights = [1 + i % 2 for i in range(len(words))]
    join = lambda left, right, rank: left + right  # noqa: E731
    assert naive.fit(words, weights, merges, join, count=count_pairs, choose=choose,
                     replace=replace) == naive.fit(words, weights, merges, join)
