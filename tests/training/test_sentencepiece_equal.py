"""Pieces, order, scores and types equal spm_train's (sentencepiece 0.2.3): naive reference and fast loop."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

pytest.importorskip("sentencepiece")

import spm_naive  # noqa: E402
from spm_helpers import LLAMA, fast_pieces, naive_options, sample_lines, spm_pieces  # noqa: E402
from helpers import examples  # noqa: E402

CONFIGS = {"defaults": {}, "llama2": LLAMA}


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", ["kjv-genesis-exodus.txt", "multilingual-sample.txt"])
def test_naive_equals_spm_train(config, name):
    lines = sample_lines(name, 40)
    options = dict(CONFIGS[config], vocab_size=1000, hard_vocab_limit=False)
    expected = spm_pieces(lines, **options)
    assert spm_naive.train(lines, naive_options(**options)) == expected


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", ["kjv-genesis-exodus.txt", "multilingual-sample.txt",
                                  "debian-non-english-sample.txt"])
def test_fast_equals_spm_train(config, name):
    lines = sample_lines(name, 3000)
    options = dict(CONFIGS[config], vocab_size=2000)
    assert fast_pieces(lines, **options) == spm_pieces(lines, **options)


# Text full of ties and rule edges: a few letters of several scripts, digits, runs of
# spaces, tabs, NUL, emoji and characters rare enough to fall outside the coverage.
ALPHABET = list("aab ab  ba\t\0") + ["日", "本", "ひ", "カ", "ー", "д", "я", "1", "2", "\u0301", "😀", "\u2581"]
RARE = st.characters(min_codepoint=0x100, max_codepoint=0x3FFFF, exclude_categories=("Cs", "Zs"))
LINE = st.lists(st.one_of(st.sampled_from(ALPHABET), RARE), max_size=30).map("".join)
OPTIONS = st.fixed_dictionaries({
    "split_digits": st.booleans(), "allow_whitespace_only_pieces": st.booleans(),
    "remove_extra_whitespaces": st.booleans(), "split_by_whitespace": st.booleans(),
    "split_by_unicode_script": st.booleans(), "split_by_number": st.booleans(),
    "byte_fallback": st.booleans(), "max_sentencepiece_length": st.integers(1, 6),
    "normalization_rule_name": st.sampled_from(["identity", "nmt_nfkc"]),
    "character_coverage": st.sampled_from([0.98, 0.995, 1.0]),
    "vocab_size": st.integers(20, 400)})


def _lines(texts: list[str]) -> list[bytes]:
    return [t.replace("\n", " ").replace("\r", " ").encode() for t in texts]


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=examples(60))
@given(texts=st.lists(LINE, min_size=1, max_size=25), options=OPTIONS)
# A merge that the next match in the same word undoes ("aa" then "aaa" in "aaaa") leaves its
# pair a candidate of count 0, which spm_train can still pick.
@example(texts=["aaaa"], options={
    "split_digits": False, "allow_whitespace_only_pieces": False,
    "remove_extra_whitespaces": False, "split_by_whitespace": False,
    "split_by_unicode_script": False, "split_by_number": False, "byte_fallback": False,
    "max_sentencepiece_length": 3, "normalization_rule_name": "identity",
    "character_coverage": 0.98, "vocab_size": 20})
# U+1ABF joined Inherited in Unicode 14; sentencepiece's table (Unicode 9.0) has it Common.
@example(texts=["a\u1abf"], options={
    "split_digits": False, "allow_whitespace_only_pieces": False,
    "remove_extra_whitespaces": False, "split_by_whitespace": False,
    "split_by_unicode_script": True, "split_by_number": False, "byte_fallback": False,
    "max_sentencepiece_length": 2, "normalization_rule_name": "identity",
    "character_coverage": 0.98, "vocab_size": 20})
def test_hypothesis_naive_fast_and_spm_train(texts, options):
    lines = _lines(texts)
    options = dict(options, hard_vocab_limit=False,
                   vocab_size=options["vocab_size"] + (259 if options["byte_fallback"] else 3))
    try:
        expected = spm_pieces(lines, **options)
    except RuntimeError:  # spm_train refuses: no characters, or fewer slots than characters
        return
    assert fast_pieces(lines, **options) == expected
    assert spm_naive.train(lines, naive_options(**options)) == expected


#: Spaces, a literal ``▁`` (U+2581, sentencepiece's own space mark) and letters.
SPACEY = st.lists(st.sampled_from(["a", "b", " ", "  ", "\u2581", "\u2581\u2581"]),
                  min_size=1, max_size=12).map("".join)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("rule", ["identity", "nmt_nfkc"])
@given(lines=st.lists(SPACEY, min_size=1, max_size=6), remove=st.booleans())
@example(lines=["a\u2581", "\u2581", "a \u2581 ", "\u2581a"], remove=True)
def test_words_of_spaces_and_marks_equal_sentencepieces_normaliser(compiled, rule, lines, remove):
    """sentencepiece strips every trailing ``▁`` of a normalised sentence, one of the input
    too ("a▁" is "▁a"), and only spaces at its start."""
    from collections import Counter

    import sentencepiece as spm
    from bytepair.counts.spm_words import compiled_counter, count_block
    from bytepair.split.spm_text import SentenceText, TextRules

    if compiled and compiled_counter(SentenceText(TextRules())) is None:
        pytest.skip("the compiled counter is not built")
    normalizer = spm.SentencePieceNormalizer(rule_name=rule, add_dummy_prefix=True,
                                             escape_whitespaces=True,
                                             remove_extra_whitespaces=remove)
    rules = TextRules(normalization_rule_name=rule, remove_extra_whitespaces=remove,
                      split_by_whitespace=True)
    expected = Counter(word for line in lines
                       for word in rules.sentence_words(normalizer.normalize(line)))
    table, _ = count_block("".join(line + "\n" for line in lines).encode(), SentenceText(rules),
                           compiled=compiled)
    assert dict(table) == dict(expected)


# Characters whose script sentencepiece's table (Unicode 9.0) gives otherwise than today's
# Unicode: assigned later to an old script (U+1ABF Inherited, U+A7C0 Latin, U+31350 Han),
# moved since (U+0953 was Devanagari), or of a script new in 9.0 (Adlam, Osage).
SHIFTED = ["\u1abf", "\ua7c0", "\U00031350", "\u0953", "\U0001e900", "\U000104b0"]


@pytest.mark.parametrize("char", SHIFTED, ids=[f"U+{ord(c):04X}" for c in SHIFTED])
def test_scripts_are_sentencepieces_unicode_9(char):
    lines = [f"a{char}a {char}{char} \u0915{char} \U0001e901{char} {char}1".encode()] * 3
    options = dict(normalization_rule_name="identity", character_coverage=1.0, vocab_size=40,
                   hard_vocab_limit=False, max_sentencepiece_length=2)
    expected = spm_pieces(lines, **options)
    assert fast_pieces(lines, **options) == expected
    assert spm_naive.train(lines, naive_options(**options)) == expected
