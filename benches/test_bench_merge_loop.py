"""The merge-loop suite's cases in process (pytest-benchmark), at 10 MB: large vocabularies and byte mode.

The report (``python -m benches.report --suite merge-loop``) runs the goal
cases at 100 MB, each in a fresh process with its peak memory; these are the
same trainers on the 10 MB corpora, quick enough to run while working:

* GPT-2 split, one document per line, vocabulary 32768: bytepair and Hugging
  Face ``tokenizers`` (hf);
* byte mode, 10,000 merges, on the benches corpus and on the short-lines
  corpus (lines of about 30 bytes): ``bytepair.train``, ``train_bytes``, hf.

    python -m pytest benches/test_bench_merge_loop.py
"""

import os

# Before any Rust peer starts its thread pool.
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import importlib.util

import pytest

from benches import harness, merge_loop

MB = 10**6


def _run(benchmark, name, path, mode, merges):
    trainer = harness.TRAINERS[name]
    if importlib.util.find_spec(trainer.modules[0]) is None:
        pytest.skip(f"{trainer.modules[0]} is not installed")
    options = {"mode": mode, "threads": 1}
    prepared = trainer.prepare(path, options)
    result = benchmark.pedantic(trainer.train, (prepared, merges, options), rounds=2,
                                iterations=1, warmup_rounds=0)
    assert trainer.digest(result)["learned"] == merges
    if trainer.stages:
        trainer.stages()  # reset its timers


@pytest.mark.parametrize("name", ["bytepair", "hf"])
def test_gpt2_large_vocabulary(benchmark, corpus_file, name):
    benchmark.group = "gpt2 10MB vocab 32768"
    _run(benchmark, name, corpus_file("10MB"), "gpt2", 32768 - 256)


@pytest.mark.parametrize("corpus", ["benches", "short-lines"])
@pytest.mark.parametrize("name", ["bytepair", "train_bytes", "hf"])
def test_byte_mode_10k_merges(benchmark, corpus_file, name, corpus):
    path = (corpus_file("10MB") if corpus == "benches"
            else merge_loop.short_lines_path(10 * MB))
    benchmark.group = f"bytes 10MB {corpus} 10k merges"
    _run(benchmark, name, path, "bytes", merge_loop.BYTE_MERGES)
