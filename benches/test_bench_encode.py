"""Encoding and decoding against tiktoken and Hugging Face tokenizers, in process (pytest-benchmark).

The same model and held-out text as ``python -m benches.encode`` (GPT-2
split, 32,768 tokens trained on the first 10 MB of the English corpus), on
1 MB of held-out text, one thread. The full matrix (1 and 2 threads, three
patterns, fresh processes, the goals) is that report's job::

    python -m pytest benches/test_bench_encode.py
"""

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import pytest

import bytepair
from benches import encode as report

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def setup():
    from bytepair.formats import export
    from bytepair.formats.export import to_tokenizers_json

    path = report.train_model("gpt2")
    tok = bytepair.load(path)
    json_path = path.with_suffix(".tokenizer.json")
    if not json_path.exists():
        to_tokenizers_json(tok, json_path)
    text = report.held_out_text(1_000_000)
    return {"path": path, "tok": tok, "enc": export.tiktoken_encoding(tok),
            "hf": tokenizers.Tokenizer.from_file(str(json_path)), "text": text,
            "lines": text.splitlines(), "ids": tok.encode_ordinary(text)}


def test_encode_first_bytepair(benchmark, setup):
    benchmark.group = "encode 1 MB, first call"
    ids = benchmark.pedantic(lambda tok: tok.encode_ordinary(setup["text"]),
                             setup=lambda: ((bytepair.load(setup["path"]),), {}), rounds=5)
    assert ids == setup["ids"]


def test_encode_first_tiktoken(benchmark, setup):
    benchmark.group = "encode 1 MB, first call"
    assert benchmark(setup["enc"].encode_ordinary, setup["text"]) == setup["ids"]


def test_encode_hf(benchmark, setup):
    benchmark.group = "encode 1 MB, first call"
    assert benchmark(setup["hf"].encode, setup["text"], add_special_tokens=False).ids == setup["ids"]


def test_encode_warm_bytepair(benchmark, setup):
    benchmark.group = "encode 1 MB, warm piece cache"
    assert benchmark(setup["tok"].encode_ordinary, setup["text"]) == setup["ids"]


@pytest.mark.parametrize("threads", [1, 2])
def test_encode_batch_bytepair(benchmark, setup, threads):
    benchmark.group = "encode_batch 1 MB of lines"
    result = benchmark(setup["tok"].encode_batch, setup["lines"], threads=threads)
    assert len(result) == len(setup["lines"])


def test_encode_batch_tiktoken(benchmark, setup):
    benchmark.group = "encode_batch 1 MB of lines"
    result = benchmark(setup["enc"].encode_ordinary_batch, setup["lines"], num_threads=1)
    assert len(result) == len(setup["lines"])


def test_decode_bytepair(benchmark, setup):
    benchmark.group = "decode 1 MB"
    assert benchmark(setup["tok"].decode_bytes, setup["ids"]) == setup["text"].encode()


def test_decode_tiktoken(benchmark, setup):
    benchmark.group = "decode 1 MB"
    assert benchmark(setup["enc"].decode_bytes, setup["ids"]) == setup["text"].encode()


@pytest.mark.parametrize("length", report.LONG_PIECE)
def test_one_long_piece_bytepair(benchmark, setup, length):
    benchmark.group = "one piece of identical letters"
    piece = "a" * length
    ids = benchmark.pedantic(setup["tok"].encode_ordinary, (piece,), rounds=3)
    assert setup["tok"].decode(ids) == piece
