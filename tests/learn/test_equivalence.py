"""The incremental engine equals the naive reference, field for field.

Inputs are drawn from tiny alphabets, so that ties and runs (``aaaa``) are the
common case; corpora hold empty and repeated documents, and most merge counts
run past the point where no pair is left.
"""

import os
from array import array

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn import naive
from bytepair.learn import words as word_engines
from bytepair.learn.incremental import IncrementalEngine
from bytepair.learn.rules import packed_priority, replace_pair, unpack_priority
from helpers import byte_token

# The ``backend`` fixture only sets an environment variable, which is the same
# for every example, so sharing it across examples is safe.
uses_backend = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
# This module is the Python twin's claim, so the default run keeps its cases too.
pytestmark = pytest.mark.twin

# Units a document is spelled with: ASCII, a space, the extreme byte values,
# and multi-byte UTF-8 (two, three and four bytes).
BYTE_ALPHABETS = [
    [b"a", b"b"],
    [b"a", b" ", b"b"],
    [b"\x00", b"\xff"],
    ["é".encode(), b"e"],
    ["日".encode(), "本".encode()],
    ["😀".encode(), b"a"],
]
WORD_ALPHABETS = ["ab", "a b", "é", "eé", "日本", "a😀"]
END_OF_WORD = [None, "</w>", "_", "a", "b", "ab"]  # some collide with letters on purpose
MERGES = st.integers(min_value=0, max_value=40)


def runs(units):
    """A unit repeated: ``aaaa``, the overlap case."""
    return st.builds(lambda unit, n: unit * n, st.sampled_from(units), st.integers(0, 12))


@st.composite
def corpora(draw):
    """A list of documents, bytes or str, with empty and repeated documents likely."""
    units = draw(st.sampled_from(BYTE_ALPHABETS))
    spelled = st.lists(st.sampled_from(units), max_size=10).map(b"".join)
    pool = draw(st.lists(st.one_of(spelled, runs(units)), min_size=1, max_size=4))
    documents = draw(st.lists(st.sampled_from(pool), max_size=8))
    if draw(st.booleans()):
        # One frequent pattern next to rare pairs: the incremental trainer
        # then starts with a queue floor above 1 and must lower it later.
        pattern = draw(st.lists(st.sampled_from(units), min_size=1, max_size=3).map(b"".join))
        documents.append(pattern * draw(st.integers(64, 200)))
    mixed = []
    for document in documents:
        as_str = draw(st.booleans())
        try:
            mixed.append(document.decode("utf-8") if as_str else document)
        except UnicodeDecodeError:
            mixed.append(document)
    return mixed


WEIGHTS = st.one_of(st.integers(1, 4), st.integers(2**31, 2**40))


@st.composite
def word_counts(draw):
    """A ``str -> count`` mapping over a tiny alphabet, weights up to 2**40."""
    alphabet = draw(st.sampled_from(WORD_ALPHABETS))
    word = st.one_of(st.text(alphabet, max_size=10), runs(alphabet))
    return draw(st.dictionaries(word, WEIGHTS, max_size=6))


def assert_same_byte_fit(documents, merges):
    expected = bytepair.train_bytes(documents, merges, engine="naive")
    actual = bytepair.train_bytes(documents, merges, engine="incremental")
    assert actual.merges == expected.merges
    assert actual.sequences == expected.sequences


def assert_same_word_fit(counts, merges, end_of_word):
    expected = bytepair.train_words(counts, merges, end_of_word=end_of_word, engine="naive")
    actual = bytepair.train_words(counts, merges, end_of_word=end_of_word, engine="incremental")
    assert actual.merges == expected.merges
    assert actual.words == expected.words


@uses_backend
@given(documents=corpora(), merges=MERGES)
def test_hyp_byte_mode_equals_naive(backend, documents, merges):
    assert_same_byte_fit(documents, merges)


@uses_backend
@given(counts=word_counts(), merges=MERGES, end_of_word=st.sampled_from(END_OF_WORD))
def test_hyp_word_mode_equals_naive(backend, counts, merges, end_of_word):
    assert_same_word_fit(counts, merges, end_of_word)


