"""Damaged files: random byte flips, truncation and inflated declared sizes in model files,
count files and checkpoints.

Every case must end in one of two ways: the library's format error (one line; on the
command line, exit 2 and one line), or exactly the model (or table) of the undamaged file.
Never a different model with exit 0, never a traceback. A few hundred cases run in the
normal suite; ``BYTEPAIR_DAMAGE_CASES`` times more run behind the slow marker.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import zlib
from collections import Counter
from pathlib import Path

import pytest

import bytepair
from bytepair.counts import checkpoint, spill
from bytepair.split import fastsplit

from helpers import KJV, MULTILINGUAL, run

ENGLISH = KJV.read_text(encoding="utf-8")
WORLD = MULTILINGUAL.read_text(encoding="utf-8")
#: How many times more cases the slow run makes.
SLOW_FACTOR = int(os.environ.get("BYTEPAIR_DAMAGE_CASES", "10"))


# -- ways to damage bytes --

def flip(data: bytes, rng: random.Random) -> bytes:
    """One to three bytes changed (one bit, or a random byte)."""
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        at = rng.randrange(len(out))
        out[at] = out[at] ^ (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(256)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data))]


def damage(data: bytes, rng: random.Random) -> bytes:
    changed = flip(data, rng) if rng.random() < 0.7 else truncate(data, rng)
    return changed if changed != data else data[:-1]


def rewrite_count_header(data: bytes, rng: random.Random, *, copy: bool) -> bytes:
    """A count file whose header declares other sizes; with ``copy``, its checksummed copy in
    the body says the same (a header forged with care, not a flipped byte)."""
    line, body = data.split(b"\n", 1)
    header = json.loads(line)
    key = rng.choice(["pieces", "piece_bytes", "total"])
    header[key] = rng.choice([header[key] + 1, header[key] * 2 + 7, 2**rng.randrange(20, 70),
                              10**rng.randrange(10, 40), max(0, header[key] - 1)])
    new = json.dumps(header).encode("ascii")
    if not copy:
        return new + b"\n" + body
    inflated = zlib.decompress(body)
    return new + b"\n" + zlib.compress(new + b"\n" + inflated[len(line) + 1:])


def inflate_run_length(data: bytes, rng: random.Random) -> bytes:
    """A unit run whose first record declares a longer piece than it holds."""
    at = len(spill.MAGIC) + 8  # the first record's uint32 length
    out = bytearray(data)
    out[at:at + 4] = rng.choice([2**31, 2**32 - 1, 1 << rng.randrange(8, 30)]).to_bytes(4, "little")
    return bytes(out)


def assert_one_line(capsys, argv) -> tuple[int, str]:
    """Run the command line; a refusal must be exit 2 and one line."""
    code, out, err = run(capsys, *argv)
    if code != 0:
        assert code == 2, err
        assert len(err.splitlines()) == 1 and err.startswith("bytepair: error: "), err
        assert "Traceback" not in err
    return code, out


# -- model files --

@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Saved files of a tokenizer, a SuperBPE model, an imported tokenizer and a word model,
    with what each loads to."""
    root = tmp_path_factory.mktemp("models")
    lines = ENGLISH.splitlines()[:800] + WORLD.splitlines()
    made = {
        "tokenizer": bytepair.train(lines, vocab_size=400, per_line=True, pretokenize="cl100k",
                                    special_tokens=["<|end|>", "<pad>"], progress=False),
        "superbpe": bytepair.train(lines, vocab_size=420, superbpe=330, per_line=True,
                                   progress=False),
        "words": bytepair.train_words(Counter(" ".join(lines[:200]).split()), 60),
    }
    ids = list(range(made["tokenizer"].vocab_size))
    random.Random(1).shuffle(ids)
    made["mapped"] = bytepair.Tokenizer(made["tokenizer"].model,
                                        list(made["tokenizer"].special_tokens), ids=ids)
    out = {}
    for name, model in made.items():
        path = root / f"{name}.json"
        model.save(path)
        out[name] = (path.read_bytes(), model)
    return out


