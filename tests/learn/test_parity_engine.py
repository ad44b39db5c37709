"""The parity-aware engine equals the naive parity reference, rule for rule.

Corpora in 2 to 5 languages, each spelled with a tiny alphabet (so ties and runs
like ``aaaa`` are the common case), some sharing units with others, some with
multi-byte UTF-8, empty and repeated pieces, and languages with so little text
that they run out of pairs long before the others.
"""

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair.learn import parity, parity_naive
from bytepair.learn.parity_rules import GLOBAL, Selector, ratio_scores
from helpers import examples

uses_backend = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])

ALPHABETS = [
    [b"a", b"b"],
    [b"a", b" ", b"b"],
    [b"\x00", b"\xff"],
    ["é".encode(), b"e"],
    ["日".encode(), "本".encode()],
    ["😀".encode(), b"a"],
    ["н".encode(), "и".encode(), b" "],
]


def join(left, right, rank):
    return 256 + rank


@st.composite
def language(draw, units):
    """``(pieces, weights)``: pieces spelled with ``units``, runs, empties, repeats."""
    spelled = st.lists(st.sampled_from(units), max_size=8).map(b"".join)
    run = st.builds(lambda u, n: u * n, st.sampled_from(units), st.integers(0, 10))
    pool = draw(st.lists(st.one_of(spelled, run), min_size=1, max_size=4))
    pieces = draw(st.lists(st.sampled_from(pool), max_size=6))
    weights = draw(st.lists(st.integers(1, 5), min_size=len(pieces), max_size=len(pieces)))
    if draw(st.booleans()) and pieces:
        # One frequent piece next to rare ones: the queue starts with a floor above 1.
        weights[0] *= draw(st.integers(64, 200))
    return pieces, weights


@st.composite
def problems(draw):
    """Training corpora, and a dev set or ratios, for 2 to 5 languages."""
    n = draw(st.integers(2, 5))
    alphabets = [draw(st.sampled_from(ALPHABETS)) for _ in range(n)]
    languages = [draw(language(units)) for units in alphabets]
    options = {"variant": draw(st.sampled_from(["base", "window"]))}
    if options["variant"] == "window":
        options["window_size"] = draw(st.integers(1, 6))
        options["alpha"] = draw(st.sampled_from([0.5, 1.0, 2.0]))
    mode = draw(st.sampled_from(["dev", "ratio", "neither"]))
    if mode == "dev":
        options["dev"] = [draw(language(units)) for units in alphabets]
    elif mode == "ratio":
        options["ratio"] = draw(st.lists(st.sampled_from([0.5, 1.0, 1.0, 2.5]),
                                         min_size=n, max_size=n))
    if draw(st.booleans()):
        options["global_merges"] = draw(st.integers(0, 6))
    merges = draw(st.integers(0, 30))
    min_frequency = draw(st.sampled_from([1, 1, 2, 3]))
    return languages, merges, min_frequency, options


def ran(languages, merges, min_frequency, options, backend, check=False):
    """The fast path's rules, checking every invariant after each step when ``check``."""
    trainer = parity.ParityEngine(languages, join, backend=backend, **options)
    rules = []
    while len(rules) < merges and (rule := trainer.step(min_frequency)) is not None:
        rules.append(rule)
        if check:
            trainer._check()
    trainer.release()
    return rules


@pytest.mark.twin
@uses_backend
@given(problems())
def test_fast_equals_naive(backend, problem):
    languages, merges, min_frequency, options = problem
    expected = parity_naive.fit(languages, merges, join, min_frequency=min_frequency, **options)
    assert ran(languages, merges, min_frequency, options, backend) == expected


@pytest.mark.twin
@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problems())
def test_invariants_hold_after_every_step(backend, problem):
    languages, merges, min_frequency, options = problem
    expected = parity_naive.fit(languages, merges, join, min_frequency=min_frequency, **options)
    assert ran(languages, merges, min_frequency, options, backend, check=True) == expected


@uses_backend
@given(problems(), st.integers(1, 7))
def test_chunks_of_steps_equal_naive(backend, problem, chunk):
    """Many rules per call (the compiled loop's way) equal one rule per call."""
    languages, merges, min_frequency, options = problem
    expected = parity_naive.fit(languages, merges, join, min_frequency=min_frequency, **options)
    trainer = parity.ParityEngine(languages, join, backend=backend, **options)
    rules = []
    while len(rules) < merges:
        learned = trainer.steps(min(chunk, merges - len(rules)), min_frequency)
        rules += learned
        if not learned:
            break
    trainer.release()
    assert rules == expected


@uses_backend
@given(problems())
def test_tokenizers_order_equals_naive(backend, problem):
    """ParityBpeTrainer's tie order (the greatest strings), as the compiled loop spells it
    and as the naive reference keys it."""
    languages, merges, min_frequency, options = problem
    naive_order = parity.TokenizersOrder()
    expected = parity_naive.fit(languages, merges, naive_order.join, min_frequency=min_frequency,
                                key=naive_order.key, **options)
    trainer = parity.ParityEngine(languages, backend=backend, order=parity.TokenizersOrder(),
                                   **options)
    rules = []
    while len(rules) < merges and (rule := trainer.step(min_frequency)) is not None:
        rules.append(rule)
        trainer._check()
    trainer.release()
    assert rules == expected


