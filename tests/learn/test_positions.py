"""The engine's 4-byte positions: consumed runs, sequence ends and the token ID range.

The compiled engine keeps one 32-bit slot per position: a live token below
``2**31``, a consumed position marked with the length of its run, or a barrier
slot between sequences. These tests drive runs that join from both sides
(``aaaa`` merged in several rounds, tokens of every length), check the
engine's invariants after every merge, and hold the result to the naive
trainer. Both twins refuse IDs the slots cannot hold, with the same line.
"""

import os
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair.learn import _engine_py
from bytepair.learn import incremental
from bytepair.learn import naive

from helpers import byte_token, examples

TOP_ID = 2**31 - 1


def engine(backend, tokens, starts, weights):
    if incremental.BACKENDS[backend] is None or (backend == "compiled"
                                                 and os.environ.get("BYTEPAIR_SKIP_COMPILED")):
        pytest.skip("the compiled engine is not built")
    return incremental.BACKENDS[backend](tokens, array("q", starts), array("q", weights))


# Runs of one byte with a few others between them: merges consume runs that
# then join runs on their left and right; empty and repeated documents too.
DOCUMENTS = st.lists(
    st.lists(st.tuples(st.sampled_from(b"aab"), st.integers(1, 40)), max_size=5).map(
        lambda runs: b"".join(bytes([c]) * k for c, k in runs)),
    max_size=6)


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(DOCUMENTS, st.lists(st.integers(1, 3), min_size=6, max_size=6), st.integers(1, 60))
def test_hyp_consumed_runs_equal_naive_with_a_check_after_every_merge(
        backend, documents, weights, merges):
    weights = weights[:len(documents)]
    expected, sequences = naive.fit(documents, weights, merges, byte_token)
    trainer = incremental.IncrementalEngine(documents, weights, byte_token, backend=backend)
    got = []
    for _ in range(merges):
        step = trainer.steps(1)
        if not step:
            break
        got += step
        trainer._check()  # links, markers, counts and the occurrence index
    assert got == expected
    assert trainer.sequences() == sequences


@pytest.mark.parametrize("twin", ["compiled", "python"])
def test_the_top_token_id_is_accepted(twin):
    e = engine(twin, array("I", [TOP_ID, 7, TOP_ID, 7]), [0, 4], [1])
    e.open_queue(1)
    lefts, rights, new_ids, counts, _ = e.fit(5, 1, lambda left, right, rank: TOP_ID - 1 - rank,
                                             0, 8)
    assert (list(lefts), list(rights), list(counts)) == ([TOP_ID, TOP_ID - 1], [7, TOP_ID - 1],
                                                         [2, 1])
    assert e.sequences() == [[TOP_ID - 2]]
    e.check()


@pytest.mark.parametrize("twin", ["compiled", "python"])
def test_a_token_beyond_the_range_is_refused(twin):
    with pytest.raises(ValueError, match=r"^tokens: token ID 2147483648 is too large; "
                                         r"the pair engine holds IDs below 2147483648$"):
        engine(twin, array("I", [97, 2**31]), [0, 2], [1])


@pytest.mark.parametrize("twin", ["compiled", "python"])
@pytest.mark.parametrize("bad", [2**31, 2**32 - 1, -1])
def test_a_join_beyond_the_range_is_refused(twin, bad):
    message = (rf"^new token ID {bad} is out of range: the pair engine holds IDs "
               rf"from 0 to {TOP_ID}$")
    e = engine(twin, array("I", [97, 98, 97, 98]), [0, 4], [1])
    e.open_queue(1)
    with pytest.raises(ValueError, match=message):
        e.fit(3, 1, lambda left, right, rank: bad, 0, 8)
    e = engine(twin, array("I", [97, 98, 97, 98]), [0, 4], [1])
    with pytest.raises(ValueError, match=message):
        e.merge(97, 98, bad)
    # Refused before any change: the sequences are as given.
    assert e.sequences() == [[97, 98, 97, 98]]


def test_both_twins_count_sequence_ends_toward_the_position_limit(monkeypatch):
    # Each sequence takes one more slot (its end); the limit counts both.
    monkeypatch.setattr(_engine_py, "MAX_POSITIONS", 5)
    with pytest.raises(ValueError, match=r"4 token positions in 2 sequences; one engine holds "
                                         r"at most 5 positions and sequence ends together"):
        _engine_py.PairEngine(array("I", [1, 2, 3, 4]), array("q", [0, 2, 4]), array("q", [1, 1]))
    _engine_py.PairEngine(array("I", [1, 2, 3, 4]), array("q", [0, 4]), array("q", [1]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, TOP_ID), min_size=1, max_size=40),
       st.lists(st.integers(0, 39), max_size=400), st.integers(1, 6))
def test_hyp_a_growing_pair_table_finds_every_pair(alphabet, picks, parts):
    # Many distinct pairs of spread-out IDs: the table doubles several times,
    # with probe runs that wrap around its end, while merges add and erase pairs.
    if incremental.BACKENDS["compiled"] is None or os.environ.get("BYTEPAIR_SKIP_COMPILED"):
        pytest.skip("the compiled engine is not built")
    tokens = array("I", [alphabet[p % len(alphabet)] for p in picks])
    starts = sorted({0, len(tokens)} | {len(tokens) * k // parts for k in range(parts)})
    weights = [1 + k % 3 for k in range(len(starts) - 1)]
    engines = [engine(twin, tokens, starts, weights) for twin in ("compiled", "python")]
    results = []
    for e in engines:
        e.open_queue(1)
        results.append(e.fit(60, 1, lambda left, right, rank: TOP_ID - rank, 0, 4))
    assert results[0] == results[1]
    assert engines[0].check() == engines[1].check()
    assert engines[0].sequences() == engines[1].sequences()


# Weights near the lightest go through a counting sort, those far above it through a
# sort; both must lay sequences out heaviest first, ties in the caller's order.
WIDE_WEIGHTS = st.sampled_from([1, 2, 3, 2**16 - 1, 2**16, 2**16 + 1, 2**16 + 2, 10**12, 2**40])


@settings(max_examples=examples(60), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(DOCUMENTS, st.lists(WIDE_WEIGHTS, min_size=6, max_size=6), st.integers(1, 40),
       st.integers(0, 2**20))
def test_hyp_weights_far_apart_equal_naive(backend, documents, weights, merges, shift):
    # ``shift`` moves the lightest weight, so that the counting sort's range starts anywhere.
    weights = [w + shift for w in weights[:len(documents)]]
    expected, sequences = naive.fit(documents, weights, merges, byte_token)
    trainer = incremental.IncrementalEngine(documents, weights, byte_token, backend=backend)
    got = trainer.steps(merges)
    trainer._check()
    assert got == expected
    assert trainer.sequences() == sequences
