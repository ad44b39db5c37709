"""Counting pieces: in this process, by file part, and in worker processes (which must equal one)."""

import gzip
import json
import os
import signal
from collections import Counter

import pytest

import bytepair
from bytepair.counts import counting
from bytepair.split import fastsplit
from bytepair.learn import naive
from bytepair import training as trainers
from bytepair.counts import sources
from bytepair.read.corpus import Files, read_file
from bytepair.split.pretokenize import PATTERNS
from helpers import byte_token, needs_compiled_splitter, spy_on_workers


def test_parts_cover_the_file_and_end_at_line_ends(tmp_path, real_text):
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:50_000])
    parts = Files(path, per_line=True).parts(1000)
    assert len(parts) > 10
    assert parts[0][1] == 0 and parts[-1][2] == len(real_text[:50_000])
    for (_, _, end), (_, start, _) in zip(parts, parts[1:]):
        assert end == start
        assert real_text[end - 1:end] == b"\n"
    ranged = [doc for _, s, e in parts for doc in read_file(path, text=True, per_line=True, start=s, end=e)]
    assert ranged == list(read_file(path, text=True, per_line=True))


@pytest.mark.parametrize("name", ["gpt2", "cl100k", None])
def test_part_tables_sum_to_the_whole_file_table(tmp_path, real_text, name):
    source = PATTERNS[name] if name else None
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:30_000])
    lines = real_text[:30_000].decode().splitlines()
    whole = counting.count_documents(lines if source else [line.encode() for line in lines], source)
    parts = Files(path, per_line=True).parts(2000)
    assert len(parts) > 5
    summed = sum((counting.count_part(p, s, e, source, per_line=True) for p, s, e in parts), Counter())
    assert summed == whole
    # A piece table, not a document table: "the" is a piece of many verses.
    if source is not None:
        assert whole[b" the"] > 100


def test_count_documents_counts_each_piece_of_each_document():
    counts = counting.count_documents(["aa aa", "", "aa"], PATTERNS["gpt2"])
    assert counts == Counter({b"aa": 2, b" aa": 1})
    assert counting.count_documents([b"x", b"", b"x", b"y"], None) == Counter({b"x": 2, b"y": 1})


@pytest.mark.parametrize("pretokenize", ["gpt2", "cl100k", r"\w+|\W+"])
def test_two_workers_share_line_files_and_equal_one(tmp_path, real_text, monkeypatch, pretokenize):
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:60_000])
    one = bytepair.train(path, merges=300, pretokenize=pretokenize, per_line=True, workers=1,
                         progress=False)
    spy = spy_on_workers(monkeypatch, part_bytes=1000)
    two = bytepair.train(path, merges=300, pretokenize=pretokenize, per_line=True, workers=2,
                         progress=False)
    assert spy.shared_by(2)
    if fastsplit.compiled_name(PATTERNS.get(pretokenize)) is not None:
        assert spy.processes == {os.getpid()}  # compiled counting: threads, no tables pickled
    else:
        assert os.getpid() not in spy.processes  # Python splits: worker processes
    assert len(spy.reports) > 20 and sum(spy.sizes) == path.stat().st_size  # every byte once
    assert one == two and len(one.merges) == 300


@needs_compiled_splitter
@pytest.mark.parametrize("per_line", [True, False], ids=["per-line", "one-document"])
def test_one_gzip_file_is_counted_on_every_worker_thread(tmp_path, real_text, monkeypatch, per_line):
    # A gzip file cannot be entered in the middle: this thread reads it, threads count its blocks.
    path = tmp_path / "kjv.txt.gz"
    path.write_bytes(gzip.compress(real_text[:80_000]))
    one = bytepair.train(path, merges=300, pretokenize="o200k", per_line=per_line, workers=1,
                         progress=False)
    spy = spy_on_workers(monkeypatch, part_bytes=1000)
    two = bytepair.train(path, merges=300, pretokenize="o200k", per_line=per_line, workers=2,
                         progress=False)
    assert spy.shared_by(2) and spy.processes == {os.getpid()}
    assert sum(spy.sizes) == path.stat().st_size  # progress in compressed bytes
    assert one == two


@needs_compiled_splitter
def test_thread_progress_counts_every_byte_on_disk(tmp_path):
    # An empty gzip file holds no block, but its bytes on disk are part of the total.
    (tmp_path / "a.txt").write_text("one two\nthree\n")
    (tmp_path / "empty.txt.gz").write_bytes(gzip.compress(b""))
    (tmp_path / "b.txt.gz").write_bytes(gzip.compress(b"four five\n" * 50))
    files = Files(tmp_path, per_line=True)
    sizes = []
    counts = counting.count_files(files, PATTERNS["gpt2"], workers=2, part_bytes=64,
                                  on_partial=lambda partial: sizes.append(partial.size))
    assert sum(sizes) == files.total_bytes()
    assert dict(counts) == dict(counting.count_files(files, PATTERNS["gpt2"], workers=1))


