"""The cold cut: training on the stretches between rare pairs learns the naive trainer's rules.

The floor is forced (from 2 up to above every count) on tiny alphabets full of
ties and runs, so that both the cut run and the second run on the whole
sequences, which follows when the cut run stops short, are taken often.
"""

from array import array
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn import naive, segments
from bytepair.learn.incremental import IncrementalEngine
from bytepair.learn.rules import replace_pair
from bytepair.learn.superbpe import words_in, fit_naive, shapes
from bytepair.split.pretokenize import PATTERNS
from helpers import KJV, MULTILINGUAL

SEQUENCES = st.lists(st.lists(st.sampled_from([97, 98, 32, 10, 300]), max_size=12), max_size=8)
fixtures_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(params=["compiled", "python"])
def cut(request, monkeypatch):
    """Which cut runs: the compiled one (when built) or the plain one."""
    if request.param == "compiled" and segments._compiled_cut is None:
        pytest.skip("the compiled extensions are not built")
    if request.param == "python":
        monkeypatch.setattr(segments, "_compiled_cut", None)
    return request.param


def flat(sequences, wide=True):
    ids = [t for s in sequences for t in s]
    tokens = array("I", ids) if wide else bytes(ids)
    starts = array("q", [0])
    for s in sequences:
        starts.append(starts[-1] + len(s))
    return tokens, starts


def token_bytes_of(sequences_max: int = 300) -> list[bytes]:
    # Token 300 stands for a two-word token (shapes need bytes for every ID).
    out = [bytes([b]) for b in range(256)] + [b"?"] * (sequences_max - 256)
    out.append(b"x y")
    return out


def word_cap_reference(sequences, weights, merges, max_words):
    token_bytes = token_bytes_of()

    def join(left, right, rank):
        token_bytes.append(token_bytes[left] + token_bytes[right])
        return 301 + rank

    def eligible(left, right):
        return max_words is None or words_in(token_bytes[left] + token_bytes[right]) <= max_words

    rules, _ = naive.fit(sequences, weights, merges, join, eligible=eligible)
    return rules


def train_with_cut(sequences, weights, merges, *, floor, min_frequency, max_words, backend):
    """segments.fit over flat ``sequences``; returns the rules and each run's min_frequency."""
    runs = []

    def current(learned):
        # The sequences with the learned rules applied, as training replaces.
        seqs = [list(s) for s in sequences]
        token_bytes = token_bytes_of()
        for rule in learned:
            seqs = [replace_pair(s, rule.left, rule.right, rule.token_id)[0] for s in seqs]
            token_bytes.append(token_bytes[rule.left] + token_bytes[rule.right])
        tokens, starts = flat(seqs)
        word_limit = None if max_words is None else (shapes(token_bytes), max_words)
        return [tokens, starts, array("q", weights)], word_limit

    def build(tokens, starts, weights, learned, word_limit):
        return IncrementalEngine.from_arrays(tokens, starts, weights, lambda l, r, rank: 301 + rank,
                                              backend=backend, first_rank=len(learned),
                                              word_limit=word_limit)

    def run(trainer, learned, min_frequency):
        runs.append(min_frequency)
        return trainer.steps(merges - len(learned), min_frequency)

    rules = segments.fit(current, merges, build, run, min_frequency=min_frequency, floor=floor)
    return rules, runs


@fixtures_ok
@given(SEQUENCES, st.integers(0, 25), st.integers(0, 7), st.integers(1, 3),
       st.sampled_from([None, 1, 2]), st.sampled_from([1, 2, 4]))
def test_fit_equals_naive_at_any_floor(cut, backend, monkeypatch, sequences, merges, floor,
                                       min_frequency, max_words, divisor):
    # Divisor 1 puts each later floor at the count of the last rule still to
    # come, so that runs stop short and the sequences are cut again, often.
    monkeypatch.setattr(segments, "FLOOR_DIVISOR", divisor)
    weights = [1 + i % 3 for i in range(len(sequences))]
    want = word_cap_reference(sequences, weights, merges, max_words)
    want = want[:next((i for i, m in enumerate(want) if m.count < min_frequency), len(want))]
    got, runs = train_with_cut(sequences, weights, merges, floor=floor, min_frequency=min_frequency,
                               max_words=max_words, backend=backend)
    assert got == want
    assert runs == sorted(runs, reverse=True) and len(set(runs)) == len(runs)  # floors fall


