"""Shared fixtures, and the two depths of the suite.

The default run (``python -m pytest -n 2``, the README's command) is the fast one: the
Hypothesis profile ``fast``. CI runs the profile ``thorough`` (``HYPOTHESIS_PROFILE=thorough``,
or ``--hypothesis-profile thorough``): more examples. Every engine test runs against both
pair-engine backends.
"""

import os

import pytest
from hypothesis import settings

from helpers import KJV


# The differential tests draw from tiny alphabets, so ties and runs like ``aaaa`` fill even
# a few dozen examples; the thorough profile is what the suite ran by default before.
settings.register_profile("fast", max_examples=40, deadline=None)
settings.register_profile("thorough", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

BACKENDS = ["compiled", "python"]
if os.environ.get("BYTEPAIR_SKIP_COMPILED"):
    BACKENDS.remove("compiled")


@pytest.fixture(params=BACKENDS)
def backend(request, monkeypatch):
    """Name of a pair-engine backend; the default engine is pinned to it too."""
    monkeypatch.setenv("BYTEPAIR_BACKEND", request.param)
    return request.param


@pytest.fixture(scope="session")
def real_text() -> bytes:
    """King James Version, Genesis and Exodus, one verse per line (about 360 KB)."""
    return KJV.read_bytes()
