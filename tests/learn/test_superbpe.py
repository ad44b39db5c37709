"""SuperBPE: the fast path equals the naive reference, rule for rule; the tokenizer it makes.

Texts are drawn from a few words, spaces, punctuation runs, digits and
newlines, so that the stage-2 pattern's matches, long pieces, ties and the
word cap are the common case.
"""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn import naive
from bytepair.learn.incremental import IncrementalEngine
from bytepair.learn.rules import packed_priority
from bytepair.learn.superbpe import (words_in, fit_naive, joined_shape, replay, shape,
                                     shapes)
from bytepair.model.models import Stages
from bytepair.split.pretokenize import PATTERNS, splitter
from helpers import KJV, MULTILINGUAL, byte_token

uses_backend = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

GPT2, SUPERBPE = PATTERNS["gpt2"], PATTERNS["superbpe"]
UNITS = ["a", "b", "ab", " ", "  ", ",", "!!", "...", "1", "42", "\n", "\t", "é", "日本"]
TEXTS = st.lists(st.lists(st.sampled_from(UNITS), max_size=14).map("".join), max_size=6)


def superbpe_rules(tokenizer):
    return [tuple(m) for m in tokenizer.merges]


def reference(docs, transition, vocab, max_words, pretokenize=GPT2, stage2=SUPERBPE):
    rules, sequences = fit_naive(docs, transition - 256, vocab - 256, pretokenize=pretokenize,
                                 superbpe_pretokenize=stage2, max_words=max_words)
    return [tuple(m) for m in rules], sequences


# -- words and shapes --

@given(st.binary(max_size=12), st.binary(max_size=12))
def test_joined_shape_is_the_shape_of_the_joined_bytes(left, right):
    if left and right:
        assert joined_shape(shape(left), shape(right)) == shape(left + right)


def test_count_words_splits_on_ascii_white_space_only():
    assert words_in(b"a\xc2\xa0b") == 1  # a no-break space is inside a word
    assert words_in(b"\x0b a \x0c b\r") == 2
    assert [words_in(b) for b in (b"", b" ", b"x")] == [0, 0, 1]


# -- the engines under a word cap equal the naive fit with the same cap --

SEQUENCES = st.lists(st.lists(st.sampled_from([32, 97, 98, 10]), max_size=10), max_size=6)


@uses_backend
@given(SEQUENCES, st.integers(1, 3), st.integers(0, 30))
def test_engine_word_cap_equals_naive(backend, sequences, max_words, merges):
    token_bytes = [bytes([b]) for b in range(256)]

    def join(left, right, rank):
        token_bytes.append(token_bytes[left] + token_bytes[right])
        return 256 + rank

    def eligible(left, right):
        return words_in(token_bytes[left] + token_bytes[right]) <= max_words

    weights = [1 + i % 3 for i in range(len(sequences))]
    want, want_seqs = naive.fit(sequences, weights, merges, join, eligible=eligible)
    token_bytes[256:] = []
    trainer = IncrementalEngine(sequences, weights, byte_token, backend=backend,
                                 word_limit=(shapes(token_bytes), max_words))
    got = []
    for _ in range(merges):
        trainer._check()
        rule = trainer.step()
        if rule is None:
            break
        got.append(rule)
    trainer._check()
    assert got == want
    assert trainer.sequences() == want_seqs


def test_a_pair_over_the_cap_is_never_learned(backend):
    byte_shapes = shapes([bytes([b]) for b in range(256)])
    trainer = IncrementalEngine([[97, 32, 98]], [1], byte_token, backend=backend,
                                 word_limit=(byte_shapes, 1))
    assert trainer.step()[1:3] == (32, 98)  # " b"; then "a b" would hold two words
    assert trainer.step() is None
    trainer._check()
    with pytest.raises(ValueError, match="shapes: 256 given, but the sequences hold token 300"):
        IncrementalEngine([[300]], [1], byte_token, backend=backend, word_limit=(byte_shapes, 1))


def test_check_fails_on_a_capped_pair_in_the_queue():
    # Tamper with the twin: queue a pair over the cap by hand; the check must see it.
    trainer = IncrementalEngine([[97, 32, 98]], [1], byte_token, backend="python",
                                 word_limit=(shapes([bytes([b]) for b in range(256)]), 1))
    trainer.step()
    engine = trainer._engine
    engine._queued[(97, 256)] = 1
    engine.queue.add(packed_priority(1, 97, 256))
    with pytest.raises(AssertionError, match="over the word cap"):
        trainer._check()


