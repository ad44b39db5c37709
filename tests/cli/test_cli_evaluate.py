"""``bytepair evaluate``: the library's table on the terminal, JSON, plots and bad input."""

from __future__ import annotations

import builtins
import json

import pytest

import bytepair
from bytepair.evaluation.report import evaluate
from helpers import KJV, MULTILINGUAL, assert_bad_input, run


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "tok.json"
    bytepair.train(KJV, vocab_size=700, per_line=True, special_tokens=["<|end|>"],
                   progress=False).save(path)
    return path


@pytest.fixture()
def samples(tmp_path):
    lines = MULTILINGUAL.read_text("utf-8").splitlines()
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(lines[: len(lines) // 2]), "utf-8")
    b.write_text("\n".join(lines[len(lines) // 2:]), "utf-8")
    return a, b


def test_json_equals_the_library(capsys, model_path, samples):
    a, b = samples
    code, out, err = run(capsys, "evaluate", model_path, "--sample", f"{a}=first",
                         "--sample", f"{b}=second", "--sizes", "300,500", "--checks", "--json")
    assert code == 0, err
    expected = evaluate({str(model_path): bytepair.load(model_path)},
                        {"first": str(a), "second": str(b)}, sizes=[300, 500], checks=True)
    assert json.loads(out) == json.loads(expected.to_json())
    assert [p["vocab_size"] for p in json.loads(out)["parity"]] == [300, 500, 700]


def test_table_and_labels_shared_by_files(capsys, model_path, samples):
    a, b = samples
    code, out, err = run(capsys, "evaluate", model_path, "--sample", f"{a}=both",
                         "--sample", f"{b}=both", "--sample", a)
    assert code == 0, err
    assert out.splitlines()[1].split() == ["sample", "size", "tokens", "bytes/tok", "chars/tok",
                                           "tok/word", "used", "renyi2.5", "unused"]
    tok = bytepair.load(model_path)
    both = sum(len(tok.encode_ordinary(p.read_text("utf-8"))) for p in (a, b))
    row = next(line.split() for line in out.splitlines() if line.startswith("both "))
    assert int(row[2]) == both
    assert str(a) in out
    never = [line for line in out.splitlines() if line.startswith("learned tokens never produced on both: ")]
    assert len(never) == 1
    (row,) = evaluate(tok, {"both": [p.read_text("utf-8") for p in (a, b)]}).rows
    learned = [t for t in row["unused"] if t >= 256]
    assert never[0].split(": ")[1] == str(len(learned))
    assert never[0].split(": ")[2].startswith(f"{learned[0]}=")


def test_sizes_all_step(capsys, model_path, samples):
    code, out, err = run(capsys, "evaluate", model_path, "--sample", samples[0],
                         "--sizes", "all:100", "--json")
    assert code == 0, err
    assert [r["vocab_size"] for r in json.loads(out)["rows"]] == [300, 400, 500, 600, 700]


def test_plot_written(capsys, model_path, samples, tmp_path):
    pytest.importorskip("matplotlib")
    code, _, err = run(capsys, "evaluate", model_path, "--sample", samples[0],
                       "--sizes", "all:64", "--plot", tmp_path / "curves.png")
    assert code == 0, err
    data = (tmp_path / "curves.png").read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000


def test_plot_without_matplotlib_is_one_line(capsys, model_path, samples, tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    line = assert_bad_input(capsys, tmp_path, ["evaluate", model_path, "--sample", samples[0],
                                               "--plot", tmp_path / "c.png"], "matplotlib")
    assert line == "bytepair: error: --plot: needs matplotlib: pip install 'bytepair[plot]'"


@pytest.mark.parametrize("extra, words", [
    (["--sizes", "12,x"], ["--sizes", "12,x"]),
    (["--sizes", "all:0"], ["all:STEP"]),
    (["--sizes", "255"], ["--sizes: 255 is not a vocabulary size"]),
    (["--sample", "=lab"], ["--sample", "=lab"]),
    (["--sample", "missing.txt=lab"], ["missing.txt"]),
    (["--reference", "zz"], ["--reference: 'zz' is not the label"]),
    (["--plot", "c.gif"], ["--plot: 'c.gif'", ".png"]),
    (["--sample", "SAMPLE"], ["--sample: 'SAMPLE' is given twice"]),
    (["MODEL_PATH"], ["MODEL: 'MODEL_PATH' is given twice"]),
    (["--threads", "0"], ["--threads"]),
])
def test_bad_input_is_one_line(capsys, model_path, samples, tmp_path, extra, words, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = {"SAMPLE": str(samples[0]), "MODEL_PATH": str(model_path)}
    extra = [names.get(arg, arg) for arg in extra]
    words = [word.replace("SAMPLE", names["SAMPLE"]).replace("MODEL_PATH", names["MODEL_PATH"])
             for word in words]
    assert_bad_input(capsys, tmp_path, ["evaluate", model_path, "--sample", samples[0], *extra],
                     *words)


def test_nothing_to_do_and_plot_without_sample(capsys, model_path, tmp_path):
    assert_bad_input(capsys, tmp_path, ["evaluate", model_path], "--sample", "--checks")
    assert_bad_input(capsys, tmp_path, ["evaluate", model_path, "--checks", "--plot",
                                        tmp_path / "c.png"], "--plot", "--sample")


def test_checks_without_sample(capsys, model_path):
    code, out, err = run(capsys, "evaluate", model_path, "--checks")
    assert code == 0, err
    assert "unreachable tokens: 0" in out and "intermediate-only tokens:" in out
