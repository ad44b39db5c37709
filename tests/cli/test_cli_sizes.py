"""`bytepair train --vocab-size A,B,C -o 'tok-{vocab_size}.json'`: one run, one model per size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bytepair
import bytepair.training
from bytepair.cli.main import main
from helpers import KJV

END = "<|endoftext|>"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([os.fspath(a) if isinstance(a, Path) else str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "kjv.txt"
    path.write_bytes(KJV.read_bytes()[:60_000])
    return path


def test_each_size_equals_a_separate_run(capsys, tmp_path, corpus):
    sizes = [300, 700, 520]
    code, out, err = run(capsys, "train", corpus, "--per-line", "--vocab-size",
                         ",".join(map(str, sizes)), "--special", END, "--workers", "1",
                         "-o", tmp_path / "tok-{vocab_size}.json")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"tok-{s}.json" for s in sorted(sizes)]
    assert err.count("bytepair: wrote") == 3
    for size in sizes:
        alone = tmp_path / "alone" / f"{size}.json"
        alone.parent.mkdir(exist_ok=True)
        assert run(capsys, "train", corpus, "--per-line", "--vocab-size", size, "--special", END,
                   "--workers", "1", "-q", "-o", alone)[0] == 0
        listed = bytepair.load(tmp_path / f"tok-{size}.json")
        assert listed == bytepair.load(alone)
        assert listed.vocab_size == size and listed.special_tokens == {END: size - 1}
        assert (tmp_path / f"tok-{size}.json").read_bytes() == alone.read_bytes()


def test_sizes_past_the_last_pair_equal_separate_runs(capsys, tmp_path):
    # The corpus runs out of pairs: every size past that point gives the
    # same model, as separate runs would.
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("abab abab\n")
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = run(capsys, "train", corpus, "--vocab-size", "258,400", "--workers", "1",
                       "-o", out / "m{vocab_size}.json")
    assert code == 0, err
    assert "stopped after" in err
    for size in (258, 400):
        alone = tmp_path / f"alone{size}.json"
        assert run(capsys, "train", corpus, "--vocab-size", size, "--workers", "1", "-q",
                   "-o", alone)[0] == 0
        assert bytepair.load(out / f"m{size}.json") == bytepair.load(alone)


@pytest.mark.parametrize(("argv", "output", "words"), [
    (["--vocab-size", "300,400"], "m.json", ["-o must contain {vocab_size}", "'m.json'"]),
    (["--vocab-size", "300,x"], "m{vocab_size}.json",
     ["--vocab-size", "integers separated by commas", "'300,x'"]),
    (["--vocab-size", "300,256", "--special", END], "m{vocab_size}.json",
     ["--vocab-size must be at least 257 (256 bytes + 1 special token), got 256"]),
], ids=["no-placeholder", "not-an-integer", "one-size-too-small"])
def test_bad_size_lists_fail_before_training(capsys, tmp_path, corpus, monkeypatch, argv, output,
                                             words):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bytepair.training, "train", lambda *a, **k: pytest.fail("trained"))
    code, out, err = run(capsys, "train", corpus, *argv, "-o", output)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error: ")
    for word in words:
        assert word in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_one_size_fills_in_the_placeholder(capsys, tmp_path, corpus):
    code, _, err = run(capsys, "train", corpus, "--per-line", "--vocab-size", "300",
                       "--workers", "1", "-q", "-o", tmp_path / "tok-{vocab_size}.json")
    assert code == 0, err
    assert [p.name for p in tmp_path.iterdir()] == ["tok-300.json"]


@pytest.mark.parametrize("written,size", [("1k", 1000), ("1Ki", 1024), ("1_000", 1000), (" 2k ", 2000)])
def test_the_python_api_reads_sizes_as_the_command_line_does(capsys, tmp_path, corpus, written, size):
    """One parser: ``vocab_size="1k"`` is 1,000 in Python too, and gives the CLI's model."""
    documents = corpus.read_text().splitlines()
    code, _, err = run(capsys, "train", corpus, "--per-line", "--vocab-size", written,
                       "--workers", "1", "-o", tmp_path / "cli.json", "-q")
    assert code == 0, err
    tok = bytepair.train(documents, vocab_size=written, workers=1, progress=False)
    assert tok.vocab_size == size
    assert tok.merges == bytepair.load(tmp_path / "cli.json").merges
    assert len(bytepair.train(documents, merges=written, workers=1, progress=False).merges) == size
    assert bytepair.learn_words(documents, written).rules == bytepair.learn_words(documents, size).rules
    assert tok.truncate("300").vocab_size == 300


def test_a_size_the_parser_cannot_read_is_one_line_naming_the_argument():
    with pytest.raises(ValueError, match=r"vocab_size must be an int or a size such as '32k'.*'8 kB'"):
        bytepair.train(["abc"], vocab_size="8 kB")
    with pytest.raises(ValueError, match=r"^merges must be an int or a size"):
        bytepair.train(["abc"], merges="lots")