def test_runs_that_stop_short_cut_again_at_falling_floors(cut, backend, monkeypatch):
    monkeypatch.setattr(segments, "FLOOR_DIVISOR", 1)
    sequences = [[32, 32, 97, 98, 32, 97, 32, 98, 32], [98, 98, 32, 32, 32, 32],
                 [97, 98, 32, 97, 32, 32, 98, 32, 97, 98, 32], [97, 32, 98, 98, 97, 97, 32, 97, 98, 98],
                 [32, 98, 32, 32, 98, 97, 98, 98, 98, 97, 98, 32], [], [32, 97, 32, 32],
                 [97, 98, 97, 32, 98, 97]]
    weights = [1 + i % 3 for i in range(len(sequences))]
    got, runs = train_with_cut(sequences, weights, 12, floor=6, min_frequency=1, max_words=None,
                               backend=backend)
    assert runs == [6, 3, 2]  # two more cuts after the first run stopped short
    assert got == word_cap_reference(sequences, weights, 12, None)


@fixtures_ok
@given(SEQUENCES, st.integers(0, 25), st.integers(2, 7), st.sampled_from([None, 2]))
def test_the_cut_run_alone_is_exact_above_the_floor(cut, sequences, merges, floor, max_words):
    # The lemma itself: on the stretches, with min_frequency = floor, the rules are
    # the naive ones up to the first rule counted below the floor.
    weights = [1 + i % 3 for i in range(len(sequences))]
    want = word_cap_reference(sequences, weights, merges, max_words)
    want = want[:next((i for i, m in enumerate(want) if m.count < floor), len(want))]
    tokens, starts = flat(sequences)
    word_limit = None if max_words is None else (shapes(token_bytes_of()), max_words)
    got_floor, arrays = segments.cut_cold(tokens, starts, array("q", weights), merges,
                                          floor=floor, word_limit=word_limit)
    assert got_floor == floor and arrays is not None
    trainer = IncrementalEngine.from_arrays(*arrays, lambda l, r, rank: 301 + rank,
                                             word_limit=word_limit)
    assert trainer.steps(merges, floor) == want


@given(SEQUENCES, st.integers(2, 7), st.booleans())
def test_the_cut_keeps_every_hot_window_and_cuts_inside_sequences(sequences, floor, wide):
    sequences = [[t % 256 for t in s] for s in sequences] if not wide else sequences
    weights = array("q", [1 + i % 3 for i in range(len(sequences))])
    tokens, starts = flat(sequences, wide)
    before = segments.pair_counts(tokens, starts, weights)
    hot = {pair: c for pair, c in before.items() if c >= floor}
    for cut in (segments.cut_cold, segments.cut_cold_py):
        got_floor, (kept, kept_starts, kept_weights) = cut(tokens, starts, weights, 5, floor=floor)
        assert got_floor == floor
        assert type(kept) is (array if wide else bytearray)
        after = segments.pair_counts(kept, kept_starts, kept_weights)
        # Every hot window is kept with its weight; a cold one at most a few times
        # by the compiled cut (its set of hot pairs may say "maybe").
        assert {pair: c for pair, c in after.items() if pair in hot} == hot
        assert all(c <= before[pair] for pair, c in after.items())
        if cut is segments.cut_cold_py:
            assert set(after) == set(hot)
        # Each stretch is two or more tokens found in a sequence of its weight.
        for s, w in enumerate(kept_weights):
            stretch = list(kept[kept_starts[s]:kept_starts[s + 1]])
            assert len(stretch) >= 2
            assert any(weights[k] == w and any(seq[i:i + len(stretch)] == stretch
                                              for i in range(len(seq)))
                       for k, seq in enumerate(sequences))


@given(SEQUENCES, st.integers(2, 7), st.booleans())
def test_two_threads_cut_the_same_stretches(sequences, floor, wide):
    if segments._compiled_cut is None:
        pytest.skip("the compiled extensions are not built")
    sequences = [[t % 256 for t in s] for s in sequences] if not wide else sequences
    weights = array("q", [1 + i % 3 for i in range(len(sequences))])
    tokens, starts = flat(sequences, wide)
    one = segments.cut_cold(tokens, starts, weights, 5, floor=floor, threads=1)
    assert segments.cut_cold(tokens, starts, weights, 5, floor=floor, threads=2) == one


def test_two_threads_cut_real_text_the_same(real_text):
    docs = real_text.splitlines()
    data, offsets, weights = bytepair.count(docs, pretokenize="superbpe", progress=False).flat()
    tokens, starts = bytepair.train(docs, vocab_size=1256, progress=False).model.encode_spans(
        data, offsets)
    one = segments.cut_cold(tokens, starts, weights, 1000, threads=1)
    assert one[0] > 1
    assert segments.cut_cold(tokens, starts, weights, 1000, threads=2) == one


@given(SEQUENCES, st.integers(1, 30), st.sampled_from([None, 1, 2]))
def test_compiled_and_plain_cut_choose_the_same_floor(sequences, merges, max_words):
    if segments._compiled_cut is None:
        pytest.skip("the compiled extensions are not built")
    weights = array("q", [1 + i % 4 for i in range(len(sequences))])
    tokens, starts = flat(sequences)
    word_limit = None if max_words is None else (shapes(token_bytes_of()), max_words)
    counts = segments.pair_counts(tokens, starts, weights)
    want = max(1, segments.choose_floor(counts, merges, word_limit=word_limit))
    assert segments.cut_cold(tokens, starts, weights, merges, word_limit=word_limit)[0] == want
    assert segments.cut_cold_py(tokens, starts, weights, merges, word_limit=word_limit)[0] == want


