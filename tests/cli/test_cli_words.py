"""``bytepair learn-words``: a corpus to word-mode rules in one command."""

from collections import Counter

import pytest

import bytepair
from helpers import KJV, assert_bad_input, run


@pytest.mark.parametrize("workers", ["1", "2"])
def test_learn_words_writes_the_model_of_train_words(capsys, tmp_path, workers):
    output = tmp_path / "words.model"
    code, out, err = run(capsys, "learn-words", KJV, "--merges", "200", "--end-of-word", "</w>",
                         "--workers", workers, "-o", output)
    assert code == 0, err
    assert "200 word-mode rules" in err
    expected = bytepair.train_words(Counter(KJV.read_text("utf-8").split()), 200, end_of_word="</w>")
    assert bytepair.load(output) == expected


def test_learn_words_says_when_it_stopped_early(capsys, tmp_path):
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("ab ab\nabc\n")
    code, _, err = run(capsys, "learn-words", corpus, "--merges", "10", "--min-frequency", "2",
                       "-o", tmp_path / "m")
    assert code == 0
    assert "stopped after 1 of 10 merges" in err
    assert bytepair.load(tmp_path / "m").rules == [("a", "b")]


@pytest.mark.parametrize(("argv", "words"), [
    (["missing.txt", "--merges", "5"], ["missing.txt"]),
    (["bad.txt", "--merges", "5"], ["bad.txt", "invalid UTF-8", "offset 3"]),
    (["empty.txt", "--merges", "5"], ["no words"]),
    (["good.txt", "--merges", "-1"], ["--merges"]),
    (["good.txt", "--merges", "5", "--end-of-word", ""], ["--end-of-word must be a non-empty str"]),
    (["good.txt", "--merges", "5", "--workers", "0"], ["--workers"]),
])
def test_bad_input_is_one_line_and_no_file(capsys, tmp_path, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.txt").write_bytes(b"ok \xc3( x\n")
    (tmp_path / "empty.txt").write_bytes(b"\n \n")
    (tmp_path / "good.txt").write_text("low lower\n")
    assert_bad_input(capsys, tmp_path, ["learn-words", *argv, "-o", "out.model"], *words)
