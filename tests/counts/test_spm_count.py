"""Counting sentencepiece's words: the compiled counter equals the Python path, line for line."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, strategies as st

from bytepair.counts import spm_words
from bytepair.split.spm_text import SentenceText, TextRules

pytestmark = pytest.mark.skipif(spm_words.count_identity is None, reason="the compiled counter is not built")

LINE = st.lists(st.sampled_from(["a", "b", " ", "  ", "\t", "\0", "\x1f", "日", "\u2581", "\u2585", "<s>", "<",
                                 "\xff", "\xc3", "é", "😀", "\r"]), max_size=20).map("".join)
RULES = st.builds(TextRules, normalization_rule_name=st.just("identity"), add_dummy_prefix=st.booleans(),
                  remove_extra_whitespaces=st.booleans(), treat_whitespace_as_suffix=st.booleans(),
                  allow_whitespace_only_pieces=st.booleans(), split_by_whitespace=st.booleans(),
                  max_sentence_length=st.integers(10, 40),
                  meta_pieces=st.sampled_from([(), ("<unk>", "<s>", "</s>")]))


def _bytes(line: str) -> bytes:
    # "\xff" and "\xc3" stand for malformed bytes.
    return line.replace("\xff", "\udcff").replace("\xc3", "\udcc3").encode("utf-8", "surrogateescape")


@given(lines=st.lists(LINE, max_size=12), rules=RULES)
def test_compiled_counter_equals_python_path(lines, rules):
    data = b"\n".join(_bytes(line) for line in lines)
    text = SentenceText(rules)
    python = spm_words.count_block(data, text, compiled=False)
    compiled = spm_words.count_block(data, text, compiled=True)
    assert (Counter(compiled[0]), compiled[1]) == (Counter(python[0]), python[1])
    assert python[0] == Counter(text.block_words(data.split(b"\n")))
