"""TrainSpec and the trainers: the spec is checked once and frozen, the trainer's verbs compose
to ``train``'s result byte for byte, and the hooks run once per chunk of merges, in order."""

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn import loop
from bytepair.learn.loop import Hook
from bytepair.split.pretokenize import PATTERNS
from bytepair.training import (CheckpointOptions, CountOptions, ReadOptions, SuperBPEOptions,
                               SuperBPETrainer, Trainer, TrainSpec, trainer_for)
from bytepair.training.spec import superbpe_options

from helpers import examples, KJV

UNITS = ["a", "b", "ab", " ", "  ", ",", "!!", "1", "é", "日本", "\n"]
DOCS = st.lists(st.lists(st.sampled_from(UNITS), max_size=14).map("".join), max_size=10)


def _lines(n: int) -> list[str]:
    return KJV.read_text(encoding="utf-8").splitlines()[:n]


# -- the spec: checked once, frozen -----------------------------------------------------------


def test_a_spec_is_checked_when_made_and_frozen():
    spec = TrainSpec(vocab_size=300, special_tokens=["<|endoftext|>"])
    assert (spec.merges, spec.special_tokens, spec.pattern) == (43, ("<|endoftext|>",), PATTERNS["gpt2"])
    assert not spec.pattern_given and TrainSpec(merges=3, pretokenize="gpt2").pattern_given
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.merges = 10
    for bad, message in [(dict(merges=3, vocab_size=300), "^give exactly one of vocab_size and merges$"),
                         (dict(merges=-1), "^merges must be"),
                         (dict(merges=3, min_frequency=0), "^min_frequency must be"),
                         (dict(merges=3, max_memory="lots"), "^max_memory"),
                         (dict(vocab_size=257, special_tokens=["a", "b"]), "^vocab_size must be at least 258")]:
        with pytest.raises(ValueError, match=message):
            TrainSpec(**bad)
    with pytest.raises(ValueError, match="^workers must be"):
        CountOptions(workers=0)
    with pytest.raises(ValueError, match="^superbpe: the transition 400 must be smaller"):
        TrainSpec(vocab_size=300, superbpe=SuperBPEOptions(400))
    with pytest.raises(ValueError, match="^max_words must be"):
        SuperBPEOptions(300, max_words=0)


def test_the_identity_names_what_shapes_the_rules(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("ab ab\n")
    files = bytepair.Files(path, per_line=True)
    spec = TrainSpec(merges=5, min_frequency=2)
    identity = spec.identity(files)
    assert identity["pattern"] == PATTERNS["gpt2"] and identity["min_frequency"] == 2
    assert identity["init"] is None and identity["per_line"] is True
    assert identity["corpus"][0][0] == str(path)
    table = bytepair.count(files)
    assert spec.identity(table) != spec.identity(table + table)  # the counts' digest
    start = Trainer(TrainSpec(merges=2)).fit(["ab ab ab"])
    assert TrainSpec(merges=5, init=start).identity(table)["init"] is not None


def test_continuing_takes_the_models_pattern_and_superbpe_settings():
    lines = _lines(200)
    plain = bytepair.train(lines, merges=50, pretokenize="cl100k", progress=False)
    assert TrainSpec.continuing(plain, merges=80).pattern == PATTERNS["cl100k"]
    superword = bytepair.train(lines, vocab_size=400, superbpe=320, max_words=3, progress=False)
    spec = TrainSpec.continuing(superword, vocab_size=450)
    assert spec.superbpe == SuperBPEOptions(320, superword.pattern, 3)
    assert spec.pattern == superword.model.stages.pretokenize
    assert superbpe_options(None) is None
    assert superbpe_options(superword.model, max_words=2).max_words == 2


# -- the trainer's verbs compose to train's result ----------------------------------------------


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCS, st.integers(0, 40), st.sampled_from(["gpt2", None, r"\w+|\W+"]))
def test_the_verbs_compose_to_train(docs, merges, pattern):
    keywords = dict(merges=merges, pretokenize=pattern, progress=False, workers=1)
    try:
        want = bytepair.train(docs, **keywords)
    except ValueError as exc:  # an empty corpus, a regex that matched nothing: the same refusal
        with pytest.raises(ValueError, match=str(exc).replace("(", r"\(").replace(")", r"\)")):
            trainer_for(TrainSpec(merges=merges, pretokenize=pattern, progress=False,
                                  counting=CountOptions(workers=1))).fit(docs)
        return
    spec = TrainSpec(merges=merges, pretokenize=pattern, progress=False,
                     counting=CountOptions(workers=1))
    assert trainer_for(spec).fit(docs) == want
    trainer = Trainer(spec)
    counts = trainer.count(docs)
    assert trainer.model(trainer.learn(counts)) == want


