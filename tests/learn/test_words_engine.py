"""Word mode's engines: the compiled word engine and the Python loop equal the naive trainer.

Symbols are strings ordered as Python orders them (code points); the
compiled engine compares their UTF-8 bytes, which must give the same order
for astral characters, combining marks and end-of-word markers that are
ordinary letters.
"""

from __future__ import annotations

import gzip
from array import array
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.counts.words import count_words
from bytepair.learn import naive
from bytepair.learn import words as word_engines
from helpers import KJV, KJV_REST_GZ, MULTILINGUAL, needs_compiled

MAX_COUNT = 2**63 - 1
WORD_BACKENDS = ["python", pytest.param("compiled", marks=needs_compiled)]

# Tiny alphabets full of ties: ASCII, an astral letter (4 UTF-8 bytes), a
# combining acute accent, a BMP letter above U+07FF and one below.
LETTERS = st.sampled_from(["a", "b", "c", "é", "\u0301", "𝒜", "😀", "ß", "中"])
WORDS = st.text(LETTERS, max_size=7)
END_OF_WORD = st.sampled_from([None, "</w>", "a", "b", "ab", "𝒜", "\u0301"])
COUNTS = st.one_of(st.integers(1, 4), st.sampled_from([2**40, 2**61, MAX_COUNT]))


def naive_words(counts: dict, merges: int, end_of_word):
    words = list(counts)
    start = [list(word) + ([end_of_word] if end_of_word else []) for word in words]
    rules, sequences = naive.fit(start, [counts[w] for w in words], merges,
                                 lambda left, right, rank: left + right)
    return rules, [tuple(seq) for seq in sequences]


def windows(counts: dict, end_of_word) -> int:
    tail = 1 if end_of_word else 0
    return sum(n * max(len(word) + tail - 1, 0) for word, n in counts.items())


def engine_fit(counts: dict, merges: int, end_of_word, backend: str, min_frequency: int = 1):
    data, starts = word_engines.flatten(list(counts))
    return word_engines.fit(data, starts, array("q", counts.values()), merges,
                            end_of_word=end_of_word, min_frequency=min_frequency, backend=backend)


@pytest.mark.parametrize("backend", WORD_BACKENDS)
@given(st.dictionaries(WORDS, COUNTS, max_size=8), st.integers(0, 40), END_OF_WORD)
def test_engine_equals_naive_rule_for_rule(backend, counts, merges, end_of_word):
    if windows(counts, end_of_word) > MAX_COUNT:
        with pytest.raises(ValueError, match="2\\*\\*63 - 1"):
            bytepair.train_words(counts, merges, end_of_word=end_of_word)
        return
    assert engine_fit(counts, merges, end_of_word, backend) == naive_words(counts, merges, end_of_word)


@needs_compiled
@given(st.dictionaries(st.text(st.sampled_from("ab"), max_size=9), st.integers(1, 3), max_size=6),
       st.sampled_from([None, "a", "b", "</w>"]))
def test_compiled_invariants_after_every_merge(counts, end_of_word):
    from bytepair.learn._words import WordEngine

    data, starts = word_engines.flatten(list(counts))
    eow = end_of_word.encode() if end_of_word else None
    engine = WordEngine(data, starts, array("q", counts.values()), eow)
    engine.check()
    expected, sequences = naive_words(counts, 100, end_of_word)
    for rule in expected:
        lefts, rights, won, replaced = engine.fit(1)
        engine.check()
        assert (engine.symbol(lefts[0]), engine.symbol(rights[0]), won[0], replaced[0]) == (
            rule.left, rule.right, rule.count, rule.replacements)
    assert engine.fit(1) == (array("I"), array("I"), array("q"), array("q"))
    assert engine.sequences() == sequences


@needs_compiled
@pytest.mark.parametrize(("what", "message"), [("count", "miscounted"), ("queue", "queued below"),
                                               ("words", "misses a word"), ("heap", "out of order")])
def test_check_fails_on_a_corrupted_engine(what, message):
    from bytepair.learn._words import WordEngine

    # "ab" twice outranks "ba" once and every other pair: the heap has an order to break.
    engine = WordEngine(b"abab" b"bc" b"cd", array("q", [0, 4, 6, 8]), array("q", [3, 2, 1]), None)
    engine.check()
    engine._tamper(what)
    with pytest.raises(AssertionError, match=message):
        engine.check()


@pytest.mark.parametrize("backend", WORD_BACKENDS)
def test_min_frequency_stops_early(backend):
    counts = {"aab": 3, "ab": 1, "cd": 2}
    rules, _ = engine_fit(counts, 10, None, backend, min_frequency=2)
    assert [(m.left, m.right, m.count) for m in rules] == [("a", "b", 4), ("a", "ab", 3), ("c", "d", 2)]


@pytest.mark.parametrize("text", [KJV, MULTILINGUAL])
@needs_compiled
def test_compiled_equals_the_python_loop_on_real_text(text):
    counts = Counter(text.read_text("utf-8").split())
    compiled = engine_fit(counts, 1500, "</w>", "compiled")
    assert compiled == engine_fit(counts, 1500, "</w>", "python")
    rules, sequences = compiled
    # All 1500 rules, or every word is one symbol (no pair left).
    assert len(rules) == 1500 or all(len(seq) == 1 for seq in sequences)


