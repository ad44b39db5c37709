"""Answers that must never be silently wrong: each compares bytepair with the other library,
with the tokenizer it claims to measure, or with an uninterrupted run.

Named patterns for tiktoken, size curves of SuperBPE models, tokenizer.json files
whose added tokens sit in a gap of the vocabulary, checkpoints whose rules are
damaged, truncating imported tokenizers, bare-word patterns from count files,
``inspect`` of imported rules, and count files that declare impossible sizes.
"""

from __future__ import annotations

import json

import pytest
import tiktoken

import bytepair
from bytepair.split.pretokenize import PATTERNS

from helpers import KJV, MULTILINGUAL, run

HELLO = "Hello world, this is a test of 12345 numbers"
ENGLISH = KJV.read_text(encoding="utf-8")
WORLD = MULTILINGUAL.read_text(encoding="utf-8")


# -- tiktoken_pattern takes the names train takes --

@pytest.fixture(scope="module")
def by_pattern():
    """A tokenizer per named pattern, trained on English and multilingual text."""
    text = ENGLISH[:60_000] + WORLD
    return {name: bytepair.train([text], vocab_size=700, pretokenize=name, progress=False)
            for name in ("gpt2", "cl100k", "o200k", "whitespace")}


@pytest.mark.parametrize("name, trained_with", [
    ("cl100k", "cl100k"), ("cl100k_base", "cl100k"), ("o200k", "o200k"), ("o200k_base", "o200k"),
    ("gpt2", "gpt2"), ("r50k_base", "gpt2"), ("p50k_base", "gpt2"), ("whitespace", "whitespace"),
])
def test_tiktoken_pattern_resolves_names(by_pattern, name, trained_with):
    tok = by_pattern[trained_with]
    encoding = tiktoken.Encoding(name, pat_str=bytepair.tiktoken_pattern(name),
                                 mergeable_ranks=bytepair.tiktoken_ranks(tok), special_tokens={})
    for text in [HELLO, *WORLD.splitlines(), WORLD]:
        assert encoding.encode_ordinary(text) == tok.encode(text)
    # The name gives what the model's own pattern source gives.
    assert bytepair.tiktoken_pattern(name) == bytepair.tiktoken_pattern(tok.pattern)


def test_tiktoken_pattern_of_none_is_one_piece():
    assert bytepair.tiktoken_pattern("none") == bytepair.tiktoken_pattern(None) == r"[\s\S]+"


@pytest.mark.parametrize("name", ["cl100kk", "GPT2", "cl100k-base", "mypattern"])
def test_tiktoken_pattern_refuses_unknown_names_as_train_does(name):
    with pytest.raises(ValueError) as refused:
        bytepair.tiktoken_pattern(name)
    with pytest.raises(ValueError) as by_train:
        bytepair.train(["some text"], merges=1, pretokenize=name, progress=False)
    assert f"unknown pattern {name!r}" in str(refused.value)
    assert str(refused.value).split(":", 1)[1] == str(by_train.value).split(":", 1)[1]
