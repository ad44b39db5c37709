"""Whether to import the compiled extensions: the one place that reads ``BYTEPAIR_NO_EXTENSIONS``."""

from __future__ import annotations

import os


def extensions_wanted() -> bool:
    """False when ``BYTEPAIR_NO_EXTENSIONS`` is set (to anything but ``0``): every module then
    uses its pure-Python twin, as a pure-Python install does."""
    return os.environ.get("BYTEPAIR_NO_EXTENSIONS", "") in ("", "0")