def model_cases(models, count: int, seed: int, tmp_path):
    rng = random.Random(seed)
    names = sorted(models)
    path = tmp_path / "damaged.json"
    refused = same = 0
    for _ in range(count):
        data, model = models[rng.choice(names)]
        path.write_bytes(damage(data, rng))
        try:
            loaded = bytepair.load(path, trust_pattern=True)
        except bytepair.ModelFormatError as exc:
            assert "\n" not in str(exc)
            refused += 1
            continue
        assert loaded == model  # the damage changed nothing the model holds
        same += 1
    return refused, same


def test_damaged_model_files(models, tmp_path):
    refused, same = model_cases(models, 200, 11, tmp_path)
    assert refused > 150


@pytest.mark.slow
def test_damaged_model_files_many(models, tmp_path):
    model_cases(models, 200 * SLOW_FACTOR, 12, tmp_path)


def test_damaged_model_files_on_the_command_line(capsys, models, tmp_path):
    rng = random.Random(13)
    data, tok = models["tokenizer"]
    path = tmp_path / "damaged.json"
    text = "In the beginning<|end|> God created 12345 things."
    expected = " ".join(map(str, tok.encode(text, allowed_special="all")))
    for _ in range(25):
        path.write_bytes(damage(data, rng))
        code, out = assert_one_line(capsys, ["encode", path, text, "--allow-special"])
        if code == 0:
            assert out.split() == expected.split()


# -- count files --

@pytest.fixture(scope="module")
def table(tmp_path_factory):
    counts = bytepair.count([ENGLISH[:30_000], WORLD], pretokenize="gpt2", progress=False)
    path = tmp_path_factory.mktemp("counts") / "table.counts"
    counts.save(path)
    return path.read_bytes(), counts


def count_cases(table, count: int, seed: int, tmp_path):
    rng = random.Random(seed)
    data, counts = table
    path = tmp_path / "damaged.counts"
    refused = 0
    for case in range(count):
        kind = case % 4
        if kind == 3:
            damaged = rewrite_count_header(data, rng, copy=rng.random() < 0.7)
        else:
            damaged = damage(data, rng)
        path.write_bytes(damaged)
        try:
            loaded = bytepair.PieceCounts.load(path)
        except bytepair.CountsFormatError as exc:
            assert "\n" not in str(exc)
            refused += 1
            continue
        assert loaded == counts
    return refused


def test_damaged_count_files(table, tmp_path):
    assert count_cases(table, 160, 21, tmp_path) > 150


@pytest.mark.slow
def test_damaged_count_files_many(table, tmp_path):
    count_cases(table, 160 * SLOW_FACTOR, 22, tmp_path)


def test_damaged_count_files_on_the_command_line(capsys, table, tmp_path):
    rng = random.Random(23)
    data, counts = table
    path, model = tmp_path / "damaged.counts", tmp_path / "model.json"
    expected = bytepair.train(counts, merges=40, progress=False)
    for case in range(20):
        damaged = rewrite_count_header(data, rng, copy=True) if case % 2 else damage(data, rng)
        path.write_bytes(damaged)
        model.unlink(missing_ok=True)
        code, _ = assert_one_line(capsys, ["train", "--counts", path, "--merges", 40, "-q",
                                           "-o", model])
        if code == 0:
            assert bytepair.load(model) == expected
        else:
            assert not model.exists()


# -- checkpoints --

