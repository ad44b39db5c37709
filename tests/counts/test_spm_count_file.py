"""Count tables of sentencepiece words: the text rules in the header (format version 3), read
back whole, checked on load, and never mixed with other rules or with pre-tokenized pieces."""

from __future__ import annotations

import json
import pickle
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from bytepair.counts.piece_counts import CountsFormatError, PieceCounts
from bytepair.split.spm_text import RULES, TextRules
from helpers import examples

WORDS = st.dictionaries(st.text(st.sampled_from(["\u2581", "a", "b", "é", "日", "😀", "\x1f"]), min_size=1,
                                max_size=6), st.integers(1, 2**40), max_size=20)
TEXT_RULES = st.builds(
    TextRules, normalization_rule_name=st.sampled_from(RULES), add_dummy_prefix=st.booleans(),
    remove_extra_whitespaces=st.booleans(), treat_whitespace_as_suffix=st.booleans(),
    allow_whitespace_only_pieces=st.booleans(), split_by_whitespace=st.booleans(),
    max_sentence_length=st.integers(10, 1 << 30),
    meta_pieces=st.lists(st.text(min_size=1, max_size=4).filter(lambda t: t.isprintable()), max_size=4)
    .map(tuple))


def spm_table(words=None, rules=None, skipped=0) -> PieceCounts:
    rules = rules or TextRules(normalization_rule_name="identity", meta_pieces=("<unk>", "<s>", "</s>"))
    return PieceCounts(words if words is not None else {"\u2581a": 3, "\u2581b\u2581": 1}, pattern=None,
                       sentencepiece=rules, skipped_lines=skipped)


@settings(max_examples=examples(100), deadline=None)
@given(words=WORDS, rules=TEXT_RULES, skipped=st.integers(0, 2**40))
def test_a_table_and_its_rules_round_trip(tmp_path_factory, words, rules, skipped):
    table = spm_table(words, rules, skipped)
    path = tmp_path_factory.mktemp("t") / "t.counts"
    table.save(path)
    back = PieceCounts.load(path)
    assert back == table
    assert back.sentencepiece == rules.canonical() and back.skipped_lines == skipped
    assert back.pattern is None
    assert pickle.loads(pickle.dumps(back)) == table


def test_only_sentencepiece_tables_are_version_3(tmp_path):
    spm_table().save(tmp_path / "spm.counts")
    PieceCounts({b"ab": 2}, pattern="gpt2").save(tmp_path / "byte.counts")
    spm = json.loads((tmp_path / "spm.counts").read_bytes().split(b"\n")[0])
    byte = json.loads((tmp_path / "byte.counts").read_bytes().split(b"\n")[0])
    assert spm["version"] == 3 and spm["pattern"] is None and spm["skipped_lines"] == 0
    assert spm["sentencepiece"]["meta_pieces"] == ["</s>", "<s>", "<unk>"]
    # A byte-level table's header is what it was before sentencepiece tables existed.
    assert list(byte) == ["format", "version", "pattern", "pieces", "piece_bytes", "total"]
    assert byte["version"] == 2


def test_meta_pieces_in_any_order_are_the_same_rules():
    a = spm_table(rules=TextRules(meta_pieces=("<s>", "<unk>", "<s>")))
    b = spm_table(rules=TextRules(meta_pieces=("<unk>", "<s>")))
    assert a == b and (a + b)[b"\xe2\x96\x81a"] == 6


def _rewrite_rules(path, change) -> None:
    """The file with its header (and the header's copy in the body) changed by ``change``."""
    line, rest = path.read_bytes().split(b"\n", 1)
    raw = zlib.decompress(rest)[len(line) + 1:]
    header = json.loads(line)
    change(header)
    new = json.dumps(header).encode() + b"\n"
    path.write_bytes(new + zlib.compress(new + raw))


def _set(key, value):
    return lambda header: header["sentencepiece"].__setitem__(key, value)


@pytest.mark.parametrize(("change", "message"), [
    (_set("max_sentence_length", "4192"), "'max_sentence_length' must be a int, not str"),
    (_set("max_sentence_length", 5), "'max_sentence_length' 5 is outside"),
    (_set("add_dummy_prefix", 1), "'add_dummy_prefix' must be a bool, not int"),
    (_set("normalization_rule_name", "nfd"), "'normalization_rule_name' 'nfd' is not one of"),
    (_set("meta_pieces", ["<unk>", "<s>"]), "'meta_pieces' must be distinct non-empty strings, sorted"),
    (_set("meta_pieces", [""]), "'meta_pieces' must be distinct"),
    (_set("shuffle", True), "unknown key 'shuffle'"),
    (lambda header: header["sentencepiece"].pop("split_by_whitespace"), "have no 'split_by_whitespace'"),
    (lambda header: header.__setitem__("sentencepiece", [1]), "must be an object, not list"),
    (lambda header: header.pop("sentencepiece"), "version 3 header has no 'sentencepiece' rules"),
    (lambda header: header.__setitem__("pattern", "gpt2"), "sentencepiece words has the pattern"),
    (lambda header: header.__setitem__("skipped_lines", -1), "'skipped_lines' must be a non-negative"),
    (lambda header: header.pop("skipped_lines"), "'skipped_lines' must be a non-negative"),
    (lambda header: header.__setitem__("version", 2), "version 2 header has 'sentencepiece'"),
])
def test_damaged_rules_are_refused_in_one_line(tmp_path, change, message):
    path = tmp_path / "t.counts"
    spm_table().save(path)
    _rewrite_rules(path, change)
    with pytest.raises(CountsFormatError, match=message) as refused:
        PieceCounts.load(path)
    assert "\n" not in str(refused.value) and "is corrupt" in str(refused.value)


def test_a_word_that_is_not_utf8_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is not UTF-8"):
        spm_table({b"\xe2\x96": 1}).save(tmp_path / "t.counts")


@pytest.mark.parametrize(("other", "message"), [
    (PieceCounts({b"a": 1}, pattern=None), "a table of sentencepiece words with a table of pre-tokenized"),
    (spm_table(rules=TextRules(normalization_rule_name="identity", max_sentence_length=100,
                               meta_pieces=("<unk>", "<s>", "</s>"))),
     "different max_sentence_length: 4192 and 100"),
    (spm_table(rules=TextRules(meta_pieces=("<unk>", "<s>", "</s>"))),
     "different normalization_rule_name: identity and nmt_nfkc"),
    (spm_table(rules=TextRules(normalization_rule_name="identity", meta_pieces=("<unk>",))),
     "different meta_pieces: '</s>', '<s>' and none"),
])
def test_tables_of_other_rules_do_not_add_up(other, message):
    with pytest.raises(ValueError, match=message):
        spm_table() + other


def test_skipped_lines_add_up_and_belong_to_sentencepiece_tables():
    assert (spm_table(skipped=2) + spm_table(skipped=3)).skipped_lines == 5
    assert sum([spm_table(skipped=2), spm_table(skipped=1)]).skipped_lines == 3
    with pytest.raises(ValueError, match="skipped_lines: only a table of sentencepiece words"):
        PieceCounts({b"a": 1}, pattern=None, skipped_lines=1)
    with pytest.raises(ValueError, match="pattern: a table of sentencepiece words has no pattern"):
        PieceCounts({b"a": 1}, pattern="gpt2", sentencepiece=TextRules())
    with pytest.raises(ValueError, match="own character map"):
        PieceCounts({b"a": 1}, pattern=None, sentencepiece=TextRules(precompiled_charsmap=b"x"))