@needs_compiled
def test_compiled_equals_the_python_loop_on_the_whole_bible():
    with gzip.open(KJV_REST_GZ, "rt", encoding="utf-8") as handle:
        counts = Counter(handle.read().split()) + Counter(KJV.read_text("utf-8").split())
    assert engine_fit(counts, 8000, "</w>", "compiled") == engine_fit(counts, 8000, "</w>", "python")


def test_learn_bpe_and_encode_keep_their_semantics():
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    assert bytepair.learn_bpe(counts, 4) == [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")]
    model = bytepair.train_words(counts, 10, end_of_word="</w>")
    assert model == bytepair.train_words(counts, 10, end_of_word="</w>", engine="naive")
    assert model.words == bytepair.train_words(counts, 10, end_of_word="</w>", engine="naive").words
    for word in counts:
        assert tuple(model.encode(word)) == model.words[word]
    assert bytepair.encode("lowest", model.rules, end_of_word="</w>") == model.encode("lowest")


@pytest.mark.parametrize("backend", WORD_BACKENDS)
def test_backend_is_chosen_like_byte_mode(backend, monkeypatch):
    monkeypatch.setenv("BYTEPAIR_BACKEND", backend)
    assert word_engines.word_backend() == backend
    monkeypatch.setattr(word_engines, "WordEngine", None)
    monkeypatch.delenv("BYTEPAIR_BACKEND")
    monkeypatch.setattr("bytepair.learn.incremental._CompiledEngine", None)
    with pytest.warns(RuntimeWarning, match="pure-Python"):
        assert word_engines.word_backend() == "python"
    with pytest.raises(ImportError, match="compiled word engine"):
        word_engines.word_backend("compiled")


# --- counting words from a corpus -------------------------------------------

SPACES = st.sampled_from([" ", "\n", "\t", "\r\n", "\u3000", "\u00a0", "\u2028", "\x1c", "\u0085",
                          "\u200b", "\u180e", "\ufeff"])  # the last three are not white space


@given(st.lists(st.one_of(st.text(LETTERS, min_size=1, max_size=4), SPACES), max_size=20))
def test_words_are_what_str_split_gives(parts):
    text = "".join(parts)
    data, starts, counts = count_words([text])
    found = {data[a:b].decode(): n for a, b, n in zip(starts, starts[1:], counts)}
    assert found == Counter(text.split())


@pytest.mark.parametrize("workers", [1, 2, 3, 4])
def test_any_number_of_workers_gives_the_same_model(workers, tmp_path):
    text = KJV.read_bytes()[:120_000] + MULTILINGUAL.read_bytes()
    path = tmp_path / "corpus.txt"
    path.write_bytes(text)
    data, starts, counts = count_words(str(path), workers=workers, block_bytes=4096)
    found = {data[a:b].decode(): n for a, b, n in zip(starts, starts[1:], counts)}
    expected = Counter(text.decode().split())
    assert found == expected
    model = bytepair.learn_words(str(path), 300, end_of_word="</w>", workers=workers)
    assert model == bytepair.train_words(expected, 300, end_of_word="</w>")


def test_gzip_corpus_and_documents_in_memory(tmp_path):
    text = "low lower\nnewest widest\n" * 3
    path = tmp_path / "corpus.txt.gz"
    path.write_bytes(gzip.compress(text.encode()))
    expected = bytepair.train_words(Counter(text.split()), 20)
    assert bytepair.learn_words(str(path), 20) == expected
    assert bytepair.learn_words(text.splitlines(), 20) == expected


def test_invalid_utf8_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good words\nbad \xff here\n")
    with pytest.raises(ValueError, match=r"bad\.txt: invalid UTF-8 at byte offset 15"):
        bytepair.learn_words(str(path), 5)


def test_empty_corpus_is_refused(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b" \n\t\n")
    with pytest.raises(ValueError, match="no words"):
        bytepair.learn_words(str(path), 5)


@needs_compiled
@pytest.mark.parametrize(("data", "starts", "weights", "message"), [
    (b"ab\xff", [0, 3], [1], "invalid UTF-8 at byte offset 2"),
    ("é".encode(), [0, 1, 2], [1, 1], "cuts a UTF-8 character"),
    (b"ab", [0, 3], [1], "outside 0..2"),
    (b"ab", [0, 2], [0], "weights\\[0\\] must be positive"),
    (b"ab", [0, 1, 2], [1], "one offset per word"),
])
def test_engine_refuses_bad_arrays(data, starts, weights, message):
    from bytepair.learn._words import WordEngine

    with pytest.raises(ValueError, match=message):
        WordEngine(data, array("q", starts), array("q", weights), None)


def test_documents_in_memory_name_the_bad_one():
    with pytest.raises(ValueError, match=r"corpus\[1\]: invalid UTF-8 at byte offset 1"):
        count_words([b"fine", b"a\xffb"])
    data, starts, counts = count_words([b"a b", "b \u3000c"])
    assert sorted(zip((data[a:b] for a, b in zip(starts, starts[1:])), counts)) == [
        (b"a", 1), (b"b", 2), (b"c", 1)]