UNIT_BYTES = 1 << 13


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """A corpus; a checkpoint stopped while counting (units only) and one with counts and
    the rules of 40 merges; the model file of an uninterrupted run to 80 merges."""
    root = tmp_path_factory.mktemp("checkpoints")
    corpus = root / "corpus.txt"
    corpus.write_text(ENGLISH[:40_000] + WORLD, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(checkpoint, "UNIT_BYTES", UNIT_BYTES)
        whole = root / "whole.json"
        assert main_quietly("train", corpus, "--merges", 80, "-q", "-o", whole) == 0
        with_rules = root / "with-rules"
        bytepair.train(corpus, merges=40, checkpoint=with_rules, progress=False)
        units = root / "units"
        real, saved = checkpoint.save_table, []

        def stop_at_the_fourth(path, table):
            if len(saved) == 3:
                raise KeyboardInterrupt
            real(path, table)
            saved.append(path)

        patch.setattr(checkpoint, "save_table", stop_at_the_fourth)
        with pytest.raises(KeyboardInterrupt):
            bytepair.train(corpus, merges=80, checkpoint=units, workers=1, progress=False)
    assert len(list((units / "units").glob("*.run"))) == 3
    return corpus, {"with-rules": with_rules, "units": units}, whole.read_bytes()


def main_quietly(*argv) -> int:
    from bytepair.cli.main import main

    return main([str(a) for a in argv])


def checkpoint_cases(capsys, checkpoints, count: int, seed: int, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint, "UNIT_BYTES", UNIT_BYTES)
    rng = random.Random(seed)
    corpus, saved, whole = checkpoints
    copy, out = tmp_path / "checkpoint", tmp_path / "model.json"
    refused = same = 0
    for _ in range(count):
        kind = rng.choice(sorted(saved))
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(saved[kind], copy)
        files = sorted(p for p in copy.rglob("*") if p.is_file())
        target = rng.choice(files)
        data = target.read_bytes()
        if target.suffix == ".run" and rng.random() < 0.3:
            target.write_bytes(inflate_run_length(data, rng))
        elif target.name == "counts" and rng.random() < 0.3:
            target.write_bytes(rewrite_count_header(data, rng, copy=True))
        else:
            target.write_bytes(damage(data, rng))
        out.unlink(missing_ok=True)
        code, _ = assert_one_line(capsys, ["train", corpus, "--merges", 80, "--checkpoint", copy,
                                           "--resume", "-q", "-o", out])
        if code == 0:
            assert out.read_bytes() == whole, (kind, target.name)
            same += 1
        else:
            assert not out.exists()
            refused += 1
    return refused, same


@pytest.mark.skipif(not fastsplit.available(), reason="the checkpoints are stopped inside the compiled counting path (pure-Python install)")
def test_damaged_checkpoints(capsys, checkpoints, tmp_path, monkeypatch):
    refused, same = checkpoint_cases(capsys, checkpoints, 30, 31, tmp_path, monkeypatch)
    assert refused and same  # damaged units are counted again; damaged rules are refused


@pytest.mark.skipif(not fastsplit.available(), reason="the checkpoints are stopped inside the compiled counting path (pure-Python install)")
@pytest.mark.slow
def test_damaged_checkpoints_many(capsys, checkpoints, tmp_path, monkeypatch):
    checkpoint_cases(capsys, checkpoints, 40 * SLOW_FACTOR, 32, tmp_path, monkeypatch)


@pytest.mark.skipif(not fastsplit.available(), reason="the checkpoints are stopped inside the compiled counting path (pure-Python install)")
def test_every_unit_is_counted_again_when_damaged(capsys, checkpoints, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint, "UNIT_BYTES", UNIT_BYTES)
    corpus, saved, whole = checkpoints
    copy, out = tmp_path / "checkpoint", tmp_path / "model.json"
    shutil.copytree(saved["units"], copy)
    for run_file in (copy / "units").glob("*.run"):
        data = bytearray(run_file.read_bytes())
        data[-1] ^= 1  # the last piece's last byte: still a valid run, another count table
        run_file.write_bytes(bytes(data))
    code, _ = assert_one_line(capsys, ["train", corpus, "--merges", 80, "--checkpoint", copy,
                                       "--resume", "-q", "-o", out])
    assert code == 0 and out.read_bytes() == whole
