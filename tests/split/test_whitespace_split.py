"""The ``whitespace-split`` pattern (``\\S+``, Hugging Face's ``WhitespaceSplit``): its compiled
scanner cuts what ``regex`` cuts, and the custom regex ``\\S+`` takes the same compiled path."""

import json
import subprocess
import sys
from collections import Counter

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

import bytepair
from bytepair.learn import naive
from bytepair.model import codec
from bytepair.split import fastsplit
from bytepair.split.pretokenize import PATTERNS, resolve_pattern, splitter
from helpers import byte_token

pytestmark = pytest.mark.skipif(not fastsplit.available(), reason="compiled splitter not installed")

NAME = "whitespace-split"
SOURCE = r"\S+"
#: Every code point that is \s for regex, and near misses: \x1c-\x1f are white space for
#: str.isspace but not for regex, U+180E stopped being white space in Unicode 6.3, and
#: U+200B and U+FEFF are format characters.
SPACES = (" \t\n\x0b\x0c\r\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
          + "\u2028\u2029\u202f\u205f\u3000")
NEAR = "\x1c\x1d\x1e\x1f\u180e\u200b\ufeff"
CHARS = SPACES + NEAR + "ab,.é日😀\u0301\x00" + "\r\n"


def test_name_is_the_source_and_compiled():
    assert PATTERNS[NAME] == SOURCE
    assert resolve_pattern(NAME) == SOURCE
    # A user's custom regex \S+ is the named pattern, so it gets the scanner too.
    assert resolve_pattern(SOURCE) == SOURCE
    assert resolve_pattern(regex.compile(SOURCE)) == SOURCE
    assert fastsplit.compiled_name(SOURCE) == NAME
    assert codec.pattern_code(SOURCE) is not None


def test_every_code_point_and_exactly_regex_white_space():
    every = "".join(chr(c) for c in range(0x110000))
    pieces = fastsplit.split(every, NAME)
    assert pieces == splitter(SOURCE)(every)
    white = {c for p in pieces if regex.fullmatch(r"\s+", p) for c in p}
    assert white == set(SPACES) == set(regex.findall(r"\s", every))
    for char in NEAR:
        assert fastsplit.split(f"a{char}b", NAME) == [f"a{char}b"]


@given(text=st.text(st.sampled_from(CHARS), max_size=40))
@example(text="")
@example(text="ab, cd\u3000\u3000e\r\nf\x85g\u180eh")
@example(text="   ")
@example(text="x\x1c\x1fy \u2028")
def test_pieces_are_the_matches_and_the_runs_between(text):
    pieces = fastsplit.split(text, NAME)
    assert pieces == splitter(SOURCE)(text)
    assert "".join(pieces) == text
    assert [p for p in pieces if not regex.fullmatch(r"\s+", p)] == regex.findall(SOURCE, text)


@given(text=st.text())
def test_pieces_on_any_text(text):
    pieces = fastsplit.split(text, NAME)
    assert [p for p in pieces if not regex.fullmatch(r"\s+", p)] == regex.findall(SOURCE, text)
    assert "".join(pieces) == text


# Empty documents among them, but not only: an empty corpus is refused.
DOCUMENTS = st.lists(st.text(st.sampled_from("ab a\u3000\n\x85é,"), max_size=12),
                     max_size=6).filter(any)


@given(documents=DOCUMENTS, merges=st.integers(0, 12))
@example(documents=["aaaa aaaa", "aaaa", "", "aaaa"], merges=6)
@example(documents=["ab,\u3000ab, ab,ab"] * 2, merges=8)
def test_train_equals_naive_reference(documents, merges):
    tok = bytepair.train(documents, merges=merges, pretokenize=NAME, workers=1, progress=False)
    counts = Counter(piece.encode() for doc in documents for piece in splitter(SOURCE)(doc))
    pieces = list(counts)
    expected, _ = naive.fit(pieces, [counts[p] for p in pieces], merges, byte_token)
    assert tok.merges == expected
    # The custom regex is the same pattern: the same rules.
    custom = bytepair.train(documents, merges=merges, pretokenize=SOURCE, workers=1, progress=False)
    assert custom.merges == tok.merges and custom.pattern == SOURCE


def test_encode_equals_python_split(tmp_path):
    documents = ["ab, ab,\u3000ab,\n\nab,  cd\x85cd\u180ecd"] * 3
    tok = bytepair.train(documents, merges=10, pretokenize=NAME, progress=False)
    text = "ab,  ab,\u2028cd\u180ecd é😀 ab,"
    pieces = splitter(SOURCE)(text)
    assert tok.encode(text) == [i for piece in pieces for i in tok.encode(piece)]
    assert tok.decode(tok.encode(text)) == text


def test_model_file_stores_the_source_and_loads_untrusted(tmp_path):
    tok = bytepair.train(["ab, ab, cd"] * 2, merges=3, pretokenize=NAME, progress=False)
    path = tmp_path / "model.json"
    tok.save(path)
    assert json.loads(path.read_text())["pattern"] == SOURCE
    loaded = bytepair.load(path)  # a named pattern's source needs no trust
    assert loaded.pattern == SOURCE and loaded.merges == tok.merges
    assert loaded.encode("ab, cd") == tok.encode("ab, cd")


def test_cli_help_lists_the_name():
    for command in ("train", "count"):
        shown = subprocess.run([sys.executable, "-m", "bytepair", command, "--help"],
                               capture_output=True, text=True, check=True).stdout
        assert NAME in shown
