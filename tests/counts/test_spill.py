"""Spilled counting: tables past ``count_memory`` go to disk as sorted runs and are
merged; the table, and the model trained from it, equal in-memory counting's."""

from __future__ import annotations

import gzip
import io
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import bytepair
from bytepair.counts import spill
from bytepair.counts.counting import count_documents, count_files, count_pieces, counts_bytes
from bytepair.counts.piece_counts import PieceCounts
from bytepair.counts.spill import BYTES_PER_PIECE, Spill, merge_runs, read_run, save_run
from bytepair.read.corpus import Files
from bytepair.split.pretokenize import resolve_pattern

from helpers import KJV, KJV_REST_GZ, MULTILINGUAL, run

SRC = str(Path(bytepair.__file__).parents[1])
GPT2 = resolve_pattern("gpt2")
CUSTOM = resolve_pattern(r"\w+|\s+|[^\w\s]+")
# Tiny alphabets: ties, runs like "aaaa", multi-byte UTF-8, spaces and line ends.
documents = st.lists(st.text(alphabet="ab é\n", max_size=12), max_size=12)


@pytest.fixture
def spills(monkeypatch):
    """The sizes of the tables written as runs (so a test can insist that some were)."""
    sizes: list[int] = []
    real = Spill.write

    def write(self, table):
        sizes.append(len(table))
        return real(self, table)

    monkeypatch.setattr(Spill, "write", write)
    return sizes


@pytest.fixture
def temporary(tmp_path, monkeypatch):
    """TMPDIR for this test alone: spills must leave it empty."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setenv("TMPDIR", str(directory))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    return directory


def pieces(n: int) -> int:
    """A count_memory that lets each of ``tables`` tables hold about ``n`` pieces."""
    return n * BYTES_PER_PIECE


@given(documents, st.integers(1, 3), st.integers(1, 4), st.sampled_from([GPT2, None, CUSTOM]))
def test_hyp_spilled_documents_equal_in_memory(docs, workers, bound, source):
    as_bytes = counts_bytes(source)  # compiled counting takes bytes, the regex splitter text
    stream = [d.encode() for d in docs] if as_bytes else docs
    expected = count_documents(docs if source is not None else stream, source)
    table = count_pieces(stream, source, workers=workers, batch_chars=5,
                         count_memory=pieces(bound) * (workers + 1))
    assert table == PieceCounts.trusted(dict(expected), source)
    assert table.total() == sum(expected.values())


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
@pytest.mark.parametrize("source", [GPT2, CUSTOM, None], ids=["gpt2", "regex", "bytes"])
def test_spilled_files_equal_in_memory(spills, temporary, workers, source):
    files = Files(KJV, MULTILINGUAL, per_line=True)
    expected = count_files(files, source, workers=1)
    assert not spills
    table = count_files(files, source, workers=workers, part_bytes=20_000,
                        count_memory=pieces(500) * (workers + 1))
    assert table == expected
    assert len(spills) > 1  # it really went through runs on disk
    assert os.listdir(temporary) == []


def test_spilled_gzip_whole_file_documents(spills, temporary):
    files = Files(KJV, KJV_REST_GZ)
    expected = count_files(files, GPT2, workers=2)
    assert count_files(files, GPT2, workers=2, count_memory=pieces(2000) * 3) == expected
    assert spills
    assert os.listdir(temporary) == []


def test_spilled_model_is_byte_for_byte_the_same(spills, temporary, tmp_path):
    plain, spilled = tmp_path / "plain.json", tmp_path / "spilled.json"
    bytepair.train(KJV, merges=400, workers=2).save(plain)
    assert not spills
    bytepair.train(KJV, merges=400, workers=2, count_memory=pieces(3000)).save(spilled)
    assert spills
    assert plain.read_bytes() == spilled.read_bytes()
    assert os.listdir(temporary) == []


def test_cli_count_memory(capsys, spills, temporary, tmp_path):
    code, _, err = run(capsys, "count", KJV, "--count-memory", "200K", "-q", "-o", tmp_path / "a")
    assert code == 0, err
    assert spills
    code, _, err = run(capsys, "count", KJV, "-q", "-o", tmp_path / "b")
    assert code == 0, err
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    code, _, err = run(capsys, "count", KJV, "--count-memory", "lots", "-o", tmp_path / "c")
    assert code == 2
    assert "--count-memory" in err and "lots" in err


def test_an_error_removes_the_runs(spills, temporary, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n" * 10 + b"\xff\n")
    files = Files(KJV, bad, per_line=True)
    with pytest.raises(ValueError, match="invalid UTF-8"):
        count_files(files, GPT2, workers=1, count_memory=pieces(200) * 2)
    assert spills  # the KJV's runs were on disk when the bad file came
    assert os.listdir(temporary) == []


def test_merge_runs_sums_equal_pieces(tmp_path):
    runs = [[(b"a", 1), (b"b", 2)], [(b"a", 3), (b"c", 1)], [], [(b"b", 1), (b"\xff", 7)]]
    for i, items in enumerate(runs):
        save_run(tmp_path / f"{i}.run", items)
    assert [list(read_run(tmp_path / f"{i}.run")) for i in range(4)] == runs
    table = merge_runs([read_run(tmp_path / f"{i}.run") for i in range(4)], None)
    assert dict(table) == {b"a": 4, b"b": 3, b"c": 1, b"\xff": 7}
    assert table.total() == 15


def test_a_truncated_run_is_refused(tmp_path):
    save_run(tmp_path / "r", [(b"piece", 5)])
    data = (tmp_path / "r").read_bytes()
    (tmp_path / "r").write_bytes(data[:-2])
    with pytest.raises(ValueError, match="truncated"):
        list(read_run(tmp_path / "r"))
    (tmp_path / "r").write_bytes(b"not a run")
    with pytest.raises(ValueError, match="not a bytepair run"):
        list(read_run(tmp_path / "r"))


SLOW_SPILL = textwrap.dedent("""
    import os, sys, time
    import bytepair.counts.spill as spill
    from bytepair.cli.main import main

    real = spill.Spill.write

    def slow(self, table):
        path = real(self, table)
        os.write(1, b"SPILLED\\n")
        time.sleep(60)
        return path

    spill.Spill.write = slow
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_removes_the_runs(tmp_path, sig):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_SPILL, "count", str(KJV), "--per-line", "--workers", "1",
         "--count-memory", "100K", "-q", "-o", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(temporary)})
    try:
        line = process.stdout.readline()
        assert line == "SPILLED\n", process.stderr.read()
        assert os.listdir(temporary)  # the spill directory with its first run
        process.send_signal(sig)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode != 0
    assert os.listdir(temporary) == []
    assert not (tmp_path / "out").exists()


