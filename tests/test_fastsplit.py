"""The compiled GPT-2 splitter must give exactly the regex module's pieces."""

from collections import Counter

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from bytepair import fastsplit
from bytepair.pretokenize import PATTERNS

pytestmark = pytest.mark.skipif(not fastsplit.available(), reason="compiled splitter not installed")
GPT2 = regex.compile(PATTERNS["gpt2"])

# Characters that sit on every boundary of the pattern: spaces of several
# kinds, apostrophes and contraction letters, digits, letters from several
# scripts, combining marks, symbols, emoji, controls and lone surrogates.
TRICKY = list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2028\u3000'sStdmlrve") + list(
    "09٣¼Ⅻ①aZéß日本ñ\u0301\u20dd!?,.-_/😀👍🏽\x00\x7f\ud800"
)


@given(st.text())
@example("don't  \n\n  we'll'VE 'S x  ")
@example("  ")
@example(" \u00a0x")
def test_split_equals_regex_on_any_text(text):
    assert fastsplit.split_gpt2(text) == GPT2.findall(text)


@given(st.lists(st.sampled_from(TRICKY), max_size=40).map("".join))
def test_split_equals_regex_on_boundary_characters(text):
    assert fastsplit.split_gpt2(text) == GPT2.findall(text)


@given(st.lists(st.lists(st.sampled_from(TRICKY), max_size=20).map("".join), max_size=6))
def test_counts_equal_regex_counts(documents):
    expected = Counter()
    for doc in documents:
        expected.update(piece.encode("utf-8", "surrogatepass") for piece in GPT2.findall(doc))
    assert fastsplit.count_gpt2(documents) == expected


def test_counts_on_real_text(real_text):
    lines = real_text.decode("utf-8").splitlines()[:500]
    expected = Counter()
    for line in lines:
        expected.update(piece.encode() for piece in GPT2.findall(line))
    assert fastsplit.count_gpt2(lines) == expected
