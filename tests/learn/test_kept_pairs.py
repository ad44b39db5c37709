"""The engine forgets pairs too rare to be learned above its keep floor; the rules stay exact.

The floor is forced far higher than training would set it, on tiny alphabets
full of ties and runs, so that new pairs are dropped, kept pairs are forgotten
when the table would grow, and every pair is counted again when the rules come
down to the floor.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn import loop
from bytepair.learn import incremental, naive
from helpers import KJV, byte_token

# Three letters: ties and runs; twelve: many pairs, so that the table grows
# (and forgets the pairs below the floor first) while the floor is up.
documents = st.sampled_from([3, 12]).flatmap(lambda letters: st.lists(
    st.binary(max_size=24).map(lambda b: bytes(x % letters + 97 for x in b)), max_size=8))


def compiled_trainer(docs, weights):
    if incremental.BACKENDS["compiled"] is None:
        pytest.skip("the compiled extensions are not built")
    return incremental.IncrementalEngine(docs, weights, byte_token, backend="compiled")


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.integers(0, 30), st.lists(st.integers(0, 12), min_size=1, max_size=30),
       st.integers(1, 3))
def test_rules_equal_naive_whatever_the_keep_floor(docs, merges, floors, min_frequency):
    weights = [1 + i % 3 for i in range(len(docs))]
    want, want_seqs = naive.fit(docs, weights, merges, byte_token)
    want = want[:next((i for i, m in enumerate(want) if m.count < min_frequency), len(want))]
    trainer = compiled_trainer(docs, weights)
    got = []
    for k in range(merges):
        rules = trainer.steps(1, min_frequency)
        trainer._check()
        if not rules:
            break
        got += rules
        trainer.keep_pairs_from(floors[k % len(floors)])
        trainer._check()
    assert got == want
    if len(got) == len(want) == merges:
        assert trainer.sequences() == want_seqs


def test_a_rule_below_the_keep_floor_counts_every_pair_again():
    docs = [b"abababab", b"abcabc", b"ccccab", b"aabbcc"]
    weights = [3, 2, 1, 1]
    want, _ = naive.fit(docs, weights, 12, byte_token)
    trainer = compiled_trainer(docs, weights)
    got = trainer.steps(1)
    trainer.keep_pairs_from(got[0].count)  # far above the rules still to come
    assert trainer._engine.keep_floor == got[0].count
    got += trainer.steps(11)
    trainer._check()
    assert got == want
    assert trainer._engine.recounts == 1 and trainer._engine.keep_floor == 0
    trainer.keep_pairs_from(100)  # after a recount every pair is kept
    assert trainer._engine.keep_floor == 0


def test_kept_pairs_below_the_floor_are_forgotten_when_the_table_would_grow():
    docs = [bytes(97 + (i * 7 + j * 3) % 23 for j in range(40)) for i in range(30)]
    weights = [1 + i % 4 for i in range(len(docs))]
    want, _ = naive.fit(docs, weights, 60, byte_token)
    trainer = compiled_trainer(docs, weights)
    got = trainer.steps(5)
    trainer.keep_pairs_from(3)
    got += trainer.steps(55)
    trainer._check()
    assert got == want
    assert trainer._engine.forgotten > 0


def test_the_keep_floor_only_rises():
    trainer = compiled_trainer([b"abcabcabd"], [1])
    trainer.steps(1)
    trainer.keep_pairs_from(3)
    trainer.keep_pairs_from(2)
    assert trainer._engine.keep_floor == 3


def test_keep_floor_needs_the_engines_queue():
    if incremental.BACKENDS["compiled"] is None:
        pytest.skip("the compiled extensions are not built")
    engine = incremental.BACKENDS["compiled"](b"abab", [0, 4], [1])
    with pytest.raises(RuntimeError, match="open_queue"):
        engine.keep_pairs_from(2)


@pytest.mark.parametrize("factor", [0.5, 1, 2, 8])
def test_training_with_a_keep_floor_guessed_too_high_gives_the_same_model(monkeypatch, factor):
    # The training's guess multiplied: too high (1 to 8 times the last rule's
    # count) makes the engine count every pair again; the model is the same.
    docs = KJV.read_text(encoding="utf-8").splitlines()
    want = bytepair.train(docs, vocab_size=1500, progress=False).merges
    guess = loop.kept_pairs_floor
    monkeypatch.setattr(loop, "kept_pairs_floor",
                        lambda count, learned, merges: int(factor * count) or guess(
                            count, learned, merges))
    monkeypatch.setattr(loop, "LEARN_CHUNK", 64)
    assert bytepair.train(docs, vocab_size=1500, progress=False).merges == want


def test_the_guess_stays_below_the_last_rule_on_real_text():
    # On real text the guess never makes the engine count again.
    docs = KJV.read_text(encoding="utf-8").splitlines()
    rules = bytepair.train(docs, vocab_size=3256, progress=False).merges
    last = rules[-1].count
    for k in range(1024, len(rules) + 1, 1024):
        assert loop.kept_pairs_floor(rules[k - 1].count, k, len(rules)) <= last


@pytest.mark.parametrize("backend_name", ["compiled", "python"])
def test_taking_arrays_empties_the_list_and_trains_as_from_arrays(backend_name):
    if incremental.BACKENDS[backend_name] is None:
        pytest.skip("the compiled extensions are not built")
    data, starts, weights = bytepair.count(KJV.read_text(encoding="utf-8").splitlines()[:300],
                                           progress=False).flat()
    arrays = [data, starts, weights]
    taken = incremental.IncrementalEngine.taking_arrays(arrays, byte_token, backend=backend_name)
    assert arrays == []
    given = incremental.IncrementalEngine.from_arrays(data, starts, weights, byte_token,
                                                      backend=backend_name)
    assert taken.steps(200) == given.steps(200)


def test_the_guess_counts_from_the_engines_own_rules(monkeypatch):
    # SuperBPE's stage 2 and a warm start go on from rules learned before; the
    # guess must use the rules of this engine only, or it rises too fast and
    # the engine counts every pair again (the same model, but slower).
    if incremental.BACKENDS["compiled"] is None:
        pytest.skip("the compiled extensions are not built")
    engines = []
    run = loop.run

    def recorded(trainer, *args, **kwargs):
        out = run(trainer, *args, **kwargs)
        engines.append((trainer._engine.keep_floor, trainer._engine.recounts))
        return out

    monkeypatch.setattr(loop, "run", recorded)
    docs = KJV.read_text(encoding="utf-8").splitlines()
    bytepair.train(docs, vocab_size=4000, superbpe=3000, progress=False, workers=1)
    small = bytepair.train(docs, vocab_size=2000, progress=False, workers=1)
    bytepair.train(docs, vocab_size=4000, init=small, progress=False, workers=1)
    assert len(engines) == 4
    assert all(recounts == 0 for _, recounts in engines), engines
    assert max(floor for floor, _ in engines) > 1, engines  # some pairs were not kept
