"""Shared fixtures, and the two depths of the suite.

The default run (``python -m pytest -n 2``, the README's command) is the fast one: the
Hypothesis profile ``fast``, and the Python twin of the pair engine only in the tests marked
``twin``. CI runs the profile ``thorough`` (``HYPOTHESIS_PROFILE=thorough``, or
``--hypothesis-profile thorough``): more examples, and every ``backend`` test on both engines.
"""

import os
import signal

import pytest
from hypothesis import settings

from helpers import KJV


# The differential tests draw from tiny alphabets, so ties and runs like ``aaaa`` fill even
# a few dozen examples; the thorough profile is what the suite ran by default before.
settings.register_profile("fast", max_examples=40, deadline=None)
settings.register_profile("thorough", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

# A shell's background job (``cmd &``, ``nohup``) starts with SIGINT ignored, and every process
# a test starts would inherit that: the tests that stop one with Ctrl-C need the default back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

BACKENDS = ["compiled", "python"]
if os.environ.get("BYTEPAIR_SKIP_COMPILED"):
    BACKENDS.remove("compiled")


def thorough() -> bool:
    """Whether this run is CI's thorough one."""
    return settings.get_current_profile_name() == "thorough"


@pytest.fixture(autouse=True)
def signals_left_as_found():
    """A test leaves SIGINT and SIGTERM as it found them: an ignored SIGINT would be inherited
    by every process the later tests of its worker start, and no Ctrl-C would stop them."""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    yield
    after = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    if after != before:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
        pytest.fail(f"the test changed the signal handlers (SIGINT, SIGTERM) from {before} to {after}")


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """Name of a pair-engine backend; the default engine is pinned to it too."""
    monkeypatch.setenv("BYTEPAIR_BACKEND", request.param)
    return request.param


def pytest_collection_modifyitems(config, items):
    # The compiled run proves the features; the twin's own claim is that it equals the
    # reference, which the tests marked ``twin`` hold. The thorough profile runs the twin
    # through every ``backend`` test; so does an install without the compiled engine.
    if thorough() or "compiled" not in BACKENDS:
        return
    dropped = [item for item in items
               if _fixture_backend(item) == "python" and item.get_closest_marker("twin") is None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        kept = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in kept]


def _fixture_backend(item) -> str | None:
    """The engine the ``backend`` fixture gives ``item``; None when the test does not take
    it (or parametrizes an argument of that name itself)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    for mark in item.iter_markers("parametrize"):
        names = mark.args[0]
        if "backend" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return None
    return params.get("backend")


@pytest.fixture(scope="session")
def real_text() -> bytes:
    """King James Version, Genesis and Exodus, one verse per line (about 360 KB)."""
    return KJV.read_bytes()
