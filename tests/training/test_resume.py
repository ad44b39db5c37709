"""Checkpoints: a count or a training run killed part way and resumed gives the
same table and the same model file, byte for byte, as an uninterrupted run.

The runs are real processes of the command line, killed with SIGKILL or
SIGTERM at a known moment: a script slows one step down (after a unit of the
corpus is kept, after the rules so far are written) and says so on stdout.
"""

from __future__ import annotations

import json
import shlex
import shutil
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import bytepair
from bytepair.learn import loop
from bytepair.model.models import ByteModel
from bytepair.training import trainer
from bytepair.counts import checkpoint

from helpers import KJV, MULTILINGUAL, assert_bad_input, needs_compiled, run, sampled

SRC = str(Path(bytepair.__file__).parents[1])
UNIT_BYTES = 1 << 14

# mode: "plain" (say UNIT/RULES as they are kept), "stop_count" (stop after the 3rd
# unit until a signal comes), "stop_learn" (after the 3rd write of the rules so far).
# A stopped counting thread waits for SIGTERM's handler, not for ever: after a signal
# the threads end their units (as real units do in a second or so), then the process.
CLI = textwrap.dedent("""
    import os, sys, threading, time
    import bytepair.counts.checkpoint as checkpoint
    import bytepair.learn.loop as loop
    import bytepair.training.trainer as trainer
    import bytepair.cli.main as cli
    from bytepair.model.models import ByteModel
    from bytepair.cli.main import main

    mode = sys.argv[1]
    checkpoint.UNIT_BYTES = %d
    trainer.CHECKPOINT_SECONDS = 0
    loop.LEARN_CHUNK = 7
    units, rules = [], []
    real_run, real_save = checkpoint.save_table, ByteModel.save

    signalled, real_terminate = threading.Event(), cli._terminate

    def terminate(signum, frame):
        signalled.set()
        real_terminate(signum, frame)

    cli._terminate = terminate  # main() installs it, and sets its owner, by this name

    def save_table(*args):
        real_run(*args)
        units.append(1)
        os.write(1, b"UNIT\\n")  # one write(2): the threads' lines never mix
        if mode == "stop_count" and len(units) >= 3:
            signalled.wait(60)

    def save(self, path):
        real_save(self, path)
        rules.append(1)
        os.write(1, b"RULES\\n")
        if mode == "stop_learn" and len(rules) == 3:
            time.sleep(60)

    checkpoint.save_table = save_table
    ByteModel.save = save
    sys.exit(main(sys.argv[2:]))
""" % UNIT_BYTES)


def cli(mode: str, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CLI, mode, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC})


def finish(*args) -> list[str]:
    """Run the command line to the end; the lines it said (UNIT, RULES)."""
    with cli("plain", *args) as process:
        out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return out.split()


def interrupt(mode: str, sig: int, *args) -> None:
    """Start the command line, wait until it stops where ``mode`` says, send ``sig``."""
    with cli(mode, *args) as process:
        try:
            said = 0
            while said < 3:
                line = process.stdout.readline()
                assert line, process.stderr.read()
                said += line == ("UNIT\n" if mode == "stop_count" else "RULES\n")
            process.send_signal(sig)
            process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 128 + sig)


@pytest.fixture
def corpus(tmp_path):
    directory = tmp_path / "corpus"
    directory.mkdir()
    for path in (KJV, MULTILINGUAL):
        (directory / path.name).write_bytes(path.read_bytes())
    return directory


TRAIN = ("train", "--merges", 300, "--workers", 2, "-q")


# The hook that holds counting after its third unit is reached on the compiled path only.
@needs_compiled
@pytest.mark.parametrize("sig", sampled([signal.SIGKILL, signal.SIGTERM], keep={signal.SIGKILL}),
                         ids=["SIGKILL", "SIGTERM"])
