"""One run serves every smaller size: truncate(n) equals training to n from scratch."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair

uses_fixtures = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

TEXTS = st.lists(
    st.lists(st.sampled_from(["a", "b", "ab", " ", "é", "日本", "\n", "<|x|>"]), max_size=12)
    .map("".join),
    min_size=1, max_size=6,
)


@uses_fixtures
@given(documents=TEXTS, merges=st.integers(0, 30), pretokenize=st.sampled_from([None, "gpt2"]),
       data=st.data())
def test_hyp_byte_model_truncate_equals_a_smaller_fit(backend, documents, merges, pretokenize, data):
    big = bytepair.train_bytes(documents, merges, pretokenize=pretokenize)
    size = data.draw(st.integers(0, len(big.merges)), label="size")
    small = big.truncate(size)
    assert small == bytepair.train_bytes(documents, size, pretokenize=pretokenize)
    assert small.merges == big.merges[:size] and small.pattern == big.pattern
    assert small.vocab_size == 256 + size
    assert small.sequences is None


@uses_fixtures
@given(documents=TEXTS.filter(lambda docs: any(docs)), extra=st.integers(0, 40),
       special=st.lists(st.sampled_from(["<|x|>", "<|end|>", "[PAD]"]), unique=True, max_size=3),
       min_frequency=st.integers(1, 3), data=st.data())
def test_hyp_tokenizer_truncate_equals_a_smaller_run(backend, documents, extra, special,
                                                     min_frequency, data):
    least = 256 + len(special)
    big = bytepair.train(documents, vocab_size=least + extra, special_tokens=special,
                         min_frequency=min_frequency, progress=False, workers=1)
    vocab_size = data.draw(st.integers(least, big.vocab_size), label="vocab_size")
    small = big.truncate(vocab_size)
    assert small == bytepair.train(documents, vocab_size=vocab_size, special_tokens=special,
                                   min_frequency=min_frequency, progress=False, workers=1)
    assert small.vocab_size == vocab_size
    # The special tokens keep their order and follow the learned tokens.
    first = 256 + len(small.merges)
    assert small.special_tokens == {token: first + i for i, token in enumerate(special)}
    ids = small.encode("".join(special), allowed_special="all")
    assert ids == list(range(first, first + len(special)))


@uses_fixtures
@given(counts=st.dictionaries(st.text(alphabet="abé", max_size=7), st.integers(1, 9), max_size=6),
       end_of_word=st.sampled_from([None, "</w>", "b"]), merges=st.integers(0, 20), data=st.data())
def test_hyp_word_model_truncate_equals_a_smaller_fit(backend, counts, end_of_word, merges, data):
    big = bytepair.train_words(counts, merges, end_of_word=end_of_word)
    size = data.draw(st.integers(0, len(big.merges)), label="size")
    small = big.truncate(size)
    assert small == bytepair.train_words(counts, size, end_of_word=end_of_word)
    assert small.rules == big.rules[:size] and small.words is None


def test_truncate_refuses_sizes_it_cannot_give():
    model = bytepair.train_bytes(["abab", "aab"], 3)
    with pytest.raises(ValueError, match=r"merges must be <= 3"):
        model.truncate(4)
    with pytest.raises(ValueError, match="merges must be >= 0"):
        model.truncate(-1)
    with pytest.raises(TypeError, match="merges must be an int"):
        model.truncate(2.0)
    tok = bytepair.train(["abab aab"], vocab_size=260, special_tokens=["<s>"], progress=False)
    with pytest.raises(ValueError, match="vocab_size must be <= 260"):
        tok.truncate(261)
    with pytest.raises(ValueError, match="vocab_size must be >= 257"):
        tok.truncate(256)
    words = bytepair.train_words({"abab": 2}, 2)
    with pytest.raises(ValueError, match="merges must be <= 2"):
        words.truncate(3)
