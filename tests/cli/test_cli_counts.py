"""``bytepair count`` and ``bytepair train --counts``: results and clean failures."""

from __future__ import annotations

import json
import os
import subprocess
import zlib
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import regex

import bytepair
from bytepair import PieceCounts
from bytepair.cli.main import main
from helpers import damaged_parquet


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([os.fspath(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def shards(tmp_path, real_text):
    lines = real_text.decode().splitlines()[:2000]
    paths = []
    for i in range(3):
        path = tmp_path / f"shard-{i}.txt"
        path.write_text("\n".join(lines[i::3]) + "\n")
        paths.append(path)
    return paths


@pytest.mark.parametrize("pretokenize", [[], ["--pretokenize", "whitespace"], ["--pretokenize", "none"]])
def test_count_per_shard_then_train_equals_train(capsys, tmp_path, shards, pretokenize):
    tables = []
    for i, shard in enumerate(shards):
        table = tmp_path / f"{i}.counts"
        code, out, err = run(capsys, "count", shard, "--per-line", *pretokenize, "-o", table)
        assert code == 0, err
        assert "pieces" in err
        tables.append(table)
    code, _, err = run(capsys, "train", "--counts", *tables, "--vocab-size", "420",
                       "--special", "<|end|>", "-o", tmp_path / "from-counts.json")
    assert code == 0, err
    code, _, err = run(capsys, "train", *shards, "--per-line", *pretokenize, "--vocab-size", "420",
                       "--special", "<|end|>", "-q", "-o", tmp_path / "direct.json")
    assert code == 0, err
    assert bytepair.load(tmp_path / "from-counts.json") == bytepair.load(tmp_path / "direct.json")


def test_count_writes_the_library_table(capsys, tmp_path, shards):
    code, _, err = run(capsys, "count", *shards, "--per-line", "--workers", "2", "-o", tmp_path / "c")
    assert code == 0, err
    assert PieceCounts.load(tmp_path / "c") == bytepair.count(shards, per_line=True, progress=False)


def test_count_parquet_column(capsys, tmp_path, real_text):
    lines = real_text.decode().splitlines()[:500]
    pq.write_table(pa.table({"content": lines}), tmp_path / "d.parquet", row_group_size=64)
    (tmp_path / "d.txt").write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "count", tmp_path / "d.parquet", "--text-column", "content",
                       "-o", tmp_path / "p.counts")
    assert code == 0, err
    code, _, err = run(capsys, "count", tmp_path / "d.txt", "--per-line", "-o", tmp_path / "t.counts")
    assert code == 0, err
    assert PieceCounts.load(tmp_path / "p.counts") == PieceCounts.load(tmp_path / "t.counts")


def _fails_cleanly(capsys, output, *argv, match):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("bytepair: error: ") and err.count("\n") == 1, err
    assert match in err, err
    assert not output.exists()
    assert [p.name for p in output.parent.iterdir() if p.name.startswith(f".{output.name}")] == []


def test_unknown_column(capsys, tmp_path):
    pq.write_table(pa.table({"content": ["a"], "url": ["u"]}), tmp_path / "d.parquet")
    out = tmp_path / "c.counts"
    _fails_cleanly(capsys, out, "count", tmp_path / "d.parquet", "-o", out,
                   match="no column 'text'; the columns are 'content', 'url'")
    _fails_cleanly(capsys, out, "count", tmp_path / "d.parquet", "--text-column", "body", "-o", out,
                   match="no column 'body'")


def test_text_column_without_parquet_input(capsys, tmp_path, shards):
    out = tmp_path / "c.counts"
    _fails_cleanly(capsys, out, "count", shards[0], "--text-column", "body", "-o", out,
                   match="--text-column: no input is a Parquet file")


def test_non_parquet_file_named_parquet(capsys, tmp_path):
    (tmp_path / "d.parquet").write_text("hello\n")
    out = tmp_path / "c.counts"
    _fails_cleanly(capsys, out, "count", tmp_path / "d.parquet", "-o", out, match="not a Parquet file")
    _fails_cleanly(capsys, out, "train", tmp_path / "d.parquet", "--merges", "3", "-o", out,
                   match="not a Parquet file")


def test_mixed_patterns(capsys, tmp_path, shards):
    assert run(capsys, "count", shards[0], "-o", tmp_path / "a.counts")[0] == 0
    assert run(capsys, "count", shards[1], "--pretokenize", "none", "-o", tmp_path / "b.counts")[0] == 0
    out = tmp_path / "m.json"
    _fails_cleanly(capsys, out, "train", "--counts", tmp_path / "a.counts", tmp_path / "b.counts",
                   "--merges", "5", "-o", out, match="different patterns: gpt2 and none")
    _fails_cleanly(capsys, out, "train", "--counts", tmp_path / "a.counts", "--pretokenize", "none",
                   "--merges", "5", "-o", out, match="the counts were cut with gpt2, not none")


def test_corrupt_counts_file(capsys, tmp_path, shards):
    table = tmp_path / "a.counts"
    assert run(capsys, "count", shards[0], "-o", table)[0] == 0
    table.write_bytes(table.read_bytes()[:-10])
    out = tmp_path / "m.json"
    _fails_cleanly(capsys, out, "train", "--counts", table, "--merges", "5", "-o", out,
                   match=f"{str(table)!r} is corrupt")
    _fails_cleanly(capsys, out, "train", "--counts", shards[0], "--merges", "5", "-o", out,
                   match="is not a bytepair piece-count table")


def test_counts_and_files_are_exclusive(capsys, tmp_path, shards):
    assert run(capsys, "count", shards[0], "-o", tmp_path / "a.counts")[0] == 0
    out = tmp_path / "m.json"
    for argv, message in [([shards[1], "--counts", tmp_path / "a.counts"], "argument --counts: not allowed with FILE"),
                          ([], "the following arguments are required: FILE (or --counts COUNTS)")]:
        _fails_cleanly(capsys, out, "train", *argv, "--merges", "5", "-o", out,
                       match=f"train: {message}")
    _fails_cleanly(capsys, out, "train", "--counts", tmp_path / "a.counts", "--per-line",
                   "--merges", "5", "-o", out, match="--per-line: has no effect with --counts")


@pytest.mark.slow
def test_unreachable_scheduler_in_a_real_process(tmp_path, shards):
    """The entry point itself: one line on stderr, exit 2, no output, within the timeout."""
    out = tmp_path / "c.counts"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run(
        [sys.executable, "-m", "bytepair", "count", str(shards[0]), "--scheduler", "tcp://127.0.0.1:9",
         "-o", str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("bytepair: error: scheduler: cannot connect to 'tcp://127.0.0.1:9'")
    assert result.stderr.count("\n") == 1, result.stderr
    assert not out.exists()


def _with_header(path, **changes):
    """Rewrite a count file's header (and its checksummed copy) with ``changes``; a value
    of None removes the key."""

    line, rest = path.read_bytes().split(b"\n", 1)
    body = zlib.decompress(rest)[len(line) + 1:]
    header = json.loads(line)
    header.update(changes)
    header = {key: value for key, value in header.items() if key not in changes or value is not None}
    new = json.dumps(header).encode() + b"\n"
    path.write_bytes(new + zlib.compress(new + body))


def test_a_custom_pattern_in_a_count_file_needs_trust(capsys, tmp_path):
    """Without --trust-pattern the regex is never run: (a|aa)+b on 48 a's would not end."""
    table = tmp_path / "a.counts"
    PieceCounts({"a" * 48: 1}, pattern="(a|aa)+b").save(table)
    out = tmp_path / "m.json"
    _fails_cleanly(capsys, out, "train", "--counts", table, "--merges", "5", "-o", out,
                   match="holds a custom regex pattern '(a|aa)+b'; a regex from a file can take "
                         "exponential time on some text, so pass --trust-pattern")
    harmless = tmp_path / "h.counts"
    PieceCounts({"ab": 2, " ab": 1}, pattern=r" ?\w+").save(harmless)
    assert run(capsys, "train", "--counts", harmless, "--merges", "2", "-q", "-o", out)[0] == 2
    assert run(capsys, "train", "--counts", harmless, "--trust-pattern", "--merges", "2", "-q",
               "-o", out)[0] == 0
    assert bytepair.load(out, trust_pattern=True).pattern == r" ?\w+"


def test_a_header_without_a_pattern_is_one_error_line(capsys, tmp_path, shards):
    table = tmp_path / "a.counts"
    assert run(capsys, "count", shards[0], "-o", table)[0] == 0
    _with_header(table, pattern=None)  # one flipped bit in the key's name did it
    out = tmp_path / "m.json"
    _fails_cleanly(capsys, out, "train", "--counts", table, "--merges", "5", "-o", out,
                   match="is corrupt: the header has no 'pattern'")


def test_totals_beyond_64_bits_name_the_files(capsys, tmp_path):
    for name in ("a", "b"):
        PieceCounts({name: 2**62}, pattern="gpt2").save(tmp_path / f"{name}.counts")
    out = tmp_path / "m.json"
    _fails_cleanly(capsys, out, "train", "--counts", tmp_path / "a.counts", tmp_path / "b.counts",
                   "--merges", "5", "-o", out,
                   match=f"--counts {str(tmp_path / 'a.counts')!r} {str(tmp_path / 'b.counts')!r}: "
                         "piece counts: the total exceeds 2**63 - 1")


def test_problems_with_a_count_files_pattern_are_not_blamed_on_an_option(capsys, tmp_path):
    """The user passed no --pretokenize: a bare word is the table's literal regex, and a
    pattern that matched nothing is the counts' problem."""
    word = tmp_path / "w.counts"
    bytepair.count(["ab abab"], pretokenize=regex.compile("ab"), progress=False).save(word)
    out = tmp_path / "m.json"
    assert run(capsys, "train", "--counts", word, "--merges", "2", "-q", "-o", out)[0] == 0
    assert json.loads(out.read_text())["pattern"] == "(?:ab)"  # the same regex, not a name
    assert bytepair.load(out).model.pattern == "ab"
    out.unlink()
    nothing = tmp_path / "n.counts"
    PieceCounts({"xyz": 3}, pattern="q+").save(nothing)
    _fails_cleanly(capsys, out, "train", "--counts", nothing, "--trust-pattern", "--merges", "2",
                   "-o", out, match="error: counts: pattern 'q+' matches nothing")


def test_a_damaged_parquet_file_with_workers_is_one_error_line(capsys, tmp_path):
    damaged = damaged_parquet(tmp_path / "d.parquet")
    out = tmp_path / "c.counts"
    _fails_cleanly(capsys, out, "count", damaged, "--workers", "2", "-o", out,
                   match=f"{damaged}: row group 3 is unreadable: ")
