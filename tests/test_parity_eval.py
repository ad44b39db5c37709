"""benches/parity_eval.py: its variants are named strictly, and its three global compressions
are what docs/parity.md says they are."""

from __future__ import annotations

import argparse

import pytest

import bytepair
from benches import parity_eval


@pytest.mark.parametrize("name", ["plain", "base", "window", "base+global=0.25",
                                  "window+global=.5", "base+global=1"])
def test_variants_that_exist(name):
    assert parity_eval._variant(name) == name


@pytest.mark.parametrize("name", ["plain+global=0.5", "base+global=2", "base+global=",
                                  "ratio", "base+window", "Base"])
def test_variants_that_do_not(name):
    with pytest.raises(argparse.ArgumentTypeError, match="not a variant"):
        parity_eval._variant(name)


def test_the_three_global_compressions():
    tok = bytepair.train(["aaaa aaaa", "bb"], merges=2, progress=False)
    heldout = {"x": ["aaaa", "bb"], "y": ["b"]}
    encoded = {loc: [len(tok.encode(line)) for line in lines] for loc, lines in heldout.items()}
    got = parity_eval.measure(tok, heldout)
    assert got["tokens"] == {loc: sum(n) for loc, n in encoded.items()}
    assert got["bytes"] == {"x": 6, "y": 1}
    assert got["bytes_per_token"] == 7 / sum(got["tokens"].values())
    assert got["mean_language_bytes_per_token"] == pytest.approx(
        (6 / got["tokens"]["x"] + 1 / got["tokens"]["y"]) / 2)
    ratios = [4 / encoded["x"][0], 2 / encoded["x"][1], 1 / encoded["y"][0]]
    assert got["mean_line_bytes_per_token"] == pytest.approx(sum(ratios) / 3)
    # Merges were learned: the three differ from one another here.
    assert len({round(got[k], 9) for k in ("bytes_per_token", "mean_language_bytes_per_token",
                                           "mean_line_bytes_per_token")}) == 3
