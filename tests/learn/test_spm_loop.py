"""The sentencepiece merge loop: the compiled loop equals the Python one, field for field, on tie-heavy words."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from bytepair.learn import spm_loop
from bytepair.learn.spm_pieces import PieceRules
from helpers import examples

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


# Long words of few letters: runs like "aaaa", words longer than the loop's 64-position blocks.
LONG = st.lists(st.sampled_from(list("aab\u2581") + ["aaaa", "ab" * 8, "\u2581" * 3]), max_size=40).map("".join)


@settings(max_examples=examples(30), deadline=None)
@given(words=st.dictionaries(st.one_of(WORD, LONG), st.integers(1, 5), max_size=10), rules=RULES)
def test_state_holds_after_every_merge(words, rules):
    """After each merge the kept frequencies equal a recount from the words (``_check``), and
    the pieces made one at a time equal the Python loop's."""
    held = spm_loop.CompiledWords(words, rules)
    held.lay_out(sorted(held.char_counts))
    held._loop._check()
    made = []
    for _ in range(80):
        step = held._loop.learn(1)
        if not step:
            break
        made += step
        held._loop._check()
    python = spm_loop.learn_pieces(words, 80, rules, compiled=False)
    assert [piece.decode("utf-8", "surrogatepass") for piece in made] == python


@pytest.mark.parametrize("count", [2**31 - 4, 2**31 - 3, 2**31 - 2, 2**40])
def test_counts_too_large_for_a_marker(count):
    # A word's count sits in its marker while it is below 2**31 - 2, in a side table above.
    words = {"\u2581ab": count, "\u2581ba": count - 1, "\u2581" + "ab" * 40: 3}
    held = spm_loop.CompiledWords(words, PieceRules())
    held.lay_out(sorted(held.char_counts))
    held._loop._check()
    assert spm_loop.learn_pieces(words, 10, compiled=True) == spm_loop.learn_pieces(words, 10, compiled=False)


@given(words=st.dictionaries(st.one_of(WORD, LONG), st.integers(1, 5), max_size=10))
def test_release_empties_the_table_and_changes_nothing(words):
    table = dict(words)
    held = spm_loop.CompiledWords(table, PieceRules(), release=True)
    assert table == {}
    kept = sorted(held.char_counts)
    assert held.learn(kept, 40) == spm_loop.CompiledWords(words, PieceRules()).learn(kept, 40)


def test_more_characters_than_the_first_pairs_table():
    # The first pairs of the 1,024 most frequent characters are looked up in a square table,
    # the others in the pair map: words here mix characters on both sides of that line.
    rare = [chr(0x4E00 + i) for i in range(1200)]
    words = {}
    for i, char in enumerate(rare):
        words["\u2581" + char + rare[(7 * i) % len(rare)] + "ab"[i % 2]] = 1 + i % 5
        words["\u2581a" + char] = 2
    held = spm_loop.CompiledWords(words, PieceRules())
    kept = sorted(held.char_counts, key=lambda char: (-held.char_counts[char], char))
    assert len(kept) > 1024
    held.lay_out(kept)
    held._loop._check()
    assert spm_loop.learn_pieces(words, 300, compiled=True) == spm_loop.learn_pieces(words, 300, compiled=False)


class _ReadCounted:
    """A :class:`~bytepair.counts.spm_words.WordTable` that counts how often its words are made
    (each pass over it decodes every word from UTF-8)."""

    def __init__(self, words: dict):
        from array import array
        from itertools import accumulate

        from bytepair.counts.spm_words import WordTable

        pieces = [word.encode("utf-8", "surrogatepass") for word in words]
        starts = array("q", [0, *accumulate(map(len, pieces))])
        self.table, self.passes = WordTable(b"".join(pieces), starts, array("q", words.values())), 0

    def __getattr__(self, name):
        return getattr(self.table, name)

    def __iter__(self):
        self.passes += 1
        return iter(self.table)

    def __len__(self):
        return len(self.table)

    def items(self):
        self.passes += 1
        return self.table.items()


@given(words=st.dictionaries(st.one_of(WORD, LONG, st.sampled_from(["\u2581é😀", "😀" * 70, "\u2581\x1fb"])),
                             st.integers(1, 5), max_size=10), release=st.booleans())
def test_a_word_table_is_read_in_one_pass_as_the_dict_is(words, release):
    table = _ReadCounted(words)
    held = spm_loop.CompiledWords(table, PieceRules(), release=release)
    assert table.passes == 1  # its characters are counted in its UTF-8, not decoded a second time
    reference = spm_loop.CompiledWords(dict(words), PieceRules())
    assert held.char_counts == reference.char_counts
    kept = sorted(held.char_counts)
    held.lay_out(kept)
    held._loop._check()
    reference.lay_out(kept)
    assert held._loop.learn(40) == reference._loop.learn(40)