@pytest.mark.parametrize(
    "documents",
    [
        [b"a" * 17],
        [b"a" * 16, b"a" * 16, b""],
        [b"ab" * 9 + b"a", b"ba" * 5],
        [b"", b"", b""],
        ["日本語の日本", "😀😀😀😀", "é" * 7],
        [bytes(range(256)), bytes(range(255, -1, -1))],
    ],
    ids=["run17", "duplicate-runs", "alternating", "all-empty", "utf8", "all-bytes"],
)
def test_byte_mode_examples_equal_naive(backend, documents):
    assert_same_byte_fit(documents, 1000)


def test_word_weights_near_the_64_bit_limit_equal_naive(backend):
    assert_same_word_fit({"ab": 2**63 - 1}, 5, None)
    # 4 + 3 windows with "</w>": 7 * 2**60 weighted pairs, just under 2**63.
    assert_same_word_fit({"aaaa": 2**60, "aab": 2**60}, 5, "</w>")


# --- the invariant check ----------------------------------------------------


def byte_trainer(documents, backend):
    return IncrementalEngine(documents, [1] * len(documents), byte_token,
                              backend=backend)


@uses_backend
@given(documents=corpora())
def test_hyp_check_holds_after_every_step(backend, documents):
    documents = [d.encode() if isinstance(d, str) else d for d in documents]
    trainer = byte_trainer(documents, backend)
    trainer._check()
    rules, replay = [], [list(d) for d in documents]
    while (rule := trainer.step()) is not None:
        trainer._check()
        rules.append(rule)
        # After each step the sequences equal a literal replay of the rules so far.
        replay = [replace_pair(s, rule.left, rule.right, rule.token_id)[0] for s in replay]
        assert trainer.sequences() == replay
    trainer._check()
    expected, _ = naive.fit(documents, [1] * len(documents), 10**6, byte_token)
    assert rules == expected


@uses_backend
@given(counts=word_counts(), end_of_word=st.sampled_from(END_OF_WORD))
def test_hyp_check_holds_after_every_step_in_word_mode(backend, counts, end_of_word, monkeypatch):
    # Word mode's Python loop builds its trainer inside bytepair.learn.words.fit: check
    # it at every step there (the compiled word engine has its own check, test_words_engine).
    step = IncrementalEngine.step
    calls = []

    def checked_step(trainer, *args):
        calls.append(trainer)
        trainer._check()
        rule = step(trainer, *args)
        trainer._check()
        return rule

    with monkeypatch.context() as patch:
        patch.setattr(IncrementalEngine, "step", checked_step)
        data, starts = word_engines.flatten(list(counts))
        checked, _ = word_engines.fit(data, starts, array("q", counts.values()), 10**6,
                                      end_of_word=end_of_word, backend="python")
    expected = bytepair.train_words(counts, 10**6, end_of_word=end_of_word, engine="naive")
    assert checked == expected.merges
    assert len(calls) == len(checked) + 1  # the last step finds no pair


# Ways to corrupt a trainer that _check() must notice. Each takes a byte-mode
# trainer that has learned a few rules and still has pairs queued. Its queue
# holds packed priorities with lazy deletion: an entry is current when its
# count is the pair's queued count in the engine.
def current_entry(trainer, minimum=1):
    """``(count, left, right)`` of a current queue entry counted at least ``minimum``."""
    queued = trainer._engine.check()[1]
    return next(
        (c, left, right) for c, left, right in map(unpack_priority, trainer._queue)
        if queued.get((left, right)) == c >= minimum
    )


def queue_drop_entry(trainer):
    trainer._queue.remove(packed_priority(*current_entry(trainer)))


def queue_wrong_count(trainer):
    count, left, right = current_entry(trainer, 2)
    trainer._queue.remove(packed_priority(count, left, right))
    trainer._queue.add(packed_priority(count - 1, left, right))


def engine_wrong_count(trainer):
    pair = next(iter(trainer._engine._count))
    trainer._engine._count[pair] += 1


def engine_unindexed_occurrence(trainer):
    pair = next(iter(trainer._engine._count))
    trainer._engine._where[pair].clear()


