"""The queue floor: pairs below it wait outside the SortedList. Results must not change.

A first floor equal to the greatest count and a divisor of 2 make the floor
drop many times even on tiny inputs.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair.learn import incremental
from bytepair.learn import naive
from helpers import byte_token

documents = st.lists(st.binary(min_size=0, max_size=12).map(lambda b: bytes(x % 3 + 97 for x in b)),
                     max_size=6)


# The fixtures only set module attributes, the same for every example.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents, st.integers(1, 4), st.integers(0, 20), st.integers(1, 4))
def test_low_floor_divisors_keep_results(backend, monkeypatch, docs, weight, merges, min_frequency):
    monkeypatch.setattr(incremental, "FIRST_FLOOR_DIVISOR", 1)
    monkeypatch.setattr(incremental, "FLOOR_DIVISOR", 2)
    weights = [weight + i % 2 for i in range(len(docs))]
    expected, _ = naive.fit(docs, weights, merges, byte_token)
    # min_frequency stops at the first rule seen fewer than min_frequency times.
    cut = next((i for i, m in enumerate(expected) if m.count < min_frequency), len(expected))
    trainer = incremental.IncrementalEngine(docs, weights, byte_token, backend=backend)
    rules = []
    while len(rules) < merges:
        rule = trainer.step(min_frequency)
        trainer._check()
        if rule is None:
            break
        rules.append(rule)
    assert rules == expected[:cut]
    assert trainer.step(min_frequency) is None or len(rules) == merges


def test_floor_starts_above_one_on_skewed_counts(backend):
    # 200 windows of (a, a) and single ones elsewhere: the single ones wait below the floor.
    trainer = incremental.IncrementalEngine([b"a" * 201, b"xyz"], [1, 1], byte_token, backend=backend)
    assert trainer._floor > 1
    assert len(trainer._queue) == 1
    trainer._check()


words = st.dictionaries(
    st.text(alphabet="ab", min_size=0, max_size=8), st.integers(1, 5), max_size=6
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words, st.sampled_from([None, "b", "</w>"]), st.integers(0, 15))
def test_low_floor_divisors_keep_word_mode_results(backend, monkeypatch, counts, end_of_word, merges):
    # In word mode a merge can produce an existing symbol, so a pair below the
    # floor can gain weight while unqueued; the results must not change.
    import bytepair

    monkeypatch.setattr(incremental, "FIRST_FLOOR_DIVISOR", 1)
    monkeypatch.setattr(incremental, "FLOOR_DIVISOR", 2)
    fast = bytepair.train_words(counts, merges, end_of_word=end_of_word, engine="incremental")
    slow = bytepair.train_words(counts, merges, end_of_word=end_of_word, engine="naive")
    assert fast.merges == slow.merges and fast.words == slow.words
