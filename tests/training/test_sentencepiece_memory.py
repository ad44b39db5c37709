"""``max_memory`` for sentencepiece training: the same model within a limit, a clear refusal past it."""

from __future__ import annotations

import random
import re
import string

import pytest

pytest.importorskip("sentencepiece")

import bytepair  # noqa: E402
from bytepair.learn import budget  # noqa: E402
from bytepair.learn.budget import resident_bytes  # noqa: E402
from bytepair.training import sentencepiece as training  # noqa: E402
from helpers import assert_bad_input  # noqa: E402
from spm_helpers import LLAMA, sample_lines, write_lines  # noqa: E402


@pytest.fixture
def corpus(tmp_path):
    return write_lines(sample_lines("kjv-genesis-exodus.txt", 400), str(tmp_path))


def test_a_limit_it_fits_in_gives_the_same_model_with_the_counting_bounded(corpus, monkeypatch):
    bounds = []
    counted = training.count_sentencepiece_words

    def spy(*args, count_memory=None, **kwargs):
        bounds.append(count_memory)
        return counted(*args, count_memory=count_memory, **kwargs)

    monkeypatch.setattr(training, "count_sentencepiece_words", spy)
    free = bytepair.train_sentencepiece(corpus, vocab_size=600, **LLAMA)
    limit = resident_bytes() + (256 << 20)
    bounded = bytepair.train_sentencepiece(corpus, vocab_size=600, max_memory=limit, **LLAMA)
    assert bounded.pieces == free.pieces
    assert bounds == [None, limit // 3]


def test_a_loop_past_the_limit_is_refused_before_it_starts(corpus, monkeypatch):
    monkeypatch.setattr(training, "LOOP_BYTES_PER_POSITION", 1 << 30)
    learned = []
    monkeypatch.setattr(training, "pieces_from_words", lambda *a, **k: learned.append(a))
    with pytest.raises(bytepair.MemoryLimitError, match=r"^max_memory: the merge loop needs about"):
        bytepair.train_sentencepiece(corpus, vocab_size=600, max_memory=resident_bytes() + (64 << 20),
                                     **LLAMA)
    assert learned == []


def test_the_command_line_refuses_in_one_line_and_writes_nothing(corpus, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(training, "LOOP_BYTES_PER_POSITION", 1 << 30)
    limit = f"{(resident_bytes() >> 20) + 64}MiB"
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--sentencepiece", "--vocab-size", "600",
                                        "--max-memory", limit, "-o", str(tmp_path / "m.model")],
                     "--max-memory", "merge loop needs about")


@pytest.fixture
def random_words(tmp_path):
    """Lines of random words: distinct words keep coming, as in web text."""
    rng = random.Random(7)
    path = tmp_path / "words.txt"
    path.write_text("\n".join(" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))
                                       for _ in range(12)) for _ in range(10000)))
    return path


@pytest.mark.skipif(training.SpmLoop is None, reason="the sample is counted by the compiled counter")
def test_a_corpus_forecast_past_the_limit_is_refused_before_counting(random_words, monkeypatch):
    monkeypatch.setattr(budget, "SAMPLE_BLOCKS", 16)
    monkeypatch.setattr(budget, "SAMPLE_BLOCK", 2048)
    monkeypatch.setattr(budget, "FORECAST_FROM", 1 << 17)
    counted = []
    monkeypatch.setattr(training, "count_sentencepiece_words", lambda *a, **k: counted.append(a))
    words = len(set(random_words.read_text().split()))
    # Room for the process and for a tenth of the words' need: the forecast says they need more.
    limit = resident_bytes() + training.words_need(words * 8, words) // 10
    with pytest.raises(bytepair.MemoryLimitError, match=r"^max_memory: training this corpus needs about"
                       r" .* for about [\d,]+ distinct words .* nothing was counted .*count_memory") as refused:
        bytepair.train_sentencepiece(random_words, vocab_size=600, max_memory=limit)
    assert counted == []
    forecast = int(re.search(r"for about ([\d,]+) distinct", str(refused.value))[1].replace(",", ""))
    assert 0.75 * words < forecast < 1.25 * words  # the growth law finds them from an eighth