# -- the whole training equals the reference --

# Whole trainings: a quarter of the profile's examples.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
          max_examples=max(10, settings.default.max_examples // 4))
@given(TEXTS, st.integers(256, 300), st.integers(0, 40), st.integers(1, 4))
def test_train_equals_reference(backend, docs, transition, extra, max_words):
    vocab = transition + 1 + extra
    want, sequences = reference(docs, transition, vocab, max_words)
    if not "".join(docs):
        return  # no text: refused, tested below
    tok = bytepair.train(docs, vocab_size=vocab, superbpe=transition, max_words=max_words,
                         progress=False, workers=1)
    assert superbpe_rules(tok) == want
    # Encoding a training document gives its final training sequence.
    assert [tok.encode(doc) for doc in docs] == sequences


def test_transition_at_the_end_and_at_256():
    docs = ["the cat sat, on the mat!! 12 cats", "the cat sat on the mat"] * 3
    # No stage-1 merge: stage 2 starts from the bytes.
    want, _ = reference(docs, 256, 300, 2)
    assert superbpe_rules(bytepair.train(docs, vocab_size=300, superbpe=256, max_words=2,
                                         progress=False)) == want
    # Stage 1 runs out of pairs before the transition: stage 2 starts where it ended.
    want, _ = reference(docs, 1000, 1100, 4)
    tok = bytepair.train(docs, vocab_size=1100, superbpe=1000, progress=False)
    assert superbpe_rules(tok) == want
    assert tok.model.stages.transition < 1000


@pytest.mark.slow
@pytest.mark.parametrize("max_words", [1, 2, 3, 4])
def test_real_english_equals_reference(max_words):
    docs = KJV.read_text(encoding="utf-8").splitlines()[:150]
    want, sequences = reference(docs, 330, 420, max_words)
    tok = bytepair.train(docs, vocab_size=420, superbpe=330, max_words=max_words, progress=False)
    assert superbpe_rules(tok) == want
    assert [tok.encode(doc) for doc in docs] == sequences
    words = [words_in(tok.model.token_bytes(t)) for t in range(tok.model.vocab_size)]
    assert max(words) <= max_words
    if max_words > 1:
        assert max(words) > 1  # superwords were learned


def test_real_multilingual_equals_reference():
    docs = MULTILINGUAL.read_text(encoding="utf-8").splitlines()[:60]
    want, sequences = reference(docs, 300, 380, 3)
    tok = bytepair.train(docs, vocab_size=380, superbpe=300, max_words=3, progress=False)
    assert superbpe_rules(tok) == want
    assert [tok.encode(doc) for doc in docs] == sequences


def test_custom_patterns_both_stages():
    docs = ["one two, three four. five six", "one two three"] * 2
    want, _ = reference(docs, 270, 300, 2, pretokenize=r"\S+|\s+", stage2=r"[,.]")
    tok = bytepair.train(docs, vocab_size=300, superbpe=270, max_words=2, pretokenize=r"\S+|\s+",
                         superbpe_pretokenize=r"[,.]", progress=False)
    assert superbpe_rules(tok) == want
    assert tok.pattern == r"[,.]"


# -- composing with the other options --

@pytest.fixture(scope="module")
def verses(tmp_path_factory):
    path = tmp_path_factory.mktemp("superbpe") / "verses.txt"
    path.write_text("\n".join(KJV.read_text(encoding="utf-8").splitlines()[:400]) + "\n",
                    encoding="utf-8")
    return path


def test_workers_files_and_documents_give_the_same_model(verses):
    one = bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, workers=1,
                         progress=False)
    two = bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, workers=2,
                         progress=False)
    lines = verses.read_text(encoding="utf-8").splitlines()
    streamed = bytepair.train((line for line in lines), vocab_size=700, superbpe=500,
                              progress=False)
    assert one == two == streamed
    assert one.model.stages == Stages(500, GPT2, 4)


def test_several_sizes_are_prefixes(verses):
    big = bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, progress=False)
    small = bytepair.train(verses, vocab_size=600, superbpe=500, per_line=True, progress=False)
    assert big.truncate(600) == small
    # At or below the transition the model is the stage-1 model, with the stage-1 pattern.
    plain = bytepair.train(verses, vocab_size=500, per_line=True, progress=False)
    assert big.truncate(500) == plain
    assert big.truncate(500).pattern == GPT2