def test_training_killed_while_counting_resumes_to_the_same_model(tmp_path, corpus, sig):
    finish(*TRAIN, corpus, "-o", tmp_path / "whole.json")
    saved = tmp_path / "checkpoint"
    interrupt("stop_count", sig, *TRAIN, corpus, "--checkpoint", saved, "-o", tmp_path / "model.json")
    assert not (tmp_path / "model.json").exists()
    assert not (saved / "counts").exists()
    kept = len(list((saved / "units").glob("*.run")))  # each with its .sha256 beside it
    assert kept >= 3

    said = finish(*TRAIN, corpus, "--checkpoint", saved, "--resume", "-o", tmp_path / "model.json")
    units = len(checkpoint_units(corpus))
    assert said.count("UNIT") == units - kept  # only the units not kept are counted again
    assert (tmp_path / "model.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


def checkpoint_units(corpus: Path) -> list:
    return bytepair.Files(corpus).parts(UNIT_BYTES, cut_documents=True)


@pytest.mark.parametrize("sig", sampled([signal.SIGKILL, signal.SIGTERM], keep={signal.SIGTERM}),
                         ids=["SIGKILL", "SIGTERM"])
def test_training_killed_while_learning_resumes_to_the_same_model(tmp_path, corpus, sig):
    finish(*TRAIN, corpus, "--special", "<|end|>", "-o", tmp_path / "whole.json")
    saved = tmp_path / "checkpoint"
    interrupt("stop_learn", sig, *TRAIN, corpus, "--special", "<|end|>", "--checkpoint", saved,
              "-o", tmp_path / "model.json")
    assert not (tmp_path / "model.json").exists()
    partial = bytepair.load(saved / "rules")
    assert 0 < len(partial.merges) < 300  # stopped part way through learning

    said = finish(*TRAIN, corpus, "--special", "<|end|>", "--checkpoint", saved, "--resume",
                  "-o", tmp_path / "model.json")
    assert "UNIT" not in said  # the table was kept: nothing is counted again
    assert (tmp_path / "model.json").read_bytes() == (tmp_path / "whole.json").read_bytes()


def test_count_killed_resumes_to_the_same_table(tmp_path, corpus):
    args = ("count", corpus, "--per-line", "--workers", 2, "-q")
    finish(*args, "-o", tmp_path / "whole")
    saved = tmp_path / "checkpoint"
    interrupt("stop_count", signal.SIGKILL, *args, "--checkpoint", saved, "-o", tmp_path / "table")
    assert not (tmp_path / "table").exists()
    finish(*args, "--checkpoint", saved, "--resume", "-o", tmp_path / "table")
    assert (tmp_path / "table").read_bytes() == (tmp_path / "whole").read_bytes()


def test_resume_to_a_larger_size_equals_training_to_it(tmp_path, corpus, monkeypatch):
    monkeypatch.setattr(checkpoint, "UNIT_BYTES", UNIT_BYTES)
    saved = tmp_path / "checkpoint"
    small = bytepair.train(corpus, merges=100, checkpoint=saved)
    assert small == bytepair.train(corpus, merges=100)
    larger = bytepair.train(corpus, merges=250, checkpoint=saved, resume=True)
    assert larger == bytepair.train(corpus, merges=250)


def test_count_tables_checkpoint_the_learning(tmp_path, monkeypatch):
    monkeypatch.setattr(trainer, "CHECKPOINT_SECONDS", 0)
    monkeypatch.setattr(loop, "LEARN_CHUNK", 10)
    table = bytepair.count(KJV)
    saved = tmp_path / "checkpoint"
    whole = bytepair.train(table, merges=120)
    # Stop after the rules were written twice, as a crash would.
    writes = []
    real = ByteModel.save

    def save(self, path):
        real(self, path)
        writes.append(1)
        if len(writes) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(ByteModel, "save", save)
    with pytest.raises(KeyboardInterrupt):
        bytepair.train(table, merges=120, checkpoint=saved)
    monkeypatch.setattr(ByteModel, "save", real)
    assert len(bytepair.load(saved / "rules").merges) == 20
    assert bytepair.train(table, merges=120, checkpoint=saved, resume=True) == whole
    with pytest.raises(ValueError, match="count tables differ"):
        bytepair.train(bytepair.count(MULTILINGUAL), merges=120, checkpoint=saved, resume=True)


def make_checkpoint(tmp_path, corpus) -> Path:
    saved = tmp_path / "checkpoint"
    bytepair.train(corpus, merges=20, checkpoint=saved)
    return saved


@pytest.mark.parametrize("change, words", [
    (("--pretokenize", "cl100k"), ("pattern gpt2, not cl100k",)),
    (("--min-frequency", "3"), ("min_frequency 1, not 3",)),
    (("--per-line",), ("per_line False, not True",)),
])
def test_a_different_run_is_refused(capsys, tmp_path, corpus, change, words):
    saved = make_checkpoint(tmp_path, corpus)
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--checkpoint", saved,
                                        "--resume", *change, "-o", tmp_path / "m.json"],
                     "checkpoint", *words)


