"""bytepair's tokenizer training against its peers, in process (pytest-benchmark).

The same trainers as ``python -m benches.report --suite peers`` (the registry
in benches/peers.py), on small inputs so that the suite stays quick: the
GPT-2 split at 1 MB and 10 MB, vocab 8192, and byte mode (each line one
document) at 1 MB, 1,000 merges. One thread everywhere (``workers=1``,
``RAYON_NUM_THREADS=1`` unless already set). Peers that are not installed are
skipped (``pip install -e .[bench]``). Peak memory and the full matrix are
the report's job: every report case runs in a fresh process.

    python -m pytest benches/test_bench_peers.py
    python -m pytest benches/test_bench_peers.py -k "hf or bytepair"
"""

import os

# Before any Rust peer starts its thread pool.
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import importlib.util

import pytest

from benches import harness

PEERS = harness.SUITES["peers"]
CASES = [("gpt2", "1MB", 8192 - 256), ("gpt2", "10MB", 8192 - 256), ("bytes", "1MB", 1000)]


@pytest.mark.parametrize("mode,size,merges", CASES, ids=[f"{m}-{s}-{n}" for m, s, n in CASES])
@pytest.mark.parametrize("name", PEERS)
def test_train(benchmark, corpus_file, name, mode, size, merges):
    trainer = harness.TRAINERS[name]
    if importlib.util.find_spec(trainer.modules[0]) is None:
        pytest.skip(f"{trainer.modules[0]} is not installed")
    if mode not in trainer.modes:
        pytest.skip(f"{name} has no {mode} mode")
    options = {"mode": mode, "threads": 1}
    prepared = trainer.prepare(corpus_file(size), options)
    benchmark.group = f"{mode} {size} {merges} merges"
    benchmark.extra_info.update(mode=mode, size=size, merges=merges)
    result = benchmark.pedantic(trainer.train, (prepared, merges, options), rounds=3,
                                iterations=1, warmup_rounds=1)
    assert trainer.digest(result)["learned"] == merges
    if trainer.stages:
        trainer.stages()  # reset its timers
