"""Hostile and failing inputs: files built to exhaust memory or time, and workers that fail.

Each test holds a bound that an attacker's file (or a dying worker) must not break:
memory measured in a fresh process, time as a ratio between two sizes, hangs as a
timeout around a loop of runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zlib

import pytest

import bytepair
from bytepair.counts.piece_counts import CountsFormatError, PieceCounts
from bytepair.formats.load import ModelFormatError

MIB = 1 << 20


def _peak_rss_mib(script: str, *args: str) -> float:
    """Run ``script`` in a fresh interpreter; the peak resident memory it reported, in MiB."""
    measure = script + "\nimport resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    done = subprocess.run([sys.executable, "-c", measure, *args], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1]) / 1024  # ru_maxrss is in KiB on Linux


def test_a_count_file_that_inflates_1000_times_is_refused_in_bounded_memory(tmp_path):
    """A zlib bomb: 200 KB on disk, 200 MiB inflated, behind a header that declares 13 bytes."""
    PieceCounts({b"a": 1}, pattern=None).save(tmp_path / "ok.counts")
    line = (tmp_path / "ok.counts").read_bytes().split(b"\n")[0] + b"\n"
    inflated = 200 * MIB
    compressor = zlib.compressobj(9)
    body = compressor.compress(line)
    body += b"".join(compressor.compress(bytes(MIB)) for _ in range(inflated // MIB))
    body += compressor.flush()
    bomb = tmp_path / "bomb.counts"
    bomb.write_bytes(line + body)
    assert inflated / bomb.stat().st_size > 1000

    with pytest.raises(CountsFormatError, match="more than the 13 bytes the header says"):
        PieceCounts.load(bomb)
    script = (
        "import sys\n"
        "from bytepair.counts.piece_counts import CountsFormatError, PieceCounts\n"
        "try:\n"
        "    PieceCounts.load(sys.argv[1])\n"
        "except CountsFormatError:\n"
        "    pass\n"
        "else:\n"
        "    sys.exit('the bomb loaded')\n"
    )
    assert _peak_rss_mib(script, str(bomb)) < 100


def _refusal_seconds(path, repeats: int = 5) -> float:
    """The fastest of ``repeats`` refusals of the model file ``path``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        with pytest.raises(ModelFormatError):
            bytepair.load(path)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("unit", [b'\\"', b'"', b'\\', b'["', b'[\\"'])
def test_hostile_model_files_are_refused_in_time_linear_in_their_size(tmp_path, unit):
    """An unterminated string of ``\\"`` pairs made the nesting pre-scan quadratic
    (80 KB: half a minute). Ten times the file must cost about ten times the time,
    not a hundred; the absolute bound is loose, for a loaded machine."""
    head = b'{"format": "bytepair-model", "version": 1, "kind": "bytes", "pattern": "'
    seconds = {}
    for size in (8_000, 80_000):
        path = tmp_path / f"m{size}.json"
        path.write_bytes(head + unit * (size // len(unit)))
        seconds[size] = _refusal_seconds(path)
    assert seconds[80_000] < 1.0
    assert seconds[80_000] / seconds[8_000] < 20, seconds


def test_a_deep_file_behind_strings_with_escapes_is_still_measured(tmp_path):
    """The scan drops strings, escaped quotes included, and still sees the nesting around them."""
    deep = "[" * 40 + json.dumps('a "quoted" \\ [[[ string') + "]" * 40
    path = tmp_path / "deep.json"
    path.write_text('{"format": "bytepair-model", "version": 1, "kind": "bytes", "merges": ' + deep + "}")
    with pytest.raises(ModelFormatError, match="nested deeper than 32"):
        bytepair.load(path)
    shallow = "[" * 3 + json.dumps('"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"') + "]" * 3
    path.write_text('{"format": "bytepair-model", "version": 1, "kind": "bytes", "merges": ' + shallow + "}")
    with pytest.raises(ModelFormatError, match="bad merge entry"):
        bytepair.load(path)
