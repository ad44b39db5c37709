"""Parity-aware training through the one merge loop: a checkpoint resumes it to the model of an
uninterrupted run, byte for byte; ``init`` continues a parity model; ``max_memory`` stops it."""

import os
import signal
import subprocess
import sys
import textwrap
from array import array
from pathlib import Path

import pytest

import bytepair
from bytepair.learn import budget, loop, parity, parity_naive
from bytepair.model.models import ByteModel
from bytepair.training import trainer

from helpers import KJV, MULTILINGUAL, byte_token, run

SRC = str(Path(bytepair.__file__).parents[1])
VERSES = KJV.read_text(encoding="utf-8").splitlines()
MIXED = MULTILINGUAL.read_text(encoding="utf-8").splitlines()
TEXTS = {"en": VERSES[:150], "mx": MIXED, "few": VERSES[900:915]}
DEV = {"en": VERSES[300:320], "mx": MIXED[::3], "few": VERSES[950:960]}
MERGES = 120

#: Options of a run: each variant, the choice's window, the global phase, the tie order, and a
#: language that runs out of pairs part way (min_frequency) while the window remembers it.
RUNS = {
    "base-dev": dict(parity="base", dev=DEV),
    "base-ratio": dict(parity="base", ratio={"en": 1.0, "mx": 1.6, "few": 1.0}),
    "window": dict(parity="window", dev=DEV, window_size=6, alpha=1.0),
    "window-ratio-exhausted": dict(parity="window", ratio={"en": 1.0, "mx": 1.3, "few": 0.5},
                                   window_size=5, alpha=1.2, min_frequency=3),
    "global": dict(parity="base", dev=DEV, global_merges=30),
    "tokenizers": dict(parity="window", dev=DEV, window_size=4, ties="tokenizers"),
}


def counted(texts: dict) -> dict:
    return {language: bytepair.count(lines, progress=False) for language, lines in texts.items()}


def saved_bytes(tokenizer, path: Path) -> bytes:
    tokenizer.save(path)
    return path.read_bytes()


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("stop", ["after the rules", "between the history and the rules"])
def test_a_stopped_parity_run_resumes_to_the_uninterrupted_model(tmp_path, monkeypatch, run, stop):
    options = dict(RUNS[run])
    if "dev" in options:
        options["dev"] = counted(options["dev"])
    corpus = counted(TEXTS)
    whole = bytepair.train(corpus, merges=MERGES, progress=False, **options)
    monkeypatch.setattr(trainer, "CHECKPOINT_SECONDS", 0)
    monkeypatch.setattr(loop, "LEARN_CHUNK", 7)
    real_save, saves = ByteModel.save, []

    def save(model, path):
        saves.append(path)
        if len(saves) == 3 and stop != "after the rules":
            raise KeyboardInterrupt  # the history is written, the rules are not
        real_save(model, path)
        if len(saves) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(ByteModel, "save", save)
    directory = tmp_path / "checkpoint"
    with pytest.raises(KeyboardInterrupt):
        bytepair.train(corpus, merges=MERGES, progress=False, checkpoint=directory, **options)
    monkeypatch.setattr(ByteModel, "save", real_save)
    held = len(bytepair.load(directory / "rules").merges)
    assert held == (21 if stop == "after the rules" else 14)

    resumed = bytepair.train(corpus, merges=MERGES, progress=False, checkpoint=directory,
                             resume=True, **options)
    assert saved_bytes(resumed, tmp_path / "resumed.json") == saved_bytes(whole, tmp_path / "whole.json")
    assert len(whole.merges) > held


def test_a_changed_language_is_named_when_resuming(tmp_path):
    corpus, dev = counted(TEXTS), counted(DEV)
    bytepair.train(corpus, merges=20, parity="base", dev=dev, progress=False,
                   checkpoint=tmp_path / "c")
    changed = {**corpus, "mx": bytepair.count(MIXED[:-1], progress=False)}
    with pytest.raises(ValueError, match="^checkpoint .*: the training text of mx differs"):
        bytepair.train(changed, merges=30, parity="base", dev=dev, progress=False,
                       checkpoint=tmp_path / "c", resume=True)
    with pytest.raises(ValueError, match="^checkpoint .*: the checkpoint was made with parity"):
        bytepair.train(corpus, merges=30, parity="window", dev=dev, progress=False,
                       checkpoint=tmp_path / "c", resume=True)
    with pytest.raises(ValueError, match="^checkpoint: only files can be resumed"):
        bytepair.train(TEXTS, merges=30, parity="base", dev=dev, progress=False,
                       checkpoint=tmp_path / "d")


# A run killed while learning (SIGKILL: no handler runs), then resumed from the command line.
CLI = textwrap.dedent("""
    import os, sys, time
    import bytepair.learn.loop as loop
    import bytepair.training.trainer as trainer
    from bytepair.model.models import ByteModel
    from bytepair.cli.main import main

    trainer.CHECKPOINT_SECONDS = 0
    loop.LEARN_CHUNK = 7
    real_save, saves = ByteModel.save, []

    def save(self, path):
        real_save(self, path)
        saves.append(1)
        os.write(1, b"RULES\\n")
        if sys.argv[1] == "stop" and len(saves) == 3:
            time.sleep(60)

    ByteModel.save = save
    sys.exit(main(sys.argv[2:]))
""")


