"""A tokenizer.json export loads in every fast tokenizer and gives bytepair's IDs.

gigatoken has no general regex engine: it recognises a pre-tokenizer by its spelling (GPT-2's
``ByteLevel`` regex, and the ``Split`` regexes of the patterns it knows) and refuses any other.
So GPT-2's pattern is exported as GPT-2's own ``tokenizer.json`` writes it. Hugging Face
``tokenizers``, ``transformers`` (its fast tokenizer over the same file), tiktoken (the ranks
export) and gigatoken must all give bytepair's IDs.

Two exceptions for gigatoken 0.10 (docs/from-tokenizers.md): it refuses the cl100k export, since each
spelling of that pattern it knows either means something else in Oniguruma (``\\p{N}{1,3}+``) or
splits a text that ends in white space holding a line break otherwise than tiktoken's
cl100k_base; and it loads a model without a pattern (``ByteLevel`` without its regex) but
splits the text with a regex all the same.
"""

from __future__ import annotations

import json

import gigatoken
import pytest
import tokenizers
from hypothesis import given, strategies as st
from transformers import PreTrainedTokenizerFast

import bytepair
from bytepair.formats.export import tiktoken_encoding, to_tokenizers_json

END = "<|endoftext|>"
#: The patterns whose export gigatoken encodes as bytepair does.
GIGATOKEN = ("gpt2", "o200k")
# Ties, runs, digits, contractions, line breaks and white space at the end, multi-byte UTF-8.
ALPHABET = list("aab ") + ["'s", "'LL", "1", "12345", "\n", "\r\n", "  ", "\t", "é", "🙂", "日本", "?!", END]
TEXTS = ["Hello world, don't SHOUT: I'LL 1234567 times\n", "a  \n  ", "x \n\n \t", "", "naïve 🙂 café",
         "in the beginning" + END + "and so"]


@pytest.fixture(scope="module", params=["gpt2", "cl100k", "o200k", None])
def exported(request, tmp_path_factory, real_text):
    corpus = real_text.decode("utf-8").splitlines()[:2000] + TEXTS[:-1]
    tok = bytepair.train(corpus, vocab_size=700, pretokenize=request.param, special_tokens=[END],
                         progress=False)
    path = tmp_path_factory.mktemp("fast") / "tokenizer.json"
    to_tokenizers_json(tok, path)
    return request.param, tok, path


@pytest.fixture(scope="module")
def encoders(exported):
    """Each library's encoder of the export, as ``text -> list of IDs``."""
    pattern, _, path = exported
    hf = tokenizers.Tokenizer.from_file(str(path))
    fast = PreTrainedTokenizerFast(tokenizer_file=str(path))
    tiktoken = tiktoken_encoding(bytepair.load(path))
    found = {
        "tokenizers": lambda text: hf.encode(text).ids,
        "transformers": lambda text: fast.encode(text),
        "tiktoken": lambda text: tiktoken.encode(text, allowed_special="all"),
    }
    if pattern in GIGATOKEN:
        giga = gigatoken.Tokenizer(str(path))
        found["gigatoken"] = lambda text: [int(i) for i in giga.encode(text)]
    return found


def test_gpt2_is_exported_as_gpt2s_own_byte_level(exported):
    pattern, _, path = exported
    if pattern != "gpt2":
        pytest.skip("GPT-2's pattern only")
    assert json.loads(path.read_text())["pre_tokenizer"] == {
        "type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


def test_gigatoken_loads_the_export(exported):
    pattern, tok, path = exported
    if pattern == "cl100k":
        with pytest.raises(Exception, match="no fast pretokenizer"):
            gigatoken.Tokenizer(str(path))
        return
    assert gigatoken.Tokenizer(str(path)).vocab_size == tok.vocab_size


@pytest.mark.parametrize("text", TEXTS)
def test_every_library_gives_bytepairs_ids(exported, encoders, text):
    _, tok, _ = exported
    expected = tok.encode(text, allowed_special="all")
    assert {name: encode(text) for name, encode in encoders.items()} == {
        name: expected for name in encoders}


@given(st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join))
def test_every_library_gives_bytepairs_ids_on_drawn_text(exported, encoders, text):
    _, tok, _ = exported
    expected = tok.encode(text, allowed_special="all")
    for name, encode in encoders.items():
        assert encode(text) == expected, name
