"""The engine-driven merge loop (PairEngine.fit) equals the naive reference.

Byte mode hands its priority queue to the pair engine: packed integer
priorities, lazy deletion, many steps per call. These properties drive it in
chunks of random size, with the floor forced low, after a warm start, and the
two engine twins against each other call for call.
"""

from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn import _engine_py
from bytepair.learn import incremental
from bytepair.learn import naive
from bytepair.learn.rules import packed_priority, priority, replace_pair, unpack_priority

from helpers import byte_token, needs_compiled

uses_fixtures = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

# Tiny alphabets, so that ties and runs (`aaaa`) are the common case; multi-byte UTF-8.
UNITS = st.sampled_from([[b"a", b"b"], [b"a", b"a", b" "], ["é".encode(), b"e"],
                         ["日".encode(), "本".encode()], [b"\x00", b"\xff"]])


@st.composite
def weighted_documents(draw):
    """Documents (empty and repeated ones included) with weights, some beyond 2**32."""
    units = draw(UNITS)
    documents = draw(st.lists(
        st.lists(st.sampled_from(units), max_size=14).map(b"".join), max_size=7))
    if documents and draw(st.booleans()):
        documents += draw(st.lists(st.sampled_from(documents), max_size=3))
    weights = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(2**32, 2**40)),
                            min_size=len(documents), max_size=len(documents)))
    return documents, weights


def low_floor(monkeypatch, low: bool) -> None:
    if low:
        # The first floor is the greatest count and halves each time: it drops often.
        monkeypatch.setattr(incremental, "FIRST_FLOOR_DIVISOR", 1)
        monkeypatch.setattr(incremental, "FLOOR_DIVISOR", 2)


@uses_fixtures
@given(data=weighted_documents(), low=st.booleans(), chunks=st.lists(st.integers(0, 5), max_size=8),
       min_frequency=st.integers(1, 3))
def test_hyp_fit_in_chunks_equals_naive(backend, monkeypatch, data, low, chunks, min_frequency):
    documents, weights = data
    low_floor(monkeypatch, low)
    expected, expected_sequences = naive.fit(documents, weights, 10**6, byte_token)
    cut = next((i for i, m in enumerate(expected) if m.count < min_frequency), len(expected))
    trainer = incremental.IncrementalEngine(documents, weights, byte_token, backend=backend)
    rules = []
    for size in chunks + [10**6]:
        got = trainer.steps(size, min_frequency)
        trainer._check()
        assert len(got) <= size
        rules += got
        replay = [list(d) for d in documents]
        for rule in rules:
            replay = [replace_pair(s, rule.left, rule.right, rule.token_id)[0] for s in replay]
        assert trainer.sequences() == replay
    assert rules == expected[:cut]
    assert trainer.steps(5, min_frequency) == []
    if cut == len(expected):
        assert trainer.sequences(release=True) == expected_sequences


@uses_fixtures
@given(data=weighted_documents(), low=st.booleans(), split=st.integers(0, 12))
def test_hyp_warm_start_continues_like_one_run(backend, monkeypatch, data, low, split):
    # A warm start gets the sequences already rewritten by the first rules
    # (as array("I"), as Tokenizer training with init= does) and continues
    # at the next rank: the rest must equal the rest of one naive run.
    documents, weights = data
    low_floor(monkeypatch, low)
    expected, _ = naive.fit(documents, weights, 10**6, byte_token)
    first = expected[:split]
    sequences = [list(d) for d in documents]
    for rule in first:
        sequences = [replace_pair(s, rule.left, rule.right, rule.token_id)[0] for s in sequences]
    trainer = incremental.IncrementalEngine([array("I", s) for s in sequences], weights,
                                             byte_token, backend=backend, first_rank=len(first))
    trainer._check()
    assert trainer.steps(10**6) == expected[len(first):]
    trainer._check()


@uses_fixtures
@given(data=weighted_documents(), low=st.booleans())
def test_hyp_flat_arrays_build_the_same_trainer(backend, monkeypatch, data, low):
    documents, weights = data
    low_floor(monkeypatch, low)
    starts = array("q", [0])
    for d in documents:
        starts.append(starts[-1] + len(d))
    flat = incremental.IncrementalEngine.from_arrays(
        b"".join(documents), starts, array("q", weights), byte_token, backend=backend)
    listed = incremental.IncrementalEngine(documents, weights, byte_token, backend=backend)
    flat._check()
    assert flat.steps(10**6) == listed.steps(10**6)
    assert flat.sequences() == listed.sequences()


@uses_fixtures
@given(documents=st.lists(st.sampled_from([b"", b"aaaa", b"abab", "日本日本".encode(), b"ba"]),
                          max_size=8),
       merges=st.integers(0, 12))
def test_hyp_train_bytes_with_duplicates_equals_naive(backend, documents, merges):
    fast = bytepair.train_bytes(documents, merges)
    slow = bytepair.train_bytes(documents, merges, engine="naive")
    assert fast.merges == slow.merges
    assert fast.sequences == slow.sequences
    # Every document gets its own list, even when documents repeat.
    assert len({id(s) for s in fast.sequences}) == len(documents)


@uses_fixtures
@given(counts=st.dictionaries(st.text(alphabet="abé", max_size=7), st.integers(1, 2**40),
                              max_size=6),
       end_of_word=st.sampled_from([None, "</w>", "b"]), low=st.booleans(),
       merges=st.integers(0, 20))
def test_hyp_word_mode_keeps_string_order(backend, monkeypatch, counts, end_of_word, low, merges):
    # Word mode keeps its own loop, ordered by the symbols' strings.
    low_floor(monkeypatch, low)
    fast = bytepair.train_words(counts, merges, end_of_word=end_of_word)
    slow = bytepair.train_words(counts, merges, end_of_word=end_of_word, engine="naive")
    assert fast.merges == slow.merges and fast.words == slow.words