def test_count_memory_without_effect_is_refused(capsys, tmp_path):
    bytepair.count(KJV).save(tmp_path / "kjv.counts")
    code, out, err = run(capsys, "train", "--counts", tmp_path / "kjv.counts", "--merges", 5,
                         "--count-memory", "1G", "-o", tmp_path / "m.json")
    assert code == 2 and "--count-memory: has no effect with --counts" in err
    assert not (tmp_path / "m.json").exists()
    with pytest.raises(ValueError, match="count_memory"):
        bytepair.count(KJV, count_memory=0)
    with pytest.raises(ValueError, match="count_memory: the cluster's workers count"):
        bytepair.count(KJV, client=object(), count_memory=1 << 30)
    # With superbpe each stage's count keeps within the bound (tests/training/test_trainer.py).
    assert bytepair.train(KJV, vocab_size=400, superbpe=300, count_memory=1 << 30) == \
        bytepair.train(KJV, vocab_size=400, superbpe=300)


# -- the compiled runs: written sorted in C, merged in key ranges --------------------------------

needs_runs = pytest.mark.skipif(spill._runs is None, reason="the compiled modules are not installed")
# Pieces from a tiny alphabet (ties, prefixes of one another, multi-byte UTF-8), sometimes long.
some_pieces = st.one_of(st.binary(min_size=1, max_size=4).map(lambda b: b.translate(
    bytes.maketrans(bytes(range(256)), b"ab\xc3\xa9" * 64))), st.binary(min_size=20, max_size=90))
tables = st.lists(st.dictionaries(some_pieces, st.integers(1, 2**40), max_size=40), max_size=6)


@needs_runs
@given(tables)
def test_a_compiled_table_is_written_in_the_reference_order(table_list):
    for counts in table_list:
        table = fastsplit_table(counts)
        reference = io.BytesIO()
        spill.write_run(reference, spill.sorted_items(counts))
        assert spill.MAGIC + spill._runs.sorted_records(table) == reference.getvalue()


def fastsplit_table(counts: dict):
    """A compiled table holding ``counts``."""
    from bytepair.split._split import PieceTable

    return PieceTable.from_bytes(b"".join(
        count.to_bytes(8, "little") + len(piece).to_bytes(4, "little") + piece
        for piece, count in counts.items()))


@needs_runs
@given(tables, st.sampled_from([1, 40, 1 << 20]))
def test_the_key_range_merge_equals_the_reference_merge(tmp_path_factory, table_list, chunks):
    directory = tmp_path_factory.mktemp("runs")
    paths = []
    for number, counts in enumerate(table_list):
        paths.append(directory / f"run-{number}")
        save_run(paths[-1], spill.sorted_items(counts))
    # Chunks of a few records: many key ranges, records longer than a chunk.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spill, "MIN_CHUNK", 16)
        merged = spill.merge_run_files(paths, GPT2, chunks)
    expected = merge_runs(map(read_run, paths), GPT2)
    assert merged == expected == PieceCounts(sum(map(Counter, table_list), Counter()), pattern="gpt2")
    data, starts, counts = merged.flat()
    assert starts[-1] == len(data) and len(starts) == len(counts) + 1


@needs_runs
def test_the_key_range_merge_names_a_bad_run(tmp_path):
    save_run(tmp_path / "r", [(b"piece", 5), (b"pieces", 1)])
    data = (tmp_path / "r").read_bytes()
    (tmp_path / "r").write_bytes(data[:-2])
    with pytest.raises(ValueError, match="'.*r' is truncated"):
        spill.merge_run_files([tmp_path / "r"], None)
    (tmp_path / "r").write_bytes(b"not a run")
    with pytest.raises(ValueError, match="is not a bytepair run file"):
        spill.merge_run_files([tmp_path / "r"], None)


@needs_runs
def test_a_spilled_count_is_the_same_with_either_writer_and_merger(monkeypatch, spills):
    files = Files(KJV, per_line=True)
    compiled = count_files(files, GPT2, workers=2, count_memory=pieces(1500) * 3)
    assert spills
    monkeypatch.setattr(spill, "_runs", None)
    assert count_files(files, GPT2, workers=2, count_memory=pieces(1500) * 3) == compiled
