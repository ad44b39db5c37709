"""Shared fixtures: every engine test runs against both pair-engine backends."""

import os

import pytest
from hypothesis import settings

from helpers import KJV


# Example counts scale with HYPOTHESIS_EXAMPLES (default 200); CI keeps the default.
settings.register_profile(
    "bytepair",
    max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "200")),
    deadline=None,
)
settings.load_profile("bytepair")

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
