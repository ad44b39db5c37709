"""benches/parity.py as a not-slower check: with --turns the versions take turns, every run is
recorded, each run's rules are compared with this tree's, and the row gives median and minimum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benches import parity

SRC = Path(__file__).resolve().parent.parent / "src"


def test_turns_alternate_the_lead_and_compare_every_run(monkeypatch):
    seconds = iter([5.0, 4.0, 3.0, 9.0, 6.0, 2.0])  # baseline, bytepair, bytepair, baseline, ...
    merges = {"bytepair": [["a", "b"]], "baseline": [["a", "c"]]}
    order = []

    def run(name, trainer, variant, args, data, locales, env):
        order.append(name)
        spent = next(seconds)
        return {"seconds": spent, "cpu_seconds": spent / 2, "peak_mib": 10.0 + len(order),
                "load_after": [1, 1, 1], "load_before": [1, 1, 1], "merges": merges[name]}

    monkeypatch.setattr(parity, "_run", run)
    args = type("Args", (), {"turns": 3})
    summary, runs = parity._turns([("baseline", {}), ("bytepair", None)], "base", args,
                                  Path("."), ["en"])
    assert order == ["baseline", "bytepair", "bytepair", "baseline", "baseline", "bytepair"]
    assert [(r["version"], r["turn"]) for r in runs] == [
        ("baseline", 1), ("bytepair", 1), ("bytepair", 2), ("baseline", 2), ("baseline", 3),
        ("bytepair", 3)]
    assert [r["equal_rules"] for r in runs] == [False, True, True, False, False, True]
    assert summary["baseline"] == {"seconds": 6.0, "min_seconds": 5.0, "cpu_seconds": 3.0,
                                   "min_cpu_seconds": 2.5, "peak_mib": 15.0,
                                   "equal_rules": False, "runs": 3}
    assert summary["bytepair"]["seconds"] == 3.0 and summary["bytepair"]["min_seconds"] == 2.0
    assert summary["against_baseline"]["seconds"] == 0.5
    assert summary["against_baseline"]["min_seconds"] == 0.4


def test_turns_against_itself_record_every_run_without_the_peer(tmp_path):
    data = tmp_path / "data"
    for part, text in (("train", "the cat sat on the mat\nthe hat\n"), ("dev", "the cat\n")):
        (data / part).mkdir(parents=True)
        for loc in ("en", "fr"):
            (data / part / f"{loc}.txt").write_text(text)
    out = tmp_path / "out.json"
    assert parity.main(["--merges", "4", "--variant", "ratio", "--data", str(data), "--locales",
                        "en,fr", "--baseline", str(SRC), "--turns", "2", "--no-peer",
                        "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert [r["version"] for r in row["runs"]] == ["baseline", "bytepair", "bytepair", "baseline"]
    assert all(r["equal_rules"] and r["seconds"] > 0 and r["cpu_seconds"] > 0 and r["peak_mib"] > 0
               and len(r["load_before"]) == len(r["load_after"]) == 3 for r in row["runs"])
    assert row["baseline"]["runs"] == row["bytepair"]["runs"] == 2
    assert "tokenizers" not in row and "merges" not in row["bytepair"]


def test_turns_below_one_are_refused(capsys):
    with pytest.raises(SystemExit):
        parity.main(["--turns", "0", "--no-save"])
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "error: --turns: must be at least 1, got 0")