def test_choose_floor_is_the_merges_th_count_over_the_divisor():
    counts = Counter({(1, 2): 100, (2, 3): 40, (3, 4): 40, (4, 5): 9})
    assert segments.choose_floor(counts, 1, divisor=4) == 25
    assert segments.choose_floor(counts, 3, divisor=4) == 10
    assert segments.choose_floor(counts, 4, divisor=4) == 2
    assert segments.choose_floor(counts, 5, divisor=4) == 0  # fewer pairs than merges: no cut
    assert segments.choose_floor(counts, 3) == 40 // segments.FLOOR_DIVISOR


def test_shapes_must_cover_every_token(cut):
    tokens, starts = flat([[97, 400]])
    with pytest.raises(ValueError, match="shapes: 301 given, but the sequences hold token 400"):
        segments.cut_cold(tokens, starts, array("q", [1]), 1, floor=2,
                          word_limit=(shapes(token_bytes_of()), 2))


def test_a_floor_of_one_cuts_nothing(cut):
    tokens, starts = flat([[97, 98, 97]])
    assert segments.cut_cold(tokens, starts, array("q", [1]), 1, floor=1) == (1, None)


# -- SuperBPE's stage 2 with the floor forced high: the same model as the reference --

GPT2, SUPERBPE = PATTERNS["gpt2"], PATTERNS["superbpe"]
UNITS = ["a", "b", "ab", " ", "  ", ",", "!!", "1", "\n", "é"]
TEXTS = st.lists(st.lists(st.sampled_from(UNITS), max_size=14).map("".join), max_size=6)


def reference(docs, transition, vocab, max_words):
    rules, _ = fit_naive(docs, transition - 256, vocab - 256, pretokenize=GPT2,
                         superbpe_pretokenize=SUPERBPE, max_words=max_words)
    return [tuple(m) for m in rules]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
          max_examples=max(10, settings.default.max_examples // 4))
@given(TEXTS, st.integers(256, 280), st.integers(1, 40), st.integers(1, 3))
def test_superbpe_with_the_floor_forced_high_equals_reference(cut, monkeypatch, docs, transition,
                                                              extra, max_words):
    monkeypatch.setattr(segments, "FLOOR_DIVISOR", 1)
    if not "".join(docs):
        return
    vocab = transition + extra
    tok = bytepair.train(docs, vocab_size=vocab, superbpe=transition, max_words=max_words,
                         progress=False, workers=1)
    assert [tuple(m) for m in tok.merges] == reference(docs, transition, vocab, max_words)


@pytest.mark.slow
@pytest.mark.parametrize("divisor", [1, 2, 4])
@pytest.mark.parametrize("path", [KJV, MULTILINGUAL], ids=["english", "multilingual"])
def test_superbpe_on_real_text_equals_reference(monkeypatch, divisor, path):
    monkeypatch.setattr(segments, "FLOOR_DIVISOR", divisor)
    docs = path.read_text(encoding="utf-8").splitlines()[:150]
    tok = bytepair.train(docs, vocab_size=450, superbpe=330, max_words=3, progress=False)
    assert [tuple(m) for m in tok.merges] == reference(docs, 330, 450, 3)


def test_real_text_cut_run_is_taken_and_cuts_positions():
    # On real text the cut run learns every rule by itself (no second run),
    # from fewer positions than the whole sequences hold, and the rules
    # are those of the engine over the whole sequences.
    docs = KJV.read_text(encoding="utf-8").splitlines()
    model = bytepair.train(docs, vocab_size=2256, progress=False).model
    data, offsets, weights = bytepair.count(docs, pretokenize="superbpe", progress=False).flat()
    tokens, starts = model.encode_spans(data, offsets)
    merges = 1000
    floor, (kept, _, _) = segments.cut_cold(tokens, starts, weights, merges)
    assert floor > 1 and len(kept) < len(tokens)
    runs = []

    def current(learned):
        assert not learned  # one run only
        return [tokens, starts, weights], None

    def build(tokens, starts, weights, learned=(), word_limit=None):
        return IncrementalEngine.from_arrays(tokens, starts, weights,
                                              lambda l, r, rank: model.vocab_size + rank)

    def run(trainer, learned, min_frequency):
        runs.append(min_frequency)
        return trainer.steps(merges, min_frequency)

    got = segments.fit(current, merges, build, run)
    assert runs == [floor]
    assert got == build(tokens, starts, weights).steps(merges)
