"""``bytepair count --sentencepiece`` and ``bytepair train --counts ... --sentencepiece``: count
once, train from the tables, the model sentencepiece loads; one-line refusals."""

from __future__ import annotations

import pytest

spm = pytest.importorskip("sentencepiece")

from bytepair.cli.main import main  # noqa: E402
from spm_helpers import sample_lines, spm_model, write_lines  # noqa: E402

WORDS = ["--normalization-rule-name", "identity", "--remove-extra-whitespaces", "false",
         "--allow-whitespace-only-pieces", "--byte-fallback"]


@pytest.fixture
def shards(tmp_path):
    """Two text files: English and multilingual lines, one too long, empty and duplicate lines."""
    english = sample_lines("kjv-genesis-exodus.txt", 600) + [b"", b"x" * 5000]
    other = sample_lines("multilingual-sample.txt", 150) + english[:50]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    return write_lines(english, str(tmp_path / "a")), write_lines(other, str(tmp_path / "b")), english + other


def test_tables_train_the_model_of_the_files_that_sentencepiece_loads(tmp_path, capfd, shards):
    a, b, lines = shards
    for shard, name in ((a, "a.counts"), (b, "b.counts")):
        assert main(["count", shard, "--sentencepiece", *WORDS, "--workers", "2",
                     "-o", str(tmp_path / name)]) == 0
    err = capfd.readouterr().err
    assert "skipped 1 lines longer than max_sentence_length (4192 bytes)" in err
    assert "distinct words" in err and "1 line skipped as longer than max_sentence_length" in err
    model = ["--vocab-size", "1200", "--byte-fallback", "--split-digits", "--character-coverage", "0.99995"]
    assert main(["train", "--counts", str(tmp_path / "a.counts"), str(tmp_path / "b.counts"),
                 "--sentencepiece", *model, "-o", str(tmp_path / "tables.model")]) == 0
    assert "1 lines skipped as longer than max_sentence_length" in capfd.readouterr().err
    assert main(["train", a, b, "--sentencepiece", *model, *WORDS, "-q",
                 "-o", str(tmp_path / "files.model")]) == 0
    # The word options the tables hold count as given: the same file, byte for byte.
    assert (tmp_path / "tables.model").read_bytes() == (tmp_path / "files.model").read_bytes()
    expected = spm_model(lines, vocab_size=1200, byte_fallback=True, split_digits=True,
                         character_coverage=0.99995, normalization_rule_name="identity",
                         remove_extra_whitespaces=False, allow_whitespace_only_pieces=True)
    ours = spm.SentencePieceProcessor(model_file=str(tmp_path / "tables.model"))
    assert [ours.id_to_piece(i) for i in range(ours.vocab_size())] == [p.piece for p in expected.pieces]
    assert [ours.get_score(i) for i in range(ours.vocab_size())] == [p.score for p in expected.pieces]


@pytest.fixture
def counted(tmp_path, shards):
    assert main(["count", shards[0], "--sentencepiece", *WORDS, "-q", "-o", str(tmp_path / "s.counts")]) == 0
    assert main(["count", shards[0], "-q", "-o", str(tmp_path / "byte.counts")]) == 0
    return tmp_path


@pytest.mark.parametrize(("argv", "words"), [
    (["count", "{text}", "--sentencepiece", "--vocab-size", "100", "-o", "{dir}/x.counts"],
     "count: --vocab-size: decides the model, not the words; give it to 'bytepair train --counts"),
    (["count", "{text}", "--sentencepiece", "--model-type", "bpe", "-o", "{dir}/x.counts"],
     "--model-type: an spm_train option bytepair does not support"),
    (["train", "--counts", "{dir}/s.counts", "--sentencepiece", "--vocab-size", "600", "--byte-fallback",
      "--max-sentence-length", "100", "-o", "{dir}/m.model"],
     "max_sentence_length: 100 is not the count tables' 4192"),
    (["train", "--counts", "{dir}/s.counts", "--sentencepiece", "--vocab-size", "600", "-o", "{dir}/m.model"],
     "meta pieces: this training's are not the count tables' (only this training has none; only the "
     "tables have <0x00>...<0xFF> (byte_fallback))"),
    (["train", "--counts", "{dir}/byte.counts", "--sentencepiece", "--vocab-size", "600", "-o", "{dir}/m.model"],
     "--counts: a table of pre-tokenized pieces cannot train a sentencepiece model"),
    (["train", "--counts", "{dir}/s.counts", "--vocab-size", "600", "-o", "{dir}/m.json"],
     "--counts: a table of sentencepiece words (counted with --sentencepiece) trains a sentencepiece model only"),
    (["train", "--counts", "{dir}/s.counts", "--sentencepiece", "--vocab-size", "600", "--count-memory",
      "1GiB", "-o", "{dir}/m.model"], "argument --count-memory: has no effect with --counts"),
    (["train", "{text}", "--counts", "{dir}/s.counts", "--sentencepiece", "--vocab-size", "600", "-o",
      "{dir}/m.model"], "argument --counts: not allowed with FILE"),
    (["train", "{dir}/s.counts", "--sentencepiece", "--vocab-size", "600", "-o", "{dir}/m.model"],
     "is a count table ('bytepair count' wrote it), not text; train from it with --counts"),
])
def test_refusals_are_one_line_and_write_nothing(counted, shards, capfd, argv, words):
    capfd.readouterr()
    code = main([arg.format(dir=counted, text=shards[0]) for arg in argv])
    err = capfd.readouterr().err
    assert code == 2
    assert words in err and err.count("\n") == 1, err
    assert not (counted / "m.model").exists() and not (counted / "x.counts").exists()