# --- the packed priority ----------------------------------------------------

IDS = st.integers(0, 2**32 - 1)
COUNTS = st.integers(1, 2**63 - 1)


@given(st.lists(st.tuples(COUNTS, IDS, IDS), min_size=2, max_size=20))
def test_hyp_packed_priority_orders_like_the_tuple(entries):
    assert (sorted(entries, key=lambda e: packed_priority(*e))
            == sorted(entries, key=lambda e: priority(*e)))
    for entry in entries:
        assert unpack_priority(packed_priority(*entry)) == entry


# --- the twins drive the loop identically -----------------------------------


@st.composite
def engine_inputs(draw):
    """Sequences laid end to end, with IDs up to 2**31 - 1 and weights beyond 2**32."""
    symbols = draw(st.sampled_from([[0, 1], [97, 98, 32], [7, 2**31 - 300, 2**31 - 299]]))
    sequences = draw(st.lists(st.lists(st.sampled_from(symbols), max_size=12), max_size=6))
    weights = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(2**31, 2**40)),
                            min_size=len(sequences), max_size=len(sequences)))
    starts = [0]
    for sequence in sequences:
        starts.append(starts[-1] + len(sequence))
    tokens = array("I", [t for sequence in sequences for t in sequence])
    return tokens, array("q", starts), array("q", weights)


@needs_compiled
@given(engine_inputs(), st.sampled_from([1, 2, 3, 2**31, 2**41]),
       st.lists(st.tuples(st.integers(0, 4), st.integers(1, 3), st.sampled_from([2, 8])),
                max_size=6))
def test_hyp_twins_fit_call_for_call(inputs, floor, calls):
    from bytepair.learn._engine import PairEngine as Compiled

    compiled, python = Compiled(*inputs), _engine_py.PairEngine(*inputs)
    compiled.open_queue(floor)
    python.open_queue(floor)
    assert list(compiled.queue) == list(python.queue)
    rank = 0
    # New IDs go up to the top of the engine's range (2**31 - 1).
    join = lambda left, right, r: 2**31 - 290 + r  # noqa: E731
    for max_merges, min_frequency, divisor in calls + [(10**6, 1, 8)]:
        got = compiled.fit(max_merges, min_frequency, join, rank, divisor)
        assert got == python.fit(max_merges, min_frequency, join, rank, divisor)
        rank += len(got[0])
        assert compiled.floor == python.floor
        assert list(compiled.queue) == list(python.queue)
        assert compiled.check() == python.check()
        assert compiled.sequences() == python.sequences()
    assert compiled.sequences(release=True) == python.sequences(release=True)


@pytest.mark.parametrize("twin", ["compiled", "python"])
def test_fit_needs_an_open_queue(twin):
    if incremental.BACKENDS[twin] is None:
        pytest.skip("the compiled engine is not built")
    engine = incremental.BACKENDS[twin](array("I", [97, 97]), array("q", [0, 2]), array("q", [1]))
    with pytest.raises(RuntimeError, match="open_queue"):
        engine.fit(1, 1, byte_token, 0, 8)


def test_tokens_longer_than_a_16_bit_run_equal_naive(backend):
    # The compiled engine marks the consumed run inside a token with its
    # length: runs of 2**17 + 3 bytes merge into tokens of 2**16 and 2**17
    # bytes, whose runs need more than 16 bits.
    documents = [b"a" * (2**17 + 3), b"xa" + b"a" * 70000 + b"ax", b"ab"]
    expected, sequences = naive.fit(documents, [1, 2, 1], 40, byte_token)
    trainer = incremental.IncrementalEngine(documents, [1, 2, 1], byte_token, backend=backend)
    assert trainer.steps(40) == expected
    assert trainer.sequences() == sequences
    trainer._check()


# -- one loop, one protocol ------------------------------------------------------------------

PROTOCOL = [name for name, value in vars(bytepair.learn.loop.Engine).items()
            if not name.startswith("__") and (callable(value) or isinstance(value, property))]


def test_every_engine_offers_what_the_loop_needs(backend):
    from bytepair.learn import parity

    assert {"rank", "positions", "steps", "keep_pairs_from", "release", "_check"} <= set(PROTOCOL)
    engines = [(incremental.IncrementalEngine([b"aaab", b"ab"], [1, 2], byte_token, first_rank=3), 6),
               (parity.ParityEngine([([b"aab"], [1]), ([b"cdcd"], [1])], ratio=[1.0, 1.0]), 7)]
    for engine, positions in engines:
        missing = [name for name in PROTOCOL if not hasattr(engine, name)]
        assert not missing, f"{type(engine).__name__} lacks {missing}"
        first = engine.rank
        rules = bytepair.learn.loop.run(engine, [], 2, 1)
        assert engine.rank == first + len(rules) and rules[0].rank == first
        assert engine.positions == positions
        engine._check()
        engine.release()


@given(weighted_documents(), st.integers(0, 40), st.sampled_from([None, "gpt2"]))
def test_train_bytes_runs_the_merge_loop(documents, merges, pattern):
    from unittest import mock

    documents, _ = documents
    with mock.patch.object(bytepair.learn.loop, "run", wraps=bytepair.learn.loop.run) as spy:
        try:
            model = bytepair.train_bytes(documents, merges, pretokenize=pattern)
        except ValueError:  # not UTF-8 for a pattern, or a pattern that matched nothing
            assert pattern is not None
            return
    reference = bytepair.train_bytes(documents, merges, pretokenize=pattern, engine="naive")
    assert spy.call_count == 1
    assert model.merges == reference.merges and model.sequences == reference.sequences