def test_special_tokens_come_after_all_merges(verses):
    tok = bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True,
                         special_tokens=["<|end|>"], progress=False)
    assert tok.special_tokens == {"<|end|>": 699}
    assert tok.encode("x<|end|>", allowed_special="all")[-1] == 699


def test_init_extends_a_tokenizer_and_continues_stage_2(verses, tmp_path):
    plain = bytepair.train(verses, vocab_size=500, per_line=True, progress=False)
    whole = bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, progress=False)
    path = tmp_path / "plain.json"
    plain.save(path)
    assert bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, init=path,
                          progress=False) == whole
    # A smaller start goes on in stage 1 first.
    early = bytepair.train(verses, vocab_size=400, per_line=True, progress=False)
    assert bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, init=early,
                          progress=False) == whole
    # A SuperBPE model is continued in stage 2.
    part = bytepair.train(verses, vocab_size=600, superbpe=500, per_line=True, progress=False)
    assert bytepair.train(verses, vocab_size=700, superbpe=500, per_line=True, init=part,
                          progress=False) == whole


def test_save_and_load(tmp_path, verses):
    tok = bytepair.train(verses, vocab_size=650, superbpe=500, per_line=True, max_words=3,
                         special_tokens=["<s>"], progress=False)
    path = tmp_path / "m.json"
    tok.save(path)
    header = json.loads(path.read_text(encoding="utf-8"))
    assert header["version"] == 2
    assert header["superbpe"] == {"transition": 500, "pretokenize": GPT2, "max_words": 3}
    assert header["pattern"] == SUPERBPE
    loaded = bytepair.load(path)
    assert loaded == tok and loaded.model.stages == tok.model.stages
    # A model without stages is still written as version 1.
    tok.truncate(400).save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 1


def test_load_refuses_a_bad_superbpe_field(tmp_path, verses):
    tok = bytepair.train(verses, vocab_size=600, superbpe=500, per_line=True, progress=False)
    path = tmp_path / "m.json"
    tok.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["superbpe"]["max_words"] = 0
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(bytepair.ModelFormatError, match="max_words"):
        bytepair.load(path)


# -- exports --

def held_out():
    lines = MULTILINGUAL.read_text(encoding="utf-8").splitlines()
    return lines + ["The LORD said, 1234 times!!  Then... \n\n  they  went."]


def test_tokenizers_json_gives_identical_ids(tmp_path, verses):
    tokenizers = pytest.importorskip("tokenizers")
    tok = bytepair.train(verses, vocab_size=800, superbpe=500, per_line=True,
                         special_tokens=["<|end|>"], progress=False)
    path = tmp_path / "tokenizer.json"
    bytepair.to_tokenizers_json(tok, path)
    spec = json.loads(path.read_text(encoding="utf-8"))
    assert spec["pre_tokenizer"]["pretokenizers"][0]["behavior"] == "Isolated"
    assert spec["pre_tokenizer"]["pretokenizers"][1]["use_regex"] is False
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in held_out():
        ids = hf.encode(text, add_special_tokens=False).ids
        assert ids == tok.encode(text), text
        assert hf.decode(ids, skip_special_tokens=False) == text


def test_tiktoken_gives_identical_ids(verses):
    pytest.importorskip("tiktoken")
    tok = bytepair.train(verses, vocab_size=800, superbpe=500, per_line=True, progress=False)
    enc = bytepair.tiktoken_encoding(tok)
    for text in held_out():
        assert enc.encode_ordinary(text) == tok.encode(text), text


# -- bad input: one clear line each --

@pytest.mark.parametrize("options, message", [
    (dict(vocab_size=400, superbpe=400), "superbpe: the transition 400 must be smaller"),
    (dict(vocab_size=400, superbpe=500), "superbpe: the transition 500 must be smaller"),
    (dict(vocab_size=400, superbpe=255), "superbpe must be >= 256"),
    (dict(vocab_size=400, superbpe=300, superbpe_pretokenize=r"\d*"),
     "superbpe_pretokenize: pattern .* matches the empty string"),
    (dict(vocab_size=400, superbpe=300, max_words=0), "max_words must be >= 1"),
    (dict(vocab_size=400, superbpe=300, pretokenize=None), "superbpe: SuperBPE needs a stage-1"),
    (dict(vocab_size=400, superbpe=300, superbpe_pretokenize="none"),
     "superbpe_pretokenize: stage 2 needs a pattern"),
    (dict(vocab_size=400, superbpe=300, superbpe_pretokenize="superbep"),
     "superbpe_pretokenize: unknown pattern 'superbep', did you mean 'superbpe'"),
])
def test_bad_arguments(options, message):
    with pytest.raises(ValueError, match=message) as caught:
        bytepair.train(["some text, here"], progress=False, **options)
    assert "\n" not in str(caught.value)