@uses_backend
@given(problems(), st.sampled_from([1, -1]))
def test_any_tie_order_equals_naive(backend, problem, sign):
    """A tie order given as a key (here: by the token's ID, or reversed) is used by both."""
    languages, merges, min_frequency, options = problem
    key = (lambda symbol: sign * symbol)
    expected = parity_naive.fit(languages, merges, join, min_frequency=min_frequency, key=key, **options)
    trainer = parity.ParityEngine(languages, join, backend=backend, key=key, **options)
    assert trainer.steps(merges, min_frequency) == expected


def test_the_check_can_fail(backend):
    trainer = parity.ParityEngine([([b"abab"], [1]), ([b"cc"], [1])], join,
                                   dev=[([b"ab"], [1]), ([b"cc"], [1])], backend=backend)
    trainer.step()
    trainer._check()
    trainer._dev[1].merge(99, 99, 300)  # behind the loop's back: its length is now wrong
    with pytest.raises(AssertionError, match="length drifted"):
        trainer._check()
    trainer = parity.ParityEngine([([b"abab"], [1]), ([b"cc"], [1])], join,
                                   dev=[([b"ab"], [1]), ([b"cc"], [1])], backend=backend)
    trainer._engines[0].merge(97, 98, 300)  # the engine queues (300, 300); the loop does not
    with pytest.raises(AssertionError, match="queue and engine disagree"):
        trainer._check()


def test_the_compiled_backend_runs_the_compiled_loop():
    pytest.importorskip("bytepair.learn._parity")
    if os.environ.get("BYTEPAIR_SKIP_COMPILED"):
        pytest.skip("BYTEPAIR_SKIP_COMPILED")
    trainer = parity.ParityEngine([([b"ab"], [1]), ([b"cd"], [1])], join,
                                   ratio=[1.0, 1.0], backend="compiled")
    assert type(trainer._loop).__module__ == "bytepair.learn._parity"
    python = parity.ParityEngine([([b"ab"], [1]), ([b"cd"], [1])], join,
                                  ratio=[1.0, 1.0], backend="python")
    assert type(python._loop).__module__ == "bytepair.learn._parity_py"


def test_bad_token_ids_are_refused(backend):
    with pytest.raises(ValueError, match="new token ID"):
        parity.fit([([b"ab"], [1])], 1, lambda l, r, rank: -1, ratio=[1.0], backend=backend)
    with pytest.raises(ValueError, match="order: token 300 has no string"):
        parity.ParityEngine([([[300, 97]], [1])], ratio=[1.0], backend=backend,
                             order=parity.TokenizersOrder())


def test_a_language_that_runs_out_of_pairs_is_passed_over():
    # Language 0's dev text stays longest, but it has only one pair to give.
    rules = parity.fit([([b"ab"], [1]), ([b"cdcdcd"], [1])], 10, join,
                       dev=[([b"abababab"], [1]), ([b"cd"], [1])], backend="python")
    assert [(m.left, m.right, m.language) for m in rules] == [
        (97, 98, 0), (99, 100, 1), (257, 257, 1), (258, 257, 1)]


def test_the_global_phase_uses_summed_counts():
    # Alone, each language prefers its own pair; summed, (a, a) wins (2 + 2 > 3).
    languages = [([b"aa", b"bbbb"], [2, 1]), ([b"aa", b"cccc"], [2, 1])]
    rules = parity.fit(languages, 1, join, dev=languages, global_merges=1, backend="python")
    assert [(m.left, m.right, m.count, m.language) for m in rules] == [(97, 97, 4, GLOBAL)]
    rules = parity.fit(languages, 1, join, dev=languages, backend="python")
    assert [(m.left, m.right, m.count, m.language) for m in rules] == [(98, 98, 3, 0)]


def test_window_passes_over_a_language_past_its_share():
    s = Selector("window", 2, window_size=4, alpha=1.0)  # a share of 0.5
    assert [s.choose([10, 1], set()) for _ in range(6)] == [0, 0, 0, 1, 1, 0]


def test_window_with_every_language_over_its_share_takes_the_last_looked_at():
    s = Selector("window", 2, window_size=2, alpha=0.5)  # a share of 0.25: one win is too many
    assert [s.choose([10, 1], set()) for _ in range(5)] == [0, 1, 1, 0, 1]


def test_ratio_scores_prefer_the_least_compressed_over_its_target():
    assert ratio_scores([100, 100], [50, 80], [2.0, 1.0]) == [-1.0, -1.25]
    assert not any(math.isnan(x) for x in ratio_scores([3], [3], [0.1]))


def test_engines_built_on_threads_equal_naive(backend, monkeypatch):
    """Large corpora's engines are built two at a time (the compiled engine indexes
    without the GIL): the rules are the same."""
    monkeypatch.setattr(parity, "BUILD_ON_THREADS_SEQUENCES", 0)
    languages = [([b"aaab", b"abab", b"ba"], [3, 2, 7]), (["日本日本".encode(), b"ab"], [2, 1]),
                 ([b"hello", b"yellow"], [4, 4])]
    dev = [([b"abab"], [1]), (["日本".encode()], [2]), ([b"low"], [3])]
    expected = parity_naive.fit(languages, 12, join, dev=dev)
    assert parity.fit(languages, 12, join, dev=dev, backend=backend) == expected
