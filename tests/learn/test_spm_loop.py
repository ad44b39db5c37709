"""The sentencepiece merge loop: the compiled loop equals the Python one, field for field, on tie-heavy words."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from bytepair.learn import spm_loop
from bytepair.learn.spm_pieces import PieceRules

pytestmark = pytest.mark.skipif(spm_loop.SpmLoop is None, reason="the compiled loop is not built")

WORD = st.lists(st.sampled_from(list("aab\u2581\u2581日ひ1\u0301\u2585")), max_size=12).map("".join)
RULES = st.builds(PieceRules, max_sentencepiece_length=st.integers(1, 8), split_by_unicode_script=st.booleans(),
                  split_by_number=st.booleans(), split_by_whitespace=st.booleans(), split_digits=st.booleans(),
                  treat_whitespace_as_suffix=st.booleans(), allow_whitespace_only_pieces=st.booleans())


@given(words=st.dictionaries(WORD, st.integers(1, 5), max_size=12), merges=st.integers(0, 60), rules=RULES)
def test_compiled_loop_equals_python_loop(words, merges, rules):
    python = spm_loop.learn_pieces(words, merges, rules, compiled=False)
    assert spm_loop.learn_pieces(words, merges, rules, compiled=True) == python


def test_zero_frequency_pairs_stay_candidates():
    # "ca" loses its count when "at" merges first, and still comes before "el" when nothing is left.
    words = {"\u2581cat": 2, "\u2581hel": 1}
    assert spm_loop.learn_pieces(words, 20, compiled=True) == spm_loop.learn_pieces(words, 20, compiled=False)
