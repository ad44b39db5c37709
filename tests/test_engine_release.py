"""``IncrementalTrainer.release``: the engine is freed (on a thread in SuperBPE's
stage 2) and left empty, on both backends."""

import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.learn.incremental import IncrementalTrainer
from helpers import KJV

# The backend fixture only pins an environment variable: the same for every example.
uses_backend = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
SEQUENCES = st.lists(st.lists(st.sampled_from([97, 98, 32]), max_size=12), min_size=1, max_size=8)


def byte_token(left, right, rank):
    return 256 + rank


@uses_backend
@given(sequences=SEQUENCES, merges=st.integers(0, 6))
def test_release_leaves_an_empty_engine(backend, sequences, merges):
    trainer = IncrementalTrainer(sequences, [1] * len(sequences), byte_token, backend=backend)
    trainer.steps(merges)
    assert len(trainer.sequences()) == len(sequences)
    trainer.release()
    assert trainer._engine.check() == ({}, {})
    assert trainer.sequences() == []


def test_superbpe_frees_its_engine_on_a_thread_that_ends():
    lines = KJV.read_text(encoding="utf-8").splitlines()[:300]
    tok = bytepair.train(lines, vocab_size=600, superbpe=500, progress=False)
    released = [t for t in threading.enumerate() if t.name == "bytepair-release"]
    for thread in released:
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert len(tok.merges) == 600 - 256