def engine_broken_link(trainer):
    engine = trainer._engine
    i = next(i for i, j in enumerate(engine._next) if j >= 0)
    engine._prev[engine._next[i]] = -1


def engine_queued_below_count(trainer):
    # Lower a pair's queued count below its true count, consistently in the
    # queue and in the engine: only the last invariant can catch it.
    count, left, right = next(
        (c, left, right) for c, left, right in map(unpack_priority, trainer._queue)
        if trainer._engine.count(left, right) == c >= 2
    )
    trainer._queue.remove(packed_priority(count, left, right))
    trainer._queue.add(packed_priority(count - 1, left, right))
    trainer._engine._queued[(left, right)] = count - 1


QUEUE_TAMPERING = [
    pytest.param(queue_drop_entry, "queue and engine disagree", id="dropped-entry"),
    pytest.param(queue_wrong_count, "queue and engine disagree", id="wrong-count"),
]
ENGINE_TAMPERING = [
    pytest.param(engine_wrong_count, "differ from a recount", id="wrong-count"),
    pytest.param(engine_unindexed_occurrence, "not indexed", id="unindexed"),
    pytest.param(engine_broken_link, "links disagree", id="broken-link"),
    pytest.param(engine_queued_below_count, "below its count", id="queued-below-count"),
]


def trainer_mid_fit(backend):
    # Counts that stay >= 2 for a few rounds, so a lowered count stays positive.
    trainer = byte_trainer([b"abcabcabcabd" * 3, b"aaaaaaa", b"abab"], backend)
    for _ in range(2):
        assert trainer.step() is not None
    trainer._check()
    assert len(trainer._queue) > 1
    return trainer


@pytest.mark.parametrize(("tamper", "message"), QUEUE_TAMPERING)
def test_check_fails_on_a_corrupted_queue(backend, tamper, message):
    trainer = trainer_mid_fit(backend)
    tamper(trainer)
    with pytest.raises(AssertionError, match=message):
        trainer._check()


@pytest.mark.parametrize(("tamper", "message"), ENGINE_TAMPERING)
def test_check_fails_on_a_corrupted_python_engine(tamper, message):
    # The compiled engine's state is not reachable from Python; its twin's is.
    trainer = trainer_mid_fit("python")
    tamper(trainer)
    with pytest.raises(AssertionError, match=message):
        trainer._check()


# --- real text --------------------------------------------------------------


@pytest.mark.slow
def test_real_text_thousand_merges_equal_naive(real_text, monkeypatch):
    if os.environ.get("BYTEPAIR_SKIP_COMPILED"):
        pytest.skip("BYTEPAIR_SKIP_COMPILED is set")
    monkeypatch.setenv("BYTEPAIR_BACKEND", "compiled")
    # The first 1,000 verses (about 130 KB of 360): the naive trainer costs merges x corpus,
    # and 1,000 merges on this much real text already reach long tokens and rare pairs.
    lines = real_text.split(b"\n")[:1000]
    expected = bytepair.train_bytes(lines, 1000, engine="naive")
    actual = bytepair.train_bytes(lines, 1000, engine="incremental")
    assert len(expected.merges) == 1000
    assert max(len(expected.token_bytes(t)) for t in range(256, 1256)) >= 10
    assert actual.merges == expected.merges
    assert actual.sequences == expected.sequences


def test_leftover_entries_are_dropped_at_the_front(backend):
    # Entries that are not current (a pair re-queued since, or never queued
    # at that count) are what lazy deletion leaves behind: _check accepts
    # them, and the fit skips them and still equals naive.
    documents = [b"abcabcabcabd" * 3, b"aaaaaaa", b"abab"]
    trainer = trainer_mid_fit(backend)
    count, left, right = current_entry(trainer)
    trainer._queue.add(packed_priority(count + 5, left, right))
    trainer._queue.add(packed_priority(count + 1, 10**6, 10**6 + 1))
    trainer._check()
    rules = trainer.steps(10**6)
    trainer._check()
    expected, _ = naive.fit(documents, [1] * len(documents), 10**6, byte_token)
    assert rules == expected[2:]