def test_a_changed_corpus_is_refused(capsys, tmp_path, corpus):
    saved = make_checkpoint(tmp_path, corpus)
    with open(corpus / KJV.name, "a") as handle:
        handle.write("And one more line.\n")
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--checkpoint", saved,
                                        "--resume", "-o", tmp_path / "m.json"],
                     "checkpoint", KJV.name, "changed since the checkpoint")
    (corpus / MULTILINGUAL.name).unlink()
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--checkpoint", saved,
                                        "--resume", "-o", tmp_path / "m.json"],
                     "checkpoint", MULTILINGUAL.name, "no longer in the corpus")


def test_checkpoint_misuse_is_one_line(capsys, tmp_path, corpus):
    saved = make_checkpoint(tmp_path, corpus)
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--checkpoint", saved,
                                        "-o", tmp_path / "m.json"],
                     "already holds a checkpoint", "--resume")
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--resume",
                                        "-o", tmp_path / "m.json"], "--resume", "--checkpoint")
    (tmp_path / "file").write_text("x")
    assert_bad_input(capsys, tmp_path, ["count", corpus, "--checkpoint", tmp_path / "file",
                                        "-o", tmp_path / "c"], "not a directory")
    manifest = saved / "checkpoint.json"
    manifest.write_text(json.dumps({"format": "something else"}))
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--checkpoint", saved,
                                        "--resume", "-o", tmp_path / "m.json"],
                     "not a checkpoint this bytepair reads")


def test_a_document_stream_cannot_be_checkpointed(tmp_path):
    with pytest.raises(ValueError, match="only files can be resumed"):
        bytepair.train(iter(["some text"]), merges=5, checkpoint=tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_resume_without_a_checkpoint_starts_one(capsys, tmp_path, corpus):
    code, _, err = run(capsys, "count", corpus, "--checkpoint", tmp_path / "new", "--resume",
                       "-q", "-o", tmp_path / "table")
    assert code == 0, err
    assert bytepair.PieceCounts.load(tmp_path / "table") == bytepair.count(corpus)
    assert sorted(os.listdir(tmp_path / "new")) == ["checkpoint.json", "counts"]


def test_readme_commands_run_as_written(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_bytes(KJV.read_bytes())
    commands = []
    for line in (Path(__file__).parents[2] / "README.md").read_text("utf-8").splitlines():
        if line.startswith("bytepair train corpus/ --vocab-size 32768 --count-memory"):
            commands.append(shlex.split(line))
    assert len(commands) == 2 and "--resume" in commands[1]
    code, _, err = run(capsys, *commands[0][1:], "-q")
    assert code == 0, err
    first = (tmp_path / "model.json").read_bytes()
    (tmp_path / "model.json").unlink()
    code, _, err = run(capsys, *commands[1][1:], "-q")
    assert code == 0, err
    assert (tmp_path / "model.json").read_bytes() == first


@pytest.mark.parametrize("workers", sampled([1, 2, 3, 4], keep={3}))
@pytest.mark.parametrize("pattern", sampled(["gpt2", r"\w+|\W+", None], keep={"gpt2"}),
                         ids=["gpt2", "regex", "bytes"])
@pytest.mark.parametrize("per_line", [False, True], ids=["files", "lines"])
def test_checkpointed_count_equals_a_plain_count(tmp_path, corpus, monkeypatch, workers, pattern,
                                                 per_line):
    monkeypatch.setattr(checkpoint, "UNIT_BYTES", UNIT_BYTES)
    plain = bytepair.count(corpus, pretokenize=pattern, per_line=per_line, workers=1)
    saved = tmp_path / "checkpoint"
    assert bytepair.count(corpus, pretokenize=pattern, per_line=per_line, workers=workers,
                          checkpoint=saved) == plain
    # Interrupted after its first unit, then resumed: the same sum again.
    shutil.rmtree(saved)
    real, kept, lock = checkpoint.save_table, [], threading.Lock()

    def save_table(path, table):
        with lock:  # the threads race for the first unit: one wins
            kept.append(path)
            first = len(kept) == 1
        if not first:
            raise KeyboardInterrupt
        real(path, table)

    monkeypatch.setattr(checkpoint, "save_table", save_table)
    with pytest.raises(KeyboardInterrupt):
        bytepair.count(corpus, pretokenize=pattern, per_line=per_line, workers=workers,
                       checkpoint=saved)
    monkeypatch.setattr(checkpoint, "save_table", real)
    assert [path.name for path in (saved / "units").glob("*.run")] == [kept[0].name]
    assert bytepair.count(corpus, pretokenize=pattern, per_line=per_line, workers=workers,
                          checkpoint=saved, resume=True) == plain
