"""Naive vs incremental byte-mode training on real English text (pytest-benchmark).

Documents are the corpus's lines. The naive trainer recounts the corpus every
round (0.21-0.24 s per merge per MB measured here), so its cases run only
where ``harness.NAIVE_SECONDS_PER_MERGE_MB * merges * MB`` (0.26 s per merge
per MB, an upper bound) fits ``--bench-budget`` (default 300 s): 0.1 MB at
every merge count and 1 MB up to 1,000 merges; 1 MB at 4,096 merges (~18 min)
and every 10 MB case (11 min and more) are skipped with that reason. Each
naive case also checks that its result equals the incremental trainer's,
field for field.

    python -m pytest benches/                      # everything (about 8 minutes)
    python -m pytest benches/ -k incremental       # the fast engine only
    python -m pytest benches/ --bench-budget 30    # naive only where cheaper than 30 s
"""

import pytest

import bytepair
from benches import corpus, harness

SIZES = ("0.1MB", "1MB", "10MB")
MERGES = (256, 1000, 4096)


def _train(lines, merges, engine):
    return bytepair.train_bytes(lines, merges, engine=engine)


@pytest.mark.parametrize("merges", MERGES)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("engine", ["incremental", "naive"])
def test_train_bytes(benchmark, corpus_lines, budget, engine, size, merges):
    nbytes = corpus.parse_size(size)
    if engine == "naive":
        estimate = harness.TRAINERS["naive"].estimate(nbytes, merges)
        if estimate > budget:
            pytest.skip(f"naive at {size}, {merges} merges: estimated {estimate:.0f} s "
                        f"> --bench-budget {budget:g} s")
    lines = corpus_lines(size)
    benchmark.group = f"{size} {merges} merges"
    benchmark.extra_info.update(size=size, merges=merges, bytes=sum(map(len, lines)) + len(lines))
    if engine == "naive":
        # Seconds to minutes per run: one round, no warm-up.
        model = benchmark.pedantic(_train, (lines, merges, engine), rounds=1, iterations=1)
        expected = _train(lines, merges, "incremental")
        assert model.merges == expected.merges
        assert model.sequences == expected.sequences
    else:
        rounds = 3 if nbytes >= 10**7 else 5
        model = benchmark.pedantic(_train, (lines, merges, engine), rounds=rounds,
                                   iterations=1, warmup_rounds=1)
    assert len(model.merges) == merges
