"""``bytepair train FILES --sentencepiece``: spm_train's options with dashes, one-line refusals, skipped lines."""

from __future__ import annotations

import pytest

spm = pytest.importorskip("sentencepiece")

from bytepair.cli.main import main  # noqa: E402
from spm_helpers import sample_lines, spm_model, write_lines  # noqa: E402


def test_cli_model_equals_spm_train(tmp_path, capfd):
    lines = sample_lines("kjv-genesis-exodus.txt", 1200) + [b"x" * 5000]
    corpus = write_lines(lines, str(tmp_path))
    code = main(["train", corpus, "--sentencepiece", "--vocab-size", "1500", "--byte-fallback",
                 "--split-digits", "--allow-whitespace-only-pieces", "--remove-extra-whitespaces", "false",
                 "--normalization-rule-name", "identity", "--character-coverage", "0.99995",
                 "--user-defined-symbols", "<tab>,<x>", "--control-symbols", "<c>",
                 "-o", str(tmp_path / "m.model"), "--tokenizer-json", str(tmp_path / "tokenizer.json")])
    assert code == 0
    err = capfd.readouterr().err
    assert "skipped 1 lines longer than max_sentence_length" in err
    expected = spm_model(lines, vocab_size=1500, byte_fallback=True, split_digits=True,
                         allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
                         normalization_rule_name="identity", character_coverage=0.99995,
                         user_defined_symbols="<tab>,<x>", control_symbols="<c>")
    ours = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    assert [ours.id_to_piece(i) for i in range(ours.vocab_size())] == [p.piece for p in expected.pieces]
    assert [ours.get_score(i) for i in range(ours.vocab_size())] == [p.score for p in expected.pieces]
    assert (tmp_path / "tokenizer.json").exists()


def test_a_spilled_count_on_threads_gives_spm_trains_model(tmp_path, capfd, monkeypatch):
    """spm's defaults (nmt_nfkc) with malformed bytes, counted on two threads in tables held to
    64 KiB: the tables spill to disk, and the pieces are spm_train's all the same."""
    from bytepair.counts import spill

    written = []
    real = spill.Spill.write
    monkeypatch.setattr(spill.Spill, "write", lambda self, table: written.append(len(table)) or real(self, table))
    lines = (sample_lines("multilingual-sample.txt", 400) + sample_lines("kjv-genesis-exodus.txt", 1500)
             + [b"ab\xffcd ef \xef\xbf\xbd gh", b"\xc3( \xe2\x96 x"] * 30)
    corpus = write_lines(lines, str(tmp_path))
    code = main(["train", corpus, "--sentencepiece", "--vocab-size", "2000", "--workers", "2",
                 "--count-memory", "64KiB", "-q", "-o", str(tmp_path / "m.model")])
    assert code == 0, capfd.readouterr().err
    assert len(written) > 2
    expected = spm_model(lines, vocab_size=2000)
    ours = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    assert [ours.id_to_piece(i) for i in range(ours.vocab_size())] == [p.piece for p in expected.pieces]


def test_scheduler_counts_on_the_cluster_and_gives_the_local_model(tmp_path, capfd, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from bytepair.training import sentencepiece as training  # counts where it trains

    corpus = write_lines(sample_lines("kjv-genesis-exodus.txt", 800), str(tmp_path))
    local = training.count_sentencepiece_words
    monkeypatch.setattr(training, "count_sentencepiece_words", None)  # counted there, not here
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as dask:
        code = main(["train", corpus, "--sentencepiece", "--vocab-size", "600", "--scheduler",
                     dask.scheduler_address, "-q", "-o", str(tmp_path / "cluster.model")])
        assert code == 0, capfd.readouterr().err
    monkeypatch.setattr(training, "count_sentencepiece_words", local)
    assert main(["train", corpus, "--sentencepiece", "--vocab-size", "600", "-q", "-o",
                 str(tmp_path / "local.model")]) == 0
    assert (tmp_path / "cluster.model").read_bytes() == (tmp_path / "local.model").read_bytes()


@pytest.mark.parametrize("argv, words", [
    (["--input-sentence-size", "100"], "--input-sentence-size: an spm_train option bytepair does not support"),
    (["--model_type=unigram"], "--model-type: an spm_train option bytepair does not support"),
    (["--byte-fallback", "maybe"], "--byte-fallback: expected true or false, got 'maybe'"),
    (["--character-coverage", "0.5"], "character_coverage: 0.5 is outside [0.98, 1]"),
])
def test_bad_options_are_one_line(tmp_path, capfd, argv, words):
    corpus = write_lines(sample_lines("kjv-genesis-exodus.txt", 50), str(tmp_path))
    code = main(["train", corpus, "--sentencepiece", "--vocab-size", "300", *argv, "-o", str(tmp_path / "m.model")])
    err = capfd.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1, err
    assert not (tmp_path / "m.model").exists()


def test_inspect_shows_a_sentencepiece_model_and_train_init_names_it(tmp_path, capfd):
    corpus = write_lines(sample_lines("kjv-genesis-exodus.txt", 300), str(tmp_path))
    model = str(tmp_path / "m.model")
    assert main(["train", corpus, "--sentencepiece", "--vocab-size", "400", "--byte-fallback", "-q", "-o", model]) == 0
    capfd.readouterr()
    assert main(["inspect", model, "--top", "2"]) == 0
    out = capfd.readouterr().out
    assert "kind: sentencepiece BPE" in out and "256 byte" in out and "normalizer: nmt_nfkc" in out
    assert main(["train", corpus, "--vocab-size", "500", "--init", model, "-o", str(tmp_path / "t.json")]) == 2
    err = capfd.readouterr().err
    assert "is a sentencepiece model" in err and "encode, decode" in err and err.count("\n") == 1
