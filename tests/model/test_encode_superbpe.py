"""A SuperBPE model's compiled encoder (stage-1 parts, then the later rules run by run between
seams) equals replaying the rules in rank order on each whole piece.

Rules are drawn at random over tiny alphabets, so that ties, runs like ``aaaa``, pieces that are
parts of other pieces and later rules across the stage-1 cuts are the common case; the
tokenizer tests train real SuperBPE models on texts of a few words, spaces and multi-byte
characters.
"""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
import helpers
from bytepair.learn.rules import replace_pair
from bytepair.learn.superbpe import replay
from bytepair.model import codec
from bytepair.split.pretokenize import splitter

pytestmark = pytest.mark.skipif(
    not codec.compiled(), reason="the compiled encoder is not in use (BYTEPAIR_NO_EXTENSIONS)")
compiled = codec.backend
WHOLE = compiled.PATTERN_NONE  # no pre-tokenizer: each input is one piece

ALPHABETS = [b"ab", b"a b", b"ab c", "é日 ".encode()]


def replay_rules(lefts, rights, data: bytes) -> list[int]:
    """Encoding by definition: every rule, in rank order, one left-to-right pass each."""
    tokens = list(data)
    for rank, (left, right) in enumerate(zip(lefts, rights)):
        tokens, _ = replace_pair(tokens, left, right, 256 + rank)
    return tokens


def staged(lefts, rights, stage_one: int):
    encoder = compiled.Encoder(lefts, rights)
    encoder.set_stage_one(compiled.Encoder(lefts[:stage_one], rights[:stage_one]))
    return encoder


@st.composite
def rule_sets(draw):
    """(alphabet, lefts, rights, stage one): rules joining the alphabet's bytes and earlier
    rules' tokens, no pair twice, the first ``stage one`` of them stage 1."""
    alphabet = draw(st.sampled_from(ALPHABETS))
    lefts, rights = helpers.random_rules(draw, alphabet, 2, 40)
    if len(lefts) < 2:
        lefts, rights = [alphabet[0], 256], [alphabet[0], 256]
    return alphabet, lefts, rights, draw(st.integers(1, len(lefts) - 1))


def texts(alphabet: bytes):
    """Pieces of up to 200 bytes (past the 64 of the scanned merges), with runs of one byte."""
    unit = st.one_of(st.sampled_from([bytes([b]) for b in alphabet]),
                     st.builds(lambda b, k: bytes([b]) * k, st.sampled_from(alphabet),
                               st.integers(2, 70)))
    return st.lists(unit, max_size=30).map(b"".join).map(lambda data: data[:200])


@settings(deadline=None)
@given(st.data())
def test_random_rules_encode_as_the_rank_order_replay(data):
    alphabet, lefts, rights, stage_one = data.draw(rule_sets())
    encoder = staged(lefts, rights, stage_one)
    pieces = data.draw(st.lists(texts(alphabet), min_size=1, max_size=6))
    # Each piece's parts as pieces of their own too, so that one cache meets the same bytes
    # as a piece and as a stage-1 part.
    pieces += [part for piece in pieces for part in piece.split(b" ")]
    cache = compiled.PieceCache()
    for piece in pieces + pieces[::-1]:
        assert encoder.encode(piece, WHOLE, cache) == replay_rules(lefts, rights, piece), piece
        assert encoder.encode(piece, WHOLE, None) == replay_rules(lefts, rights, piece), piece


def test_a_part_and_a_piece_of_the_same_bytes_do_not_share_a_cache_slot():
    # ab, ba (stage 1), then c+ab and ab+ab. The piece "ababa" is ab+ab, a; inside
    # "cababa" its part "ababa" is ab, ab, a for stage 1, and c+ab goes first.
    lefts, rights = [97, 98, 99, 256], [98, 97, 256, 256]
    encoder = staged(lefts, rights, 2)
    for order in ([b"ababa", b"cababa"], [b"cababa", b"ababa"]):
        cache = compiled.PieceCache()
        for _ in range(2):
            assert [encoder.encode(piece, WHOLE, cache) for piece in order] == [
                replay_rules(lefts, rights, piece) for piece in order]
    assert encoder.encode(b"cababa", WHOLE, None) == [258, 256, 97]
    assert encoder.encode(b"ababa", WHOLE, None) == [259, 97]


