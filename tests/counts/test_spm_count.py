"""Counting sentencepiece's words: the compiled counter equals the Python path (the reference),
line for line, and equals sentencepiece's own normaliser; threads, blocks and spills change nothing."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from bytepair.counts import spill, spm_words
from bytepair.split.spm_text import RULES, SentenceText, TextRules
from helpers import examples

pytestmark = pytest.mark.skipif(spm_words._spm_count is None, reason="the compiled counter is not built")
spm = pytest.importorskip("sentencepiece")

# Tiny alphabet: ties, whitespace runs, tabs, NUL, U+001F, ▁ and U+2585 in the input, a meta
# piece and its first character, malformed bytes ("\xff", "\xc3"), emoji, characters the
# nmt_nfkc map rewrites (full width, U+3000, a ligature, a combining accent, U+FFFD), characters
# of two bytes it keeps or rewrites (ß, д; µ), and malformed ones (overlong forms, a surrogate).
LINE = st.lists(st.sampled_from(["a", "b", "1", "23", " ", "  ", "\t", "\0", "\x1f", "日", "\u2581", "\u2585",
                                 "<s>", "<", "\xff", "\xc3", "é", "e\u0301", "😀", "\r", "ｈ", "\u3000",
                                 "ﬁ", "\ufffd", "\xa0", "Ⅻ", "\x01", "ß", "д", "µ", "\u0301",
                                 # malformed: overlong U+0080 in 3 and 2 bytes, a surrogate
                                 "\udce0\udc82\udc80", "\udcc1\udcbf", "\udced\udca0\udc80"]),
                max_size=20).map("".join)
RULES_OF = st.builds(TextRules, normalization_rule_name=st.sampled_from(RULES), add_dummy_prefix=st.booleans(),
                     remove_extra_whitespaces=st.booleans(), treat_whitespace_as_suffix=st.booleans(),
                     allow_whitespace_only_pieces=st.booleans(), split_by_whitespace=st.booleans(),
                     max_sentence_length=st.integers(10, 40),
                     meta_pieces=st.sampled_from([(), ("<unk>", "<s>", "</s>"), ("<s>", "<0x3C>", "ｈ")]))


def _bytes(line: str) -> bytes:
    # "\xff" and "\xc3" stand for malformed bytes.
    return line.replace("\xff", "\udcff").replace("\xc3", "\udcc3").encode("utf-8", "surrogateescape")


@settings(max_examples=examples(500), deadline=None)
@given(lines=st.lists(LINE, max_size=12), rules=RULES_OF)
def test_compiled_counter_equals_python_path(lines, rules):
    data = b"\n".join(_bytes(line) for line in lines)
    text = SentenceText(rules)
    python = spm_words.count_block(data, text, compiled=False)
    compiled = spm_words.count_block(data, text, compiled=True)
    assert compiled == (dict(python[0]), python[1])
    assert python[0] == Counter(text.block_words(data.split(b"\n")))


@settings(max_examples=examples(300), deadline=None)
@given(line=LINE, rule=st.sampled_from(RULES), prefix=st.booleans(), extra=st.booleans())
def test_compiled_normaliser_equals_sentencepieces(line, rule, prefix, extra):
    """sentencepiece's normaliser reads bytes: a malformed byte is U+FFFD, which its map never sees."""
    normalizer = spm.SentencePieceNormalizer(rule_name=rule, add_dummy_prefix=prefix, escape_whitespaces=True,
                                             remove_extra_whitespaces=extra)
    rules = TextRules(normalization_rule_name=rule, add_dummy_prefix=prefix, remove_extra_whitespaces=extra)
    counter = spm_words.compiled_counter(SentenceText(rules))
    assert counter.sentence(_bytes(line)) == normalizer.normalize(_bytes(line))


def test_a_long_line_is_skipped_and_counted_as_such():
    text = SentenceText(TextRules(max_sentence_length=10))
    data = b"short one\n" + b"x" * 11 + b"\n" + b"y" * 10 + b"\n\n"
    assert spm_words.count_block(data, text) == ({"\u2581short": 1, "\u2581one": 1, "\u2581" + "y" * 10: 1}, 1)


def _corpus(tmp_path, lines: list[bytes]) -> str:
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


@pytest.mark.parametrize("rule", ["identity", "nmt_nfkc"])
@pytest.mark.parametrize("workers", [1, 2])
def test_files_on_threads_in_small_blocks_equal_one_block(tmp_path, rule, workers):
    lines = [b"%d a b  c" % (i % 97) + b" \xe6\x97\xa5\xff" * (i % 3) + b"x" * (i % 50) for i in range(3000)]
    rules = TextRules(normalization_rule_name=rule, max_sentence_length=60)
    expected = spm_words.count_block(b"\n".join(lines), SentenceText(rules), compiled=False)
    got = spm_words.count_sentencepiece_words([_corpus(tmp_path, lines)], rules, workers=workers,
                                              block_bytes=1 << 12)
    assert got == (dict(expected[0]), expected[1])
    assert got[1] > 0


