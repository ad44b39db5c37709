"""Each compiled splitter must give exactly the regex module's pieces for its named pattern."""

import unicodedata
from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from bytepair.split import fastsplit
from bytepair.split.pretokenize import PATTERNS, splitter
from helpers import sampled

pytestmark = pytest.mark.skipif(not fastsplit.available(), reason="compiled splitter not installed")
if fastsplit.available():
    from bytepair.split import _split

DATA = Path(__file__).parents[1] / "data"
NAMES = ["gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "nanochat", "superbpe"]
#: Patterns whose matches do not cover all text: the text between matches is cut too.
ISOLATED = ("whitespace", "whitespace-split", "superbpe")
COMPILED = {name: regex.compile(PATTERNS[name]) for name in NAMES}


def expected(name, text):
    """What the training pipeline splits ``text`` into with the regex module."""
    if name in ISOLATED:  # not covering: the gaps between matches are pieces too
        return splitter(PATTERNS[name])(text)
    return COMPILED[name].findall(text)


def check(name, text):
    pieces = fastsplit.split(text, name)
    assert pieces == expected(name, text)
    if name in ("whitespace", "whitespace-split"):
        assert [p for p in pieces if not regex.fullmatch(r"\s+", p)] == COMPILED[name].findall(text)
    return pieces


# One character of every general category, and the characters that sit on
# the patterns' boundaries: white space of several kinds (\x1c is \s for
# Python's re but not for regex), CR/LF, apostrophes and the contraction
# letters in both cases (U+017F folds to s), digits of several kinds, letters
# by case (Lu Ll Lt Lm Lo), marks (Mn Mc Me), "/" (o200k), emoji and a lone surrogate.
def _one_per_category():
    seen = {}
    for code in range(0x110000):
        seen.setdefault(unicodedata.category(chr(code)), chr(code))
    return sorted(seen.values())


CATEGORIES = _one_per_category()
TRICKY = sorted(set(CATEGORIES + list(
    " \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u180e\u200b\u2028\u2029\u202f\u3000\ufeff"
    "'sStTdDmMlLvVeErRſK"
    "09٣¼²Ⅻ①aZéßǅᾈʰ々日本אñ"
    "\u0301\u0903\u20dd\u0300\u064b"
    "!?,.-_/\\😀👍🏽\x00\x7f\u200d\ud800\U000e0001"
)))
CONTRACTIONS = [a + b for a in "'" for b in ("s", "t", "re", "ve", "m", "ll", "d")]


def any_case(text):
    return st.tuples(*[st.sampled_from(sorted({c, c.upper(), c.lower()} | ({"ſ"} if c in "sS" else set())))
                       for c in text]).map("".join)


# Runs that stress the quantifiers: digits ({1,2}, {1,3}), spaces and line
# ends (\s+(?!\S), \s*[\r\n]), letters of mixed case (o200k), contractions.
RUNS = st.one_of(
    st.text(st.sampled_from("0123456789٣①"), min_size=1, max_size=9),
    st.text(st.sampled_from(" \t\xa0\u3000"), min_size=1, max_size=6),
    st.text(st.sampled_from(" \r\n"), min_size=1, max_size=6),
    st.text(st.sampled_from("aAǅʰ日\u0301é"), min_size=1, max_size=6),
    st.sampled_from(CONTRACTIONS).flatmap(any_case),
    st.text(st.sampled_from(TRICKY), min_size=1, max_size=3),
)


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text())
@example(text="don't  \n\n  we'll'VE 'S x  ")
@example(text="  ")
@example(text=" \u00a0x")
@example(text="\u0301ABC x\u0301ABC ABCa A\u0301b 'S'Ll")
@example(text="a \n ")
@example(text="1234567 x1234")
def test_split_equals_regex_on_any_text(name, text):
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
@given(text=st.lists(st.sampled_from(TRICKY), max_size=40).map("".join))
def test_split_equals_regex_on_boundary_characters(name, text):
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
@given(text=st.lists(RUNS, max_size=12).map("".join))
def test_split_equals_regex_on_runs(name, text):
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
@given(text=st.text(st.characters(codec="utf-8", categories=["L", "M", "N", "Zs", "Cc", "P"]), max_size=30))
def test_split_equals_regex_on_letters_marks_numbers(name, text):
    check(name, text)


@pytest.mark.parametrize("name", NAMES)
# The default run checks each code point alone; CI (-m "") also checks it in four contexts.
@pytest.mark.parametrize("context", sampled(["{}", "'{}a", " {}", "A{}\u0301b", "{0}{0}1"], keep={"{}"}))
def test_split_equals_regex_on_every_code_point(name, context):
    # Every code point in one text, each in the same small context.
    every = "".join(context.format(chr(code)) for code in range(0, 0x110000, 3 if context != "{}" else 1))
    assert fastsplit.split(every, name) == expected(name, every)


# multilingual-sample.txt: many scripts, numbers, punctuation; debian-non-english-sample.txt:
# German, Russian and Japanese lines of Debian documentation (debian-reference-de,
# maint-guide-ru / developers-reference-ru / debian-faq-ru, debian-reference-ja).
MULTILINGUAL = ["multilingual-sample.txt", "debian-non-english-sample.txt"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("file", MULTILINGUAL)
def test_split_equals_regex_on_multilingual_text(name, file):
    text = (DATA / file).read_text("utf-8")
    assert len(check(name, text)) > 100
    for line in text.splitlines():
        check(name, line)


@pytest.mark.parametrize("name", NAMES)
def test_split_equals_regex_on_real_text(name, real_text):
    text = real_text.decode("utf-8")[:200_000]
    check(name, text)


def test_class_table_equals_regex_classes():
    # The table is built from single classes; the bracketed unions must agree.
    assert _split.classes() == _split.build_classes(_split.CLASS_SOURCES)


def test_word_and_space_are_disjoint():
    # The whitespace scanner relies on it: a gap between matches is a run of \s.
    table = _split.classes()
    word, space = 64, 4
    assert not any(b & word and b & space for b in table)


def test_contraction_letters_fold_as_scanner_assumes():
    # (?i:...) in cl100k and o200k: which code points match each letter.
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    folds = {letter: set(regex.findall(f"(?i:{letter})", every)) for letter in "sdmtlver"}
    assert folds["s"] == {"s", "S", "ſ"}
    for letter in "dmtlver":
        assert folds[letter] == {letter, letter.upper()}


def test_gpt2_counts_equal_regex_counts(real_text):
    lines = real_text.decode("utf-8").splitlines()[:500]
    expected_counts = Counter()
    for line in lines:
        expected_counts.update(piece.encode() for piece in COMPILED["gpt2"].findall(line))
    assert fastsplit.count_gpt2(lines) == expected_counts


def test_compiled_name():
    for name in NAMES:
        assert fastsplit.compiled_name(PATTERNS[name]) == name
    assert fastsplit.compiled_name(r"\w+") is None
    assert fastsplit.compiled_name(None) is None


def test_unknown_pattern_is_refused():
    with pytest.raises(ValueError, match="pattern must be None or one of"):
        fastsplit.split("text", "gpt3")