def test_a_spec_from_files_trains_the_model_of_train(tmp_path):
    path = tmp_path / "verses.txt"
    path.write_text("\n".join(_lines(400)) + "\n", encoding="utf-8")
    want = bytepair.train(path, vocab_size=600, per_line=True, special_tokens=["<s>"],
                          progress=False)
    spec = TrainSpec(vocab_size=600, special_tokens=("<s>",), reading=ReadOptions(per_line=True),
                     progress=False)
    assert type(trainer_for(spec)) is Trainer
    got = trainer_for(spec).fit(bytepair.Files(path, per_line=True))
    assert got == want and got.special_tokens == want.special_tokens
    superword = TrainSpec(vocab_size=700, reading=ReadOptions(per_line=True), progress=False,
                          superbpe=SuperBPEOptions(550))
    assert isinstance(trainer_for(superword), SuperBPETrainer)
    assert trainer_for(superword).fit(path) == bytepair.train(path, vocab_size=700, superbpe=550,
                                                           per_line=True, progress=False)


# -- hooks: once per chunk, in order ----------------------------------------------------------


class Recorder(Hook):
    def __init__(self, name, seen):
        self.name, self.seen = name, seen

    def start(self, rules, merges):
        self.seen.append((self.name, "start", len(rules), merges))

    def after_chunk(self, rules, learned, merges):
        self.seen.append((self.name, "chunk", len(rules), len(learned)))

    def finish(self, rules):
        self.seen.append((self.name, "finish", len(rules)))

    def close(self):
        self.seen.append((self.name, "close"))


def test_hooks_run_once_per_chunk_in_their_order(monkeypatch):
    monkeypatch.setattr(loop, "LEARN_CHUNK", 10)
    counts = bytepair.count(_lines(300), progress=False)
    seen = []
    trainer = Trainer(TrainSpec(merges=35, progress=False))
    rules = trainer.learn(counts, hooks=[Recorder("a", seen), Recorder("b", seen)])
    assert rules == bytepair.train(counts, merges=35, progress=False).merges
    chunks = [entry for entry in seen if entry[1] == "chunk"]
    assert [c[2:] for c in chunks[::2]] == [(10, 10), (20, 10), (30, 10), (35, 5)]
    assert [c[0] for c in chunks] == ["a", "b"] * 4
    assert seen[:2] == [("a", "start", 0, 35), ("b", "start", 0, 35)]
    assert seen[-4:] == [("a", "finish", 35), ("b", "finish", 35), ("a", "close"), ("b", "close")]


def test_a_hook_that_raises_stops_the_run_and_every_hook_is_closed(monkeypatch):
    monkeypatch.setattr(loop, "LEARN_CHUNK", 10)
    seen = []

    class Stop(Hook):
        def after_chunk(self, rules, learned, merges):
            if len(rules) >= 20:
                raise KeyboardInterrupt

    counts = bytepair.count(_lines(300), progress=False)
    with pytest.raises(KeyboardInterrupt):
        Trainer(TrainSpec(merges=35)).learn(counts, hooks=[Stop(), Recorder("r", seen)])
    assert ("r", "close") in seen and not any(entry[1] == "finish" for entry in seen)
    assert [entry[2] for entry in seen if entry[1] == "chunk"] == [10]


def test_the_checkpoint_hook_writes_the_rules_at_the_end(tmp_path):
    counts = bytepair.count(_lines(300), progress=False)
    spec = TrainSpec(merges=40, checkpoint=CheckpointOptions(tmp_path / "ckpt"), progress=False)
    tok = trainer_for(spec).fit(counts)
    assert bytepair.load(tmp_path / "ckpt" / "rules").merges == tok.merges


# -- SuperBPE with a bound on the counting tables ------------------------------------------------


def test_superbpe_with_count_memory_gives_the_same_model(tmp_path):
    path = tmp_path / "verses.txt"
    path.write_text("\n".join(_lines(500)) + "\n", encoding="utf-8")
    want = bytepair.train(path, vocab_size=700, superbpe=500, per_line=True, progress=False)
    got = bytepair.train(path, vocab_size=700, superbpe=500, per_line=True, progress=False,
                         count_memory=1 << 12, workers=2)
    assert got == want and got.model.stages == want.model.stages
