"""benches/count_file.py: bytepair's whole count process and gigatoken's reported
pre-tokenization take turns, and every run is recorded with its load."""

from __future__ import annotations

import json

import pytest

from benches import count_file


def test_the_two_take_turns_and_the_ratio_is_of_medians(tmp_path, monkeypatch):
    order = []
    monkeypatch.setattr(count_file, "bytepair_run",
                        lambda path, pattern, src: order.append("bytepair") or {"seconds": 2.0})
    monkeypatch.setattr(count_file, "gigatoken_run",
                        lambda path: order.append("gigatoken") or {"seconds": 4.0})
    text = tmp_path / "corpus.txt"
    text.write_text("hello world\n" * 10)
    out = tmp_path / "out.json"
    assert count_file.main(["--corpus", str(text), "--turns", "3", "--out", str(out)]) == 0
    assert order == ["bytepair", "gigatoken", "gigatoken", "bytepair", "bytepair", "gigatoken"]
    result = json.loads(out.read_text())
    assert result["ratio_median"] == 0.5 and len(result["runs"]["bytepair"]) == 3
    assert all("load_before" in run for run in result["runs"]["gigatoken"])


def test_a_real_run_reads_gigatokens_log(tmp_path):
    pytest.importorskip("gigatoken")
    text = tmp_path / "corpus.txt"
    text.write_text("hello world, hello there\n" * 200)
    run = count_file.gigatoken_run(text)
    assert 0 < run["seconds"] <= run["process_seconds"]
    assert count_file.bytepair_run(text, "cl100k")["file_bytes"] > 0


def test_turns_below_one_are_refused(capsys):
    with pytest.raises(SystemExit):
        count_file.main(["--turns", "0"])
    assert "--turns" in capsys.readouterr().err