def test_empty_corpus_is_refused():
    with pytest.raises(ValueError, match="corpus: no text to train on"):
        bytepair.train(["", ""], vocab_size=400, superbpe=300, progress=False)


def test_replay_is_how_the_tokenizer_encodes_a_piece(verses):
    tok = bytepair.train(verses, vocab_size=600, superbpe=500, per_line=True, progress=False)
    rng = random.Random(5)
    lines = verses.read_text(encoding="utf-8").splitlines()
    for line in rng.sample(lines, 20):
        data = line.encode("utf-8")
        assert tok.model.encode_piece(data) == replay(data, tok.merges)


def test_encoding_pieces_on_threads_gives_the_same_arrays(monkeypatch, verses):
    from bytepair.model import spans
    tok = bytepair.train(verses, vocab_size=600, per_line=True, progress=False)
    table = bytepair.count(verses, pretokenize="superbpe", per_line=True, workers=1)
    data, starts, _ = table.flat()
    one = spans.encode_spans(tok.model, data, starts, 1)
    monkeypatch.setattr(spans, "SPANS_PER_THREAD", 1000)
    assert spans.encode_spans(tok.model, data, starts, 3) == one
    pieces = [data[a:b] for a, b in zip(starts, starts[1:])]
    ids, at = one
    assert [list(ids[a:b]) for a, b in zip(at, at[1:])] == [tok.model.encode_piece(p) for p in pieces]


# -- long pieces: stage-1 rules part by part, then the others, equal the rank-order replay --

LONG = st.lists(st.sampled_from(["a", "b", "ab", "ba", " ", "  ", ",", "!!", "é", "\n", "1"]),
                min_size=30, max_size=120).map("".join)


@settings(max_examples=max(10, settings.default.max_examples // 4), deadline=None)
@given(st.lists(LONG, min_size=1, max_size=4), LONG, st.integers(257, 330), st.integers(1, 60),
       st.integers(1, 4))
def test_long_pieces_encode_as_the_rank_order_replay(docs, text, transition, extra, max_words):
    # Pieces of more than 64 bytes go through the two phases of the compiled encoder.
    tok = bytepair.train(docs, vocab_size=transition + 1 + extra, superbpe=transition,
                         max_words=max_words, progress=False, workers=1)
    for data in (text.encode("utf-8"), "".join(docs).encode("utf-8") * 2):
        assert tok.model.encode_piece(data) == replay(data, tok.merges)
    pieces = splitter(tok.pattern)(text * 3)
    assert tok.encode(text * 3) == [i for piece in pieces
                                    for i in replay(piece.encode("utf-8"), tok.merges)]


def test_stage_one_must_be_the_encoder_s_first_rules():
    from bytepair.model import codec

    if not codec.compiled():
        pytest.skip("the compiled encoder's option")
    encoder = codec.backend.Encoder([97, 256], [97, 97])
    with pytest.raises(ValueError, match="stage one's rule 0 is not this encoder's rule 0"):
        encoder.set_stage_one(codec.backend.Encoder([98], [98]))
    with pytest.raises(ValueError, match="between 1 and 1 rules, got 2"):
        encoder.set_stage_one(codec.backend.Encoder([97, 256], [97, 97]))
    encoder.set_stage_one(codec.backend.Encoder([97], [97]))
    assert encoder.encode(b"a" * 99) == [256] * 48 + [257]  # rule 0 everywhere, then rule 1


def test_a_stage_two_rule_across_a_cut_ranks_before_one_inside_a_part():
    from bytepair.model import codec

    if not codec.compiled():
        pytest.skip("the compiled encoder's option")
    # ab, ba (stage 1), then c+ab and ab+ab: "cabab" cuts between c and a only; c+ab ranks
    # first, so the second ab stays alone although ab+ab lies inside the part "abab".
    lefts, rights = [97, 98, 99, 256], [98, 97, 256, 256]
    data = b"cabab" * 13  # longer than 64 bytes: the two phases
    whole = codec.backend.Encoder(lefts, rights).encode(data)
    encoder = codec.backend.Encoder(lefts, rights)
    encoder.set_stage_one(codec.backend.Encoder(lefts[:2], rights[:2]))
    assert encoder.encode(data) == whole == [258, 256] * 13
