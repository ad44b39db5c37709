"""A SuperBPE model whose stage 1 ran out of pairs before the transition continues in stage 2
with the settings it was trained with: the result equals training from scratch."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from helpers import run

UNITS = ["a", "b", "ab", " ", "  ", ",", "!!", "...", "1", "42", "\n", "é", "日本"]
TEXTS = st.lists(st.lists(st.sampled_from(UNITS), min_size=1, max_size=14).map("".join),
                 min_size=1, max_size=6)
#: Far more stage-1 rules than such tiny texts hold: stage 1 always runs out.
TRANSITION = 400


def _ran_out(docs, vocab_size):
    model = bytepair.train(docs, vocab_size=vocab_size, superbpe=TRANSITION)
    return model, model.model.stages.transition


@settings(max_examples=max(10, settings.default.max_examples // 4), deadline=None)
@given(TEXTS, st.integers(0, 30), st.data())
def test_continuing_equals_training_from_scratch(docs, extra, data):
    vocab_size = TRANSITION + 1 + extra
    full, transition = _ran_out(docs, vocab_size)
    assert transition < TRANSITION  # the case at hand: stage 1 ended early
    cut = data.draw(st.integers(transition, full.vocab_size), label="cut")
    start = full.truncate(cut)
    continued = bytepair.train(docs, vocab_size=vocab_size, superbpe=TRANSITION, init=start)
    assert continued == full
    # From count tables, each stage's own.
    tables = [bytepair.count(docs, pretokenize="gpt2"), bytepair.count(docs, pretokenize="superbpe")]
    assert bytepair.train(tables, vocab_size=vocab_size, superbpe=TRANSITION, init=start) == full


def test_a_model_trained_with_a_lower_transition_is_still_refused():
    docs = ["the cat sat on the mat. the dog ate my homework quickly, 12345!"] * 3
    lower = bytepair.train(docs, vocab_size=300, superbpe=270)
    assert lower.model.stages.transition == 270  # stage 1 did not run out: it was told to stop
    with pytest.raises(ValueError, match="transition 270, not superbpe=280.*goes on"):
        bytepair.train(docs, vocab_size=300, superbpe=280, init=lower.truncate(275))
    with pytest.raises(ValueError, match="transition 270, not superbpe=260"):
        bytepair.train(docs, vocab_size=300, superbpe=260, init=lower.truncate(275))


def test_command_line_continues_with_the_settings_it_was_trained_with(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat. the cat sat on the mat.\n" * 3)
    full = tmp_path / "full.json"
    argv = ["train", corpus, "--vocab-size", "300", "--superbpe", "290", "-q"]
    assert run(capsys, *argv, "-o", full)[0] == 0
    model = bytepair.load(full)
    assert model.model.stages.transition < 290
    model.truncate(model.model.stages.transition + 2).save(tmp_path / "start.json")
    code, _, err = run(capsys, *argv, "--init", tmp_path / "start.json", "-o", tmp_path / "c.json")
    assert code == 0, err
    assert bytepair.load(tmp_path / "c.json") == model
