"""``IncrementalEngine.release``: the engine is freed (on a thread in SuperBPE's
stage 2) and left empty, on both backends."""

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn.incremental import IncrementalEngine
from helpers import KJV

# The backend fixture only pins an environment variable: the same for every example.
uses_backend = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
SEQUENCES = st.lists(st.lists(st.sampled_from([97, 98, 32]), max_size=12), min_size=1, max_size=8)


def byte_token(left, right, rank):
    return 256 + rank


@uses_backend
@given(sequences=SEQUENCES, merges=st.integers(0, 6))
def test_release_leaves_an_empty_engine(backend, sequences, merges):
    trainer = IncrementalEngine(sequences, [1] * len(sequences), byte_token, backend=backend)
    trainer.steps(merges)
    assert len(trainer.sequences()) == len(sequences)
    trainer.release()
    assert trainer._engine.check() == ({}, {})
    assert trainer.sequences() == []


@pytest.mark.parametrize("on_thread", [True, False])
def test_superbpe_frees_its_engine_the_same_either_way(monkeypatch, on_thread):
    # A large engine is freed on a thread (here: any engine), a small one at once.
    from bytepair.learn import incremental

    lines = KJV.read_text(encoding="utf-8").splitlines()[:300]
    expected = bytepair.train(lines, vocab_size=600, superbpe=500, progress=False)
    started = []
    monkeypatch.setattr(incremental, "RELEASE_ON_THREAD_POSITIONS", 0 if on_thread else 10**12)
    monkeypatch.setattr(threading.Thread, "start",
                        lambda self, start=threading.Thread.start: (started.append(self), start(self)))
    tok = bytepair.train(lines, vocab_size=600, superbpe=500, progress=False)
    releases = [t for t in started if t.name == "bytepair-release"]
    assert len(releases) == (1 if on_thread else 0)
    for thread in releases:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert tok.merges == expected.merges


@uses_backend
@given(sequences=SEQUENCES, merges=st.integers(0, 6))
def test_an_engine_without_its_sequences_learns_the_same_and_refuses_them(backend, sequences,
                                                                        merges):
    from array import array

    def arrays():
        starts = array("q", [0])
        for seq in sequences:
            starts.append(starts[-1] + len(seq))
        return [array("I", [t for seq in sequences for t in seq]), starts,
                array("q", [1 + k % 3 for k in range(len(sequences))])]

    with_them = IncrementalEngine.taking_arrays(arrays(), byte_token, backend=backend)
    without = IncrementalEngine.taking_arrays(arrays(), byte_token, backend=backend,
                                               sequences=False)
    assert without.steps(merges) == with_them.steps(merges)
    without._check()
    with pytest.raises(ValueError, match="sequences=False"):
        without.sequences()
