"""SuperBPE counts stage 2 on a thread while stage 1 learns: the same rules as the
naive reference, the counting thread's errors raised in the caller, the thread
joined on every way out."""

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.training.trainer import Trainer
from bytepair.learn.superbpe import fit_naive
from bytepair.split.pretokenize import PATTERNS

from helpers import needs_compiled_splitter

UNITS = ["a", "b", "ab", " ", "  ", ",", "!!", "1", "42", "\t", "é", "日本"]
LINES = st.lists(st.lists(st.sampled_from(UNITS), min_size=1, max_size=12).map("".join),
                 min_size=1, max_size=8)


def _write(tmp_path, lines):
    path = tmp_path / "corpus.txt"
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    return bytepair.Files(path, per_line=True)


def _stage2_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("bytepair-stage2")]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
          max_examples=max(10, settings.default.max_examples // 4))
@given(LINES, st.integers(256, 290), st.integers(1, 30), st.integers(1, 4))
def test_overlapped_training_equals_reference(tmp_path, lines, transition, extra, max_words):
    files = _write(tmp_path, lines)
    vocab = transition + extra
    want, _ = fit_naive([line.encode("utf-8") for line in lines], transition - 256, vocab - 256,
                        pretokenize=PATTERNS["gpt2"], superbpe_pretokenize=PATTERNS["superbpe"],
                        max_words=max_words)
    for workers in (1, 2, 3):  # in turn; beside learning with one and with two counting threads
        tok = bytepair.train(files, vocab_size=vocab, superbpe=transition, max_words=max_words,
                             workers=workers, progress=False)
        assert [tuple(m) for m in tok.merges] == [tuple(m) for m in want]


def _watch_stage2(monkeypatch, fail=None):
    """Record the thread each stage-2 count runs on; make it raise ``fail``."""
    seen = []
    count = Trainer.count

    def watched(self, corpus, pattern=..., **options):
        if pattern == PATTERNS["superbpe"]:
            seen.append((threading.current_thread().name, options.get("workers")))
            if fail is not None:
                raise fail
        return count(self, corpus, pattern, **options)

    monkeypatch.setattr(Trainer, "count", watched)
    return seen


@needs_compiled_splitter  # only compiled counting runs beside learning
def test_stage2_counts_beside_learning_only_for_compiled_files(tmp_path, monkeypatch):
    lines = ["the cat sat, on the mat!! 12 cats", "the cat sat on the mat"] * 5
    files = _write(tmp_path, lines)
    seen = _watch_stage2(monkeypatch)
    by_thread = bytepair.train(files, vocab_size=320, superbpe=280, workers=2, progress=False)
    assert seen[0][0].startswith("bytepair-stage2") and seen[0][1] == 1  # one worker left
    in_turn = bytepair.train(files, vocab_size=320, superbpe=280, workers=1, progress=False)
    in_memory = bytepair.train(lines, vocab_size=320, superbpe=280, workers=2, progress=False)
    assert [name for name, _ in seen[1:]] == [threading.current_thread().name] * 2
    assert by_thread.merges == in_turn.merges == in_memory.merges
    assert not _stage2_threads()


def test_stage2_count_error_is_raised_after_learning(tmp_path, monkeypatch):
    files = _write(tmp_path, ["ab ab ab, ba ba"] * 4)
    _watch_stage2(monkeypatch, fail=ValueError("corpus: stage two failed"))
    learned = []
    learn = Trainer.learn
    monkeypatch.setattr(Trainer, "learn", lambda *a, **k: learned.append(1) or learn(*a, **k))
    with pytest.raises(ValueError, match="^corpus: stage two failed$"):
        bytepair.train(files, vocab_size=300, superbpe=270, workers=2, progress=False)
    assert learned == [1]  # stage 1 learned to its end first, as when run in turn
    assert not _stage2_threads()


@needs_compiled_splitter  # only compiled counting runs beside learning
def test_interrupt_while_learning_joins_the_counting_thread(tmp_path, monkeypatch):
    files = _write(tmp_path, ["ab ab ab, ba ba"] * 4)
    seen = _watch_stage2(monkeypatch)
    started = threading.Event()
    count = Trainer.count

    def slow_count(self, corpus, pattern=..., **options):
        if pattern == PATTERNS["superbpe"]:
            started.set()
            threading.Event().wait(0.2)  # still counting when the interrupt comes
        return count(self, corpus, pattern, **options)

    monkeypatch.setattr(Trainer, "count", slow_count)

    def interrupted(*args, **kwargs):
        assert started.wait(5)
        raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "learn", interrupted)
    with pytest.raises(KeyboardInterrupt):
        bytepair.train(files, vocab_size=300, superbpe=270, workers=2, progress=False)
    assert seen and not _stage2_threads()
