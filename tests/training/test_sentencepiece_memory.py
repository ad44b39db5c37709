"""``max_memory`` for sentencepiece training: the same model within a limit, a clear refusal past it."""

from __future__ import annotations

import pytest

pytest.importorskip("sentencepiece")

import bytepair  # noqa: E402
from bytepair.learn.budget import resident_bytes  # noqa: E402
from bytepair.training import sentencepiece as training  # noqa: E402
from helpers import assert_bad_input  # noqa: E402
from spm_helpers import LLAMA, sample_lines, write_lines  # noqa: E402


@pytest.fixture
def corpus(tmp_path):
    return write_lines(sample_lines("kjv-genesis-exodus.txt", 400), str(tmp_path))


def test_a_limit_it_fits_in_gives_the_same_model_with_the_counting_bounded(corpus, monkeypatch):
    import bytepair.counts.spm_words as spm_words  # train_sentencepiece imports it at each call

    bounds = []
    counted = spm_words.count_sentencepiece_words

    def spy(*args, count_memory=None, **kwargs):
        bounds.append(count_memory)
        return counted(*args, count_memory=count_memory, **kwargs)

    monkeypatch.setattr(spm_words, "count_sentencepiece_words", spy)
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
