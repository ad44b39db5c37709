"""Training from files: parallel counting by byte ranges equals one process."""

import json

import pytest

import bytepair
from bytepair import tokenizer
from bytepair.corpus import Files, read_file


@pytest.fixture
def small_parts(monkeypatch):
    # Force many byte ranges even on small files.
    monkeypatch.setattr(tokenizer, "PART_BYTES", 1000)


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


@pytest.mark.parametrize("pretokenize", ["gpt2", "cl100k", None])
def test_two_workers_equal_one_on_line_files(tmp_path, real_text, small_parts, pretokenize):
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:60_000])
    one = bytepair.train(path, merges=300, pretokenize=pretokenize, per_line=True, workers=1, progress=False)
    two = bytepair.train(path, merges=300, pretokenize=pretokenize, per_line=True, workers=2, progress=False)
    assert one == two and len(one.merges) == 300


def test_two_workers_equal_one_on_jsonl(tmp_path, real_text, small_parts):
    path = tmp_path / "kjv.jsonl"
    lines = real_text[:40_000].decode().splitlines()
    path.write_text("".join(json.dumps({"text": line}) + "\n" for line in lines))
    one = bytepair.train(path, merges=200, workers=1, progress=False)
    two = bytepair.train(path, merges=200, workers=2, progress=False)
    assert one == two


def test_jsonl_error_names_the_line_from_any_worker(tmp_path, small_parts):
    path = tmp_path / "bad.jsonl"
    rows = [json.dumps({"text": f"line {i} " * 20}) for i in range(200)]
    rows[150] = "{not json"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl:151: not a JSON line"):
        bytepair.train(path, merges=10, workers=2, progress=False)


def test_pair_counts_beyond_32_bits(backend):
    # Piece weights push pair counts past 2**31 (and 2**32): counts are 64-bit.
    from collections import Counter

    from bytepair import naive

    counts = Counter({b"abab": 3 * 2**31, b"ba": 2**33 + 5, b"abc": 7})
    rules = tokenizer.learn(counts, 10)
    pieces = list(counts)
    expected, _ = naive.fit(pieces, [counts[p] for p in pieces], 10, lambda l, r, k: 256 + k)
    assert rules == expected
    assert rules[0].count > 2**32


def test_two_workers_equal_one_on_an_iterable(real_text, monkeypatch):
    # A regex pattern sends batches of an in-memory corpus to worker processes.
    monkeypatch.setattr(tokenizer, "BATCH_CHARS", 2000)
    lines = real_text[:60_000].decode().splitlines()
    one = bytepair.train(lines, merges=300, pretokenize="cl100k", workers=1, progress=False)
    two = bytepair.train(lines, merges=300, pretokenize="cl100k", workers=2, progress=False)
    assert one == two and len(one.merges) == 300
