"""Training sentencepiece BPE from count tables: the pieces of training from the files, tables
added up, the word options taken from the tables, and one-line refusals of what does not fit."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

pytest.importorskip("sentencepiece")

import bytepair  # noqa: E402
from bytepair.counts.piece_counts import PieceCounts  # noqa: E402
from bytepair.split.spm_text import TextRules  # noqa: E402
from bytepair.training import sentencepiece as training  # noqa: E402
from bytepair.training.sentencepiece import META_OPTIONS, WORD_OPTIONS  # noqa: E402
from helpers import examples  # noqa: E402
from spm_helpers import LLAMA, sample_lines, write_lines  # noqa: E402

# Ties, runs (aaaa), multi-byte UTF-8, runs of spaces, meta-piece text, empty and duplicate lines.
LINE = st.lists(st.sampled_from(["a", "a", "b", " ", "  ", "é", "日", "😀", "1", "<s>", "ab"]), max_size=12).map("".join)
OPTIONS = st.fixed_dictionaries({
    "normalization_rule_name": st.sampled_from(["identity", "nmt_nfkc"]),
    "add_dummy_prefix": st.booleans(), "remove_extra_whitespaces": st.booleans(),
    "treat_whitespace_as_suffix": st.booleans(), "allow_whitespace_only_pieces": st.booleans(),
    "split_by_whitespace": st.booleans(), "max_sentence_length": st.sampled_from([10, 4192]),
    "byte_fallback": st.booleans(), "user_defined_symbols": st.sampled_from([(), ("ab",)]),
    "split_digits": st.booleans(), "vocab_size": st.integers(20, 120)}).map(
    # Room for the 256 byte pieces, so that most examples train.
    lambda o: dict(o, vocab_size=o["vocab_size"] + 256 * o["byte_fallback"]))


def outcome(train, *args, **options):
    """The pieces trained, or the error's message (a vocabulary too small or too large is refused
    alike from files and from tables)."""
    try:
        model = train(*args, **options)
    except ValueError as exc:
        return str(exc)
    return model.pieces, model.skipped_lines


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          max_examples=examples(100), deadline=None)
@given(lines=st.lists(LINE, min_size=1, max_size=16), cut=st.integers(0, 16), options=OPTIONS)
def test_tables_train_the_pieces_of_the_files(tmp_path_factory, lines, cut, options):
    folder = tmp_path_factory.mktemp("c")
    texts = [line.encode() for line in lines + lines[:2]]  # duplicate lines too
    first, second = folder / "a.txt", folder / "b.txt"
    first.write_bytes(b"".join(t + b"\n" for t in texts[:cut]))
    second.write_bytes(b"".join(t + b"\n" for t in texts[cut:]))
    counting = {name: value for name, value in options.items() if name in WORD_OPTIONS + META_OPTIONS}
    a = bytepair.count_sentencepiece(first, **counting)
    b = bytepair.count_sentencepiece(second, **counting)
    both = bytepair.count_sentencepiece([first, second], **counting)
    assert a + b == both
    expected = outcome(bytepair.train_sentencepiece, [first, second], hard_vocab_limit=False, **options)
    model_options = {name: value for name, value in options.items() if name not in WORD_OPTIONS}
    assert outcome(bytepair.train_sentencepiece, [a, b], hard_vocab_limit=False, **model_options) == expected
    assert outcome(bytepair.train_sentencepiece, both, hard_vocab_limit=False, **options) == expected


def test_a_saved_table_trains_spm_trains_model_with_its_rules(tmp_path):
    lines = sample_lines("kjv-genesis-exodus.txt", 400) + sample_lines("multilingual-sample.txt", 100)
    corpus = write_lines(lines + [b"x" * 5000], str(tmp_path))
    counting = {name: value for name, value in LLAMA.items() if name in WORD_OPTIONS + META_OPTIONS}
    reports = []
    bytepair.count_sentencepiece(corpus, workers=2, report=reports.append, **counting).save(tmp_path / "t.counts")
    table = PieceCounts.load(tmp_path / "t.counts")
    assert table.skipped_lines == 1 and "skipped 1 lines longer than max_sentence_length" in reports[0]
    from_files = bytepair.train_sentencepiece(corpus, vocab_size=800, **LLAMA)
    model_options = {name: value for name, value in LLAMA.items() if name not in WORD_OPTIONS}
    from_table = bytepair.train_sentencepiece(table, vocab_size=800, report=reports.append, **model_options)
    assert from_table.pieces == from_files.pieces and from_table.skipped_lines == 1
    assert from_table.options == from_files.options  # the table's rules, as if given
    assert from_table.normalizer == from_files.normalizer
    assert len(reports) == 2


@pytest.fixture
def table(tmp_path):
    return bytepair.count_sentencepiece(write_lines(sample_lines("kjv-genesis-exodus.txt", 100),
                                                    str(tmp_path)), normalization_rule_name="identity")


@pytest.mark.parametrize(("corpus", "options", "message"), [
    (lambda t: PieceCounts({b"ab": 1}, pattern="gpt2"), {},
     "^corpus: a table of pre-tokenized pieces cannot train a sentencepiece model"),
    (lambda t: [t, PieceCounts({b"ab": 1}, pattern=None)], {},
     "^corpus: a table of pre-tokenized pieces cannot train"),
    (lambda t: [t, PieceCounts(dict(t), pattern=None, sentencepiece=TextRules(
        normalization_rule_name="identity", max_sentence_length=99, meta_pieces=t.sentencepiece.meta_pieces))],
     {}, "^corpus: cannot combine sentencepiece word counts made with different max_sentence_length: 4192 and 99$"),
    (lambda t: t, {"max_sentence_length": 100}, r"^max_sentence_length: 100 is not the count tables' 4192;"),
    (lambda t: t, {"normalization_rule_name": "nmt_nfkc"},
     r"^normalization_rule_name: 'nmt_nfkc' is not the count tables' 'identity';"),
    (lambda t: t, {"byte_fallback": True}, r"^meta pieces: .*only this training has <0x00>...<0xFF> "
     r"\(byte_fallback\); only the tables have none\)"),
    (lambda t: t, {"user_defined_symbols": "<x>"}, r"^meta pieces: .*only this training has '<x>'"),
    (lambda t: t, {"workers": 2}, "^workers: has no effect with count tables"),
    (lambda t: t, {"count_memory": "1GiB"}, "^count_memory: has no effect with count tables"),
])
def test_what_does_not_fit_the_tables_is_refused_in_one_line(table, corpus, options, message):
    with pytest.raises(ValueError, match=message) as refused:
        bytepair.train_sentencepiece(corpus(table), vocab_size=300, **options)
    assert "\n" not in str(refused.value)


def test_byte_level_training_refuses_a_table_of_sentencepiece_words(table):
    with pytest.raises(ValueError, match="^corpus: a table of sentencepiece words .* trains a sentencepiece "
                       "model only"):
        bytepair.train(table, vocab_size=300)


@pytest.mark.parametrize("option", ["vocab_size", "character_coverage", "split_digits", "hard_vocab_limit"])
def test_counting_refuses_the_options_of_the_model(tmp_path, option):
    corpus = write_lines([b"a b"], str(tmp_path))
    with pytest.raises(TypeError, match=f"^{option}: decides the model, not the words"):
        bytepair.count_sentencepiece(corpus, **{option: 1})


def test_a_loop_past_the_limit_is_refused_before_it_starts(table, monkeypatch):
    from bytepair.learn.budget import resident_bytes

    monkeypatch.setattr(training, "LOOP_BYTES_PER_POSITION", 1 << 30)
    learned = []
    monkeypatch.setattr(training, "pieces_from_words", lambda *a, **k: learned.append(a))
    with pytest.raises(bytepair.MemoryLimitError, match=r"^max_memory: the merge loop needs about"):
        bytepair.train_sentencepiece(table, vocab_size=300, max_memory=resident_bytes() + (64 << 20))
    assert learned == []
    monkeypatch.undo()
    assert len(bytepair.train_sentencepiece(table, vocab_size=300, max_memory="64GiB").pieces) == 300