def test_a_bounded_count_spills_and_gives_the_same_words(tmp_path, monkeypatch):
    written = []
    real = spill.Spill.write

    def write(self, table):
        written.append(len(table))
        return real(self, table)

    monkeypatch.setattr(spill.Spill, "write", write)
    lines = [b"w%d v%d" % (i, i % 7) for i in range(20000)]
    rules = TextRules(normalization_rule_name="identity")
    path = _corpus(tmp_path, lines)
    expected = spm_words.count_sentencepiece_words([path], rules, workers=2)
    assert not written
    bound = spill.BYTES_PER_PIECE * 1000 * 3  # about 1,000 words a table, three tables
    got = spm_words.count_sentencepiece_words([path], rules, workers=2, count_memory=bound,
                                              block_bytes=1 << 12)
    assert got == expected
    assert len(written) >= 10 and max(written) <= 1000 + 600  # passed by at most one block of 4 KiB


def test_the_python_path_on_processes_equals_the_compiled_one(tmp_path, monkeypatch):
    lines = [b"a b\tc \xff", b"\xe2\x96\x85 skipped", b"<s> ok", b"x" * 5000] * 50
    rules = TextRules(meta_pieces=("<s>",))
    path = _corpus(tmp_path, lines)
    words, skipped = spm_words.count_sentencepiece_words([path], rules, workers=2)
    compiled = dict(words), skipped
    monkeypatch.setattr(spm_words, "_spm_count", None)
    monkeypatch.setattr(spm_words, "PART_BYTES", 1 << 10)
    assert spm_words.count_sentencepiece_words([path], rules, workers=2) == compiled
    assert compiled[1] == 50


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize("options", [dict(treat_whitespace_as_suffix=True, remove_extra_whitespaces=False),
                                     dict(treat_whitespace_as_suffix=True), dict()], ids=["suffix", "suffix-extra", "defaults"])
def test_lines_the_map_empties_and_malformed_bytes_give_spm_trains_pieces(tmp_path, monkeypatch, compiled, options):
    """Under nmt_nfkc a line of U+001F (the map deletes it) is still a sentence: as a suffix, a
    ``▁`` of its own; a malformed byte is U+FFFD, kept, while a U+FFFD of the text becomes a space."""
    from spm_helpers import spm_pieces
    from bytepair.training.sentencepiece import SentencePieceOptions, pieces_from_words

    lines = [b"\x1f"] * 50 + [b"qqqq"] * 10 + [b"ab\xffcd ef", b"xy\xef\xbf\xbdzw", b"\xe3\x80\x80 \xe3\x80\x80"] * 20
    if not compiled:
        monkeypatch.setattr(spm_words, "_spm_count", None)
    o = SentencePieceOptions.of(vocab_size=30, hard_vocab_limit=False, **options)
    words, _ = spm_words.count_sentencepiece_words([_corpus(tmp_path, lines)], o.text_rules())
    assert pieces_from_words(words, o) == spm_pieces(lines, vocab_size=30, hard_vocab_limit=False, **options)


def test_files_one_gzip_count_as_their_lines_joined(tmp_path):
    import gzip

    first, second = [b"a b", b"c\xe3\x80\x80d"] * 300, [b"e  f", b"\xff g"] * 300
    (tmp_path / "one.txt").write_bytes(b"\n".join(first) + b"\n")
    (tmp_path / "two.txt.gz").write_bytes(gzip.compress(b"\n".join(second)))
    rules = TextRules()
    words, skipped = spm_words.count_sentencepiece_words([tmp_path / "one.txt", tmp_path / "two.txt.gz"], rules,
                                                         workers=2, block_bytes=1 << 10)
    expected = spm_words.count_block(b"\n".join(first + second), SentenceText(rules), compiled=False)
    assert (dict(words), skipped) == (dict(expected[0]), expected[1])


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_dask_cluster_counts_the_same_words(tmp_path, monkeypatch, compiled):
    distributed = pytest.importorskip("distributed")
    lines = [b"%d a b  c" % (i % 97) + b" \xe6\x97\xa5\xff" * (i % 3) + b"x" * (i % 50) for i in range(3000)]
    rules = TextRules(max_sentence_length=60, meta_pieces=("<s>",))
    path = _corpus(tmp_path, lines)
    words, skipped = spm_words.count_sentencepiece_words([path], rules)
    expected = dict(words), skipped
    if not compiled:
        monkeypatch.setattr(spm_words, "_spm_count", None)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        words, skipped = spm_words.count_sentencepiece_on_cluster(client, [path], rules, part_bytes=1 << 14)
        assert (dict(words), skipped) == expected and skipped > 0
        if compiled:
            from bytepair.training.sentencepiece import train_sentencepiece

            assert (train_sentencepiece(path, vocab_size=200, client=client).pieces
                    == train_sentencepiece(path, vocab_size=200).pieces)
