"""Backend choice, the import fallback, and the two PairEngine twins agreeing."""

import importlib.machinery
import os
from array import array
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.learn import _engine_py
from bytepair.learn import incremental
from helpers import byte_token, needs_compiled



@pytest.fixture
def no_override(monkeypatch):
    """No BYTEPAIR_BACKEND: the backend is chosen the way a user gets it."""
    monkeypatch.delenv("BYTEPAIR_BACKEND", raising=False)


# --- which backend runs -----------------------------------------------------


@needs_compiled
def test_compiled_engine_is_used_after_a_normal_install(no_override):
    from bytepair.learn import _engine

    # A real extension module inside the installed package, not a Python file.
    assert _engine.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    assert Path(_engine.__file__).parent == Path(bytepair.__file__).parent / "learn"
    assert incremental.default_backend() == "compiled"
    assert incremental.engine_class(None) is _engine.PairEngine
    trainer = incremental.IncrementalEngine([b"aaa", b"aba"], [1, 1], byte_token)
    assert type(trainer._engine) is _engine.PairEngine


def test_fallback_to_python_warns(no_override, monkeypatch):
    monkeypatch.setattr(incremental, "_CompiledEngine", None)
    with pytest.warns(RuntimeWarning, match="pure-Python"):
        assert incremental.default_backend() == "python"
    with pytest.warns(RuntimeWarning, match="compiled engine"):
        model = bytepair.train_bytes(["aaa", "aba"], 2)
    assert model.merges == bytepair.train_bytes(["aaa", "aba"], 2, engine="naive").merges


def test_naive_engine_needs_no_backend(no_override, monkeypatch):
    # Only the incremental engine needs a pair engine, so only it warns.
    monkeypatch.setattr(incremental, "_CompiledEngine", None)
    model = bytepair.train_bytes(["aaa", "aba"], 2, engine="naive")
    assert model.sequences == [[256, 97], [257, 97]]


def test_missing_compiled_engine_cannot_be_forced(monkeypatch):
    monkeypatch.setattr(incremental, "_CompiledEngine", None)
    monkeypatch.setitem(incremental.BACKENDS, "compiled", None)
    monkeypatch.setenv("BYTEPAIR_BACKEND", "compiled")
    with pytest.raises(ImportError, match="compiled"):
        incremental.engine_class(None)


def test_environment_picks_the_python_backend_without_warning(monkeypatch):
    monkeypatch.setenv("BYTEPAIR_BACKEND", "python")
    monkeypatch.setattr(incremental, "_CompiledEngine", None)
    assert incremental.default_backend() == "python"  # filterwarnings=error: no warning
    assert incremental.engine_class(None) is _engine_py.PairEngine


def test_unknown_backend_names_the_variable(monkeypatch):
    monkeypatch.setenv("BYTEPAIR_BACKEND", "fortran")
    with pytest.raises(ValueError, match="BYTEPAIR_BACKEND"):
        bytepair.train_bytes(["aaa"], 1)
    with pytest.raises(ValueError, match="backend"):
        incremental.engine_class("fortran")


def test_backend_fixture_pins_the_trainer(backend):
    trainer = incremental.IncrementalEngine([b"ab"], [1], byte_token)
    assert type(trainer._engine) is incremental.BACKENDS[backend]


# --- the twins behave identically -------------------------------------------


@st.composite
def engine_inputs(draw):
    """Tokens laid end to end, sequence offsets and weights, in either token form."""
    symbols = draw(st.sampled_from([[0, 1], [97, 98, 32], [255, 0], [7, 2**31 - 1]]))
    sequences = draw(st.lists(st.lists(st.sampled_from(symbols), max_size=12), max_size=6))
    weights = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(2**31, 2**40)),
                            min_size=len(sequences), max_size=len(sequences)))
    starts = [0]
    for sequence in sequences:
        starts.append(starts[-1] + len(sequence))
    flat = [t for sequence in sequences for t in sequence]
    if max(flat, default=0) < 256 and draw(st.booleans()):
        tokens = bytes(flat)  # the byte-mode form
    else:
        tokens = array("I", flat)
    return tokens, array("q", starts), array("q", weights), symbols


def assert_twins_agree(compiled, python):
    assert compiled.sequences() == python.sequences()
    assert compiled.check() == python.check()


# Floors below, between and above the drawn weights.
FLOORS = st.sampled_from([1, 2, 3, 5, 2**31, 2**41])
CALLS = ["merge", "merge", "merge", "requeue", "count", "raise_above", "max_count"]


@needs_compiled
@given(engine_inputs(), st.data())
def test_hyp_twins_agree_call_for_call(inputs, data):
    from bytepair.learn._engine import PairEngine as Compiled

    tokens, starts, weights, symbols = inputs
    compiled = Compiled(tokens, starts, weights)
    python = _engine_py.PairEngine(tokens, starts, weights)
    assert_twins_agree(compiled, python)
    # Hash-map order differs between the twins: compare these lists as sets.
    if data.draw(st.booleans(), label="queue everything first"):
        assert sorted(compiled.pair_counts()) == sorted(python.pair_counts())
    else:
        floor = data.draw(FLOORS, label="floor")
        assert sorted(compiled.raise_above(floor)) == sorted(python.raise_above(floor))
    assert_twins_agree(compiled, python)

    next_id = 2**20
    for _ in range(data.draw(st.integers(0, 12), label="calls")):
        live = sorted(python.check()[0])
        # Mostly pairs that occur; sometimes one that does not.
        pair = data.draw(
            st.sampled_from(live) if live and data.draw(st.integers(0, 4)) else
            st.tuples(st.sampled_from(symbols), st.sampled_from(symbols)),
            label="pair",
        )
        call = data.draw(st.sampled_from(CALLS), label="call")
        if call == "merge":
            # Usually a fresh symbol; in word mode a join can also reuse an existing one.
            new = data.draw(
                st.sampled_from([next_id] + [s for s in symbols if s not in pair]), label="new"
            )
            next_id += 1
            symbols = symbols + [new] if new not in symbols else symbols
            floor = data.draw(FLOORS, label="floor")
            assert compiled.merge(*pair, new, floor) == python.merge(*pair, new, floor)
        elif call == "raise_above":
            floor = data.draw(FLOORS, label="floor")
            assert sorted(compiled.raise_above(floor)) == sorted(python.raise_above(floor))
        elif call == "max_count":
            assert compiled.max_count() == python.max_count()
        else:
            assert getattr(compiled, call)(*pair) == getattr(python, call)(*pair)
        assert_twins_agree(compiled, python)


@needs_compiled
@pytest.mark.parametrize(
    ("starts", "weights"),
    [([0, 2], [1, 1]), ([0, 3], [1]), ([0, 1, 4], [1])],
    ids=["weights-too-many", "starts-past-end", "starts-too-many"],
)
def test_twins_reject_inconsistent_offsets(starts, weights):
    from bytepair.learn._engine import PairEngine as Compiled

    for engine in (Compiled, _engine_py.PairEngine):
        with pytest.raises(ValueError, match="starts"):
            engine(array("I", [97, 98]), array("q", starts), array("q", weights))
