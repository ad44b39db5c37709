"""The synthetic benchmark corpus (benches/synthetic.py): deterministic, with the statistics
it promises, and trained on exactly like real text."""

from __future__ import annotations

import io

import pytest

from benches import synthetic
import bytepair
from bytepair import training as trainers

from helpers import needs_compiled_splitter

SIZE = 1_000_000


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> bytes:
    out = io.BytesIO()
    synthetic.write(out, SIZE, seed=7)
    return out.getvalue()


def test_same_seed_same_bytes_in_any_number_of_workers(sample):
    again = io.BytesIO()
    synthetic.write(again, SIZE, seed=7)
    assert again.getvalue() == sample
    # Two worker processes make the blocks in turn: the same bytes (past the first block).
    shared = io.BytesIO()
    synthetic.write(shared, 6_000_000, seed=7, workers=2)
    assert shared.getvalue().startswith(sample)
    other = io.BytesIO()
    synthetic.write(other, 200_000, seed=8)
    assert other.getvalue() != sample[:len(other.getvalue())]


def test_a_size_is_a_prefix_of_every_larger_one(sample):
    small = io.BytesIO()
    synthetic.write(small, 300_000, seed=7)
    data = small.getvalue()
    assert 290_000 < len(data) <= 300_000 and data.endswith(b"\n")
    assert sample.startswith(data)
    assert len(sample) <= SIZE and sample.endswith(b"\n")


def test_the_text_is_utf8_lines_without_other_line_breaks(sample):
    text = sample.decode("utf-8")
    assert all(line for line in text.split("\n")[:-1])
    assert not set(text) & synthetic._LINE_BREAKS - {"\n"}


@needs_compiled_splitter
def test_the_sample_has_the_promised_statistics(tmp_path, sample):
    path = tmp_path / "synthetic.txt"
    path.write_bytes(sample)
    stats = synthetic.statistics(*synthetic.piece_counts(path))
    # Real English, the first 1 MB of the recipe (python -m benches.synthetic stats): 223,658
    # tokens, 17,351 distinct pieces, 46% of them seen once, Zipf slope -1.22, mean length
    # 7.3 bytes, 90% Latin words, 23% of the tokens punctuation. The generator is fitted at
    # 10 to 100 MB (docs/scale.md); at 1 MB it is within these bounds.
    assert 180_000 < stats["tokens"] < 260_000
    assert 13_000 < stats["distinct"] < 22_000
    assert 0.3 < stats["once"] < 0.55
    assert -1.4 < stats["zipf_slope"] < -1.0
    assert 6 < stats["mean_length"] < 11
    kinds = stats["kinds"]
    assert kinds["latin"] > 0.7
    assert all(kinds[k] > 0.005 for k in ("script", "number", "punct", "space"))
    assert 0.15 < stats["kinds_by_token"]["punct"] < 0.35


def test_training_on_synthetic_text_equals_the_naive_reference(tmp_path, sample):
    part = sample[: sample.rfind(b"\n", 0, 20_000) + 1]
    path = tmp_path / "part.txt"
    path.write_bytes(part)
    lines = part.decode("utf-8").split("\n")[:-1]
    reference = trainers.train_bytes(lines, 60, pretokenize="gpt2", engine="naive")
    fast = bytepair.train(path, merges=60, per_line=True, pretokenize="gpt2", workers=2)
    assert len(reference.merges) == 60
    assert [(m.left, m.right) for m in fast.model.merges] == \
        [(m.left, m.right) for m in reference.merges]