def test_a_killed_parity_run_resumes_to_the_same_file(tmp_path):
    arguments = ["train", "--merges", MERGES, "--parity", "window", "--window-size", 5,
                 "--per-line", "--workers", 1, "-q"]
    for language, lines in TEXTS.items():
        (tmp_path / f"{language}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (tmp_path / f"{language}.dev").write_text("\n".join(DEV[language]) + "\n", encoding="utf-8")
        arguments += ["--language", f"{language}={tmp_path / f'{language}.txt'}",
                      "--dev", f"{language}={tmp_path / f'{language}.dev'}"]

    def cli(mode: str, *extra) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", CLI, mode, *map(str, arguments + list(extra))],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": SRC})

    with cli("plain", "-o", tmp_path / "whole.json") as process:
        assert process.wait(300) == 0, process.stderr.read()
    saved = tmp_path / "checkpoint"
    with cli("stop", "--checkpoint", saved, "-o", tmp_path / "model.json") as process:
        try:
            for _ in range(3):
                assert process.stdout.readline() == "RULES\n", process.stderr.read()
            process.send_signal(signal.SIGKILL)
            process.wait(60)
        finally:
            process.kill()
    assert not (tmp_path / "model.json").exists()
    assert 0 < len(bytepair.load(saved / "rules").merges) < MERGES
    with cli("plain", "--checkpoint", saved, "--resume", "-o", tmp_path / "model.json") as process:
        assert process.wait(300) == 0, process.stderr.read()
    assert (tmp_path / "model.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


# -- init: a parity model continued ---------------------------------------------------------


@pytest.mark.parametrize("run", ["base-dev", "base-ratio", "global"])
def test_init_with_the_first_rules_of_a_base_run_goes_on_as_the_run(run):
    # The choice of "base" depends only on the lengths, which the engine measures again from
    # the text as init's rules leave it (ratios: from its bytes), so the run goes on unchanged.
    options = RUNS[run]
    whole = bytepair.train(TEXTS, merges=MERGES, progress=False, **options)
    first = bytepair.train(TEXTS, merges=45, progress=False, **options)
    assert first.merges == whole.merges[:45]
    assert bytepair.train(TEXTS, merges=MERGES, progress=False, init=first, **options) == whole


def _pieces(lines: list[str]) -> tuple[list[bytes], list[int]]:
    counts = bytepair.count(lines, progress=False)
    return list(counts), list(counts.values())


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_init_is_training_on_from_its_rules(backend):
    # What init means: its rules are the first rules; every text is encoded by them; the
    # choice of language starts afresh (no window yet). So the engine equals the naive
    # reference run on the encoded texts, numbering tokens after init's.
    start = bytepair.train(VERSES[:400], merges=60, progress=False).model
    languages, dev = [_pieces(TEXTS[k]) for k in TEXTS], [_pieces(DEV[k]) for k in TEXTS]

    def encoded(corpus):
        pieces, weights = corpus
        return [array("I", start.encode_piece(p)) for p in pieces], weights

    options = dict(variant="window", window_size=5, alpha=1.0)
    want = parity_naive.fit([encoded(c) for c in languages], 70,
                            lambda left, right, rank: byte_token(left, right, rank + 60),
                            dev=[encoded(c) for c in dev], **options)
    engine = parity.ParityEngine(
        [([bytes(p) for p in pieces], weights) for pieces, weights in languages],
        dev=[([bytes(p) for p in pieces], weights) for pieces, weights in dev],
        backend=backend, start=start, **options)
    got = engine.steps(70)
    engine._check()
    assert [(m.left, m.right, m.token_id, m.count, m.language) for m in got] == \
        [(m.left, m.right, m.token_id, m.count, m.language) for m in want]
    assert got[0].rank == 60 and engine.rank == 60 + len(got)


def test_init_must_share_the_pattern():
    first = bytepair.train(TEXTS, merges=10, parity="base", dev=DEV, pretokenize="whitespace",
                           progress=False)
    with pytest.raises(ValueError, match="^init was trained with a different pretokenize pattern"):
        bytepair.train(TEXTS, merges=20, parity="base", dev=DEV, pretokenize="gpt2", init=first)


# -- max_memory ----------------------------------------------------------------------------


def test_max_memory_stops_the_merge_loop_in_one_line(monkeypatch):
    real = budget.resident_bytes

    def resident() -> int:  # past the limit only once merging has begun
        return 2**40 if sys._getframe(1).f_code.co_name == "check_still_fits" else real()

    monkeypatch.setattr(budget, "resident_bytes", resident)
    monkeypatch.setattr(loop, "LEARN_CHUNK", 7)
    with pytest.raises(bytepair.MemoryLimitError,
                       match=r"^max_memory: training passed the limit of 64 GiB after 7 merges"):
        bytepair.train(TEXTS, merges=MERGES, parity="window", dev=DEV, max_memory="64GiB",
                       progress=False)


def test_max_memory_refuses_engines_that_do_not_fit(monkeypatch):
    monkeypatch.setattr(budget, "engine_bytes", lambda positions, pieces, merges=0: 2**41)
    with pytest.raises(bytepair.MemoryLimitError, match=r"^max_memory: training needs about .* for "
                                                        r"the merge engine"):
        bytepair.train(TEXTS, merges=MERGES, parity="base", dev=DEV, max_memory="64GiB",
                       progress=False)


def test_max_memory_on_the_command_line_is_one_line_and_writes_nothing(tmp_path, capsys):

    for language, lines in TEXTS.items():
        (tmp_path / f"{language}.txt").write_text("\n".join(lines), encoding="utf-8")
    languages = [a for k in TEXTS for a in ("--language", f"{k}={tmp_path / f'{k}.txt'}")]
    code, out, err = run(capsys, "train", "--merges", "50", "--parity", "base", "--ratio", "en=1",
                         "--ratio", "mx=1", "--ratio", "few=1", *languages, "--max-memory", "1MiB",
                         "-o", str(tmp_path / "model.json"))
    assert code != 0 and err.count("\n") == 1 and "max_memory" in err.replace("-", "_")
    assert not (tmp_path / "model.json").exists()
