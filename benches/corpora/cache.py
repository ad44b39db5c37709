"""Where the benchmarks' corpora are kept, and sizes as the benchmarks write them."""

from __future__ import annotations

import os
import re
from pathlib import Path

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_size(text: str | int) -> int:
    """Bytes from ``"0.1MB"``, ``"10 MB"``, ``"512KiB"`` or a plain number.

    >>> parse_size("0.1MB"), parse_size("1 MiB"), parse_size("250")
    (100000, 1048576, 250)
    """
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (try 0.1MB, 10MB, 512KiB)")
    size = round(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError(f"size must be positive, got {text!r}")
    return size


def format_size(size: int) -> str:
    """``100000`` -> ``"0.1 MB"``; decimal megabytes, as in the tables.

    >>> format_size(100_000), format_size(10_000_000), format_size(1234)
    ('0.1 MB', '10 MB', '0.001234 MB')
    """
    return f"{size / 10**6:g} MB"


def cache_dir() -> Path:
    """``$BYTEPAIR_BENCH_CACHE``, else ``~/.cache/bytepair-bench``."""
    override = os.environ.get("BYTEPAIR_BENCH_CACHE")
    return Path(override).expanduser() if override else Path.home() / ".cache" / "bytepair-bench"