def test_byte_mode_counts_in_this_process(tmp_path, real_text, monkeypatch):
    # No pre-tokenizer: a dictionary update per document is cheaper here than shipping tables.
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:60_000])
    one = bytepair.train(path, merges=300, pretokenize=None, per_line=True, workers=1, progress=False)
    spy = spy_on_workers(monkeypatch)
    two = bytepair.train(path, merges=300, pretokenize=None, per_line=True, workers=2, progress=False)
    assert spy.workers == {spy.caller} and len(spy.reports) > 10
    assert one == two


def test_two_worker_processes_share_jsonl_and_equal_one(tmp_path, real_text, monkeypatch):
    path = tmp_path / "kjv.jsonl"
    lines = real_text[:40_000].decode().splitlines()
    path.write_text("".join(json.dumps({"text": line}) + "\n" for line in lines))
    one = bytepair.train(path, merges=200, workers=1, progress=False)
    spy = spy_on_workers(monkeypatch, part_bytes=1000)
    two = bytepair.train(path, merges=200, workers=2, progress=False)
    assert spy.shared_by(2) and os.getpid() not in spy.processes
    assert one == two


def test_two_worker_processes_share_an_iterable_and_equal_one(real_text, monkeypatch):
    # A custom regex sends batches of an in-memory corpus to worker processes.
    lines = real_text[:60_000].decode().splitlines()
    pattern = r"\w+|[^\w\s]"  # not a named pattern
    one = bytepair.train(lines, merges=300, pretokenize=pattern, workers=1, progress=False)
    spy = spy_on_workers(monkeypatch, batch_chars=2000)
    two = bytepair.train(lines, merges=300, pretokenize=pattern, workers=2, progress=False)
    assert spy.shared_by(2) and os.getpid() not in spy.processes
    assert one == two and len(one.merges) == 300


@needs_compiled_splitter
@pytest.mark.parametrize("name", ["cl100k", "o200k", None])
def test_compiled_iterable_counting_is_the_same_on_any_number_of_threads(real_text, name):
    # Named patterns count joined batches in compiled code on worker threads.
    lines = real_text[:60_000].splitlines()
    source = PATTERNS[name] if name else None
    expected = counting.count_documents([line.decode() for line in lines] if name else lines, source)
    for workers in (1, 2, 3, 4):
        partials = []
        counts = counting.count_pieces(iter(lines), source, workers=workers, batch_chars=3000,
                                       on_partial=partials.append)
        assert dict(counts) == expected
        assert len(partials) > 10 and sum(p.size for p in partials) == sum(map(len, lines))


@needs_compiled_splitter
def test_compiled_iterable_error_names_the_document(real_text):
    lines = [b"fine", b"also fine", b"bad \xff here"]
    with pytest.raises(ValueError, match=r"corpus\[2\]: invalid UTF-8 at byte offset 4"):
        counting.count_pieces(iter(lines), PATTERNS["cl100k"], workers=2, batch_chars=5)
    with pytest.raises(ValueError, match=r"corpus\[2\]: invalid UTF-8 at byte offset 4"):
        bytepair.train(lines, merges=5, pretokenize="o200k", workers=1, progress=False)


def test_jsonl_error_names_the_line_from_any_worker(tmp_path, monkeypatch):
    path = tmp_path / "bad.jsonl"
    rows = [json.dumps({"text": f"line {i} " * 20}) for i in range(200)]
    rows[150] = "{not json"
    path.write_text("\n".join(rows) + "\n")
    monkeypatch.setattr(sources, "count_files", lambda *a, **k: counting.count_files(
        *a, part_bytes=1000, **k))
    assert len(Files(path).parts(1000)) > 5
    with pytest.raises(ValueError, match=r"bad\.jsonl:151: not a JSON line"):
        bytepair.train(path, merges=10, workers=2, progress=False)


def test_pair_counts_beyond_32_bits(backend):
    # Piece weights push pair counts past 2**31 (and 2**32): counts are 64-bit.
    counts = Counter({b"abab": 3 * 2**31, b"ba": 2**33 + 5, b"abc": 7})
    rules = trainers.learn(counts, 10)
    pieces = list(counts)
    expected, _ = naive.fit(pieces, [counts[p] for p in pieces], 10, byte_token)
    assert rules == expected
    assert rules[0].count > 2**32


def test_counting_files_in_this_process_leaves_ctrl_c_alone(tmp_path, real_text):
    # Only worker processes ignore SIGINT; the parent must still stop on Ctrl-C.
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:5000])
    before = signal.getsignal(signal.SIGINT)
    counting.count_files(Files(path, per_line=True), PATTERNS["gpt2"], workers=1)
    assert signal.getsignal(signal.SIGINT) is before and before is not signal.SIG_IGN