def test_a_later_rule_joins_across_a_pair_of_stage_1_tokens_that_has_no_rule():
    # xy (stage 1), then c+a and ca+b: the pair a b has no rule, yet c a b is one token.
    lefts, rights = [120, 99, 257], [121, 97, 98]
    encoder = staged(lefts, rights, 1)
    for data in (b"cab", b"xycabxy", b"cab" * 30):
        assert encoder.encode(data, WHOLE, None) == replay_rules(lefts, rights, data)
    assert encoder.encode(b"cab", WHOLE, None) == [258]


def test_runs_longer_than_the_scanned_merges_take_the_heap():
    # a+a (stage 1), then aa+aa: a run of 200 stage-1 tokens between seams.
    lefts, rights = [97, 256], [97, 256]
    encoder = staged(lefts, rights, 1)
    for n in (1, 2, 3, 129, 130, 400, 401):
        assert encoder.encode(b"a" * n, WHOLE, None) == replay_rules(lefts, rights, b"a" * n)


WORDS = ["a", "b", "ab", "aa", "aaaa", "é", "日本", " ", "  ", ",", "!!", "\n", "1"]
DOCS = st.lists(st.sampled_from(WORDS), max_size=40).map("".join)


@settings(max_examples=max(10, settings.default.max_examples // 4), deadline=None)
@given(st.lists(DOCS, min_size=1, max_size=5), st.lists(DOCS, max_size=5),
       st.integers(257, 300), st.integers(1, 40), st.integers(1, 4))
def test_superbpe_tokenizers_encode_as_the_rank_order_replay(docs, held_out, transition, extra,
                                                             max_words):
    if not "".join(docs).strip():
        docs = docs + ["a b"]
    tok = bytepair.train(docs, vocab_size=transition + 1 + extra, superbpe=transition,
                         max_words=max_words, progress=False, workers=1)
    split = splitter(tok.pattern)
    texts = held_out + docs + [""]
    expected = [[i for piece in split(text) for i in replay(piece.encode("utf-8"), tok.merges)]
                for text in texts]
    for _ in range(2):  # the second time from a warm piece cache
        assert [tok.encode(text) for text in texts] == expected
    assert tok.encode_batch(texts, threads=1) == expected


@pytest.mark.slow
def test_a_run_of_one_character_is_not_quadratic():
    tok = bytepair.train(["aaaa bbb aaaa, ab ab ab"] * 50, vocab_size=300, superbpe=270,
                         progress=False, workers=1)
    assert tok.model.stages is not None

    def seconds(n: int) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            tok.encode_ordinary("a" * n)
            best = min(best, time.process_time() - started)
        return best

    seconds(200_000)
    assert seconds(2_000_000) <= 20 * seconds(200_000)


def test_the_parts_of_a_piece_are_cached_only_when_the_piece_is_not():
    # ab, ba (stage 1), then ab+" ". A piece of up to 256 bytes is cached whole, so its
    # parts need not be; a longer one, never cached whole, has its parts cached.
    lefts, rights = [97, 98, 256], [98, 97, 32]
    encoder = staged(lefts, rights, 2)
    cache = compiled.PieceCache()
    assert encoder.encode(b"bab " * 20, WHOLE, cache) == [98, 258] * 20
    assert len(cache) == 1  # the piece, not its part "bab"
    for _ in range(2):
        assert encoder.encode(b"bab " * 70, WHOLE, cache) == [98, 258] * 70
        assert len(cache) == 2  # the part "bab", not the piece of 280 bytes
    assert encoder.encode(b"ab " * 100, WHOLE, cache) == [258] * 100
    assert len(cache) == 2  # its parts are whole tokens or bytes: nothing to keep
