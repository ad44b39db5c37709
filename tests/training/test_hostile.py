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
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.counts.piece_counts import CountsFormatError, PieceCounts
from bytepair.formats.load import ModelFormatError, depth_exceeds
from helpers import damaged_parquet, peak_rss_mib

MIB = 1 << 20


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
    assert peak_rss_mib(script, str(bomb)) < 100


def _refusal_seconds(path, repeats: int = 7) -> float:
    """The least CPU time of ``repeats`` refusals of the model file ``path`` (CPU time: the
    other processes of a loaded machine do not count)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        with pytest.raises(ModelFormatError):
            bytepair.load(path)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("unit", [b'\\"', b'"', b'\\', b'["', b'[\\"'])
def test_hostile_model_files_are_refused_in_time_linear_in_their_size(tmp_path, unit):
    """An unterminated string of ``\\"`` pairs made the nesting pre-scan quadratic
    (80 KB: half a minute). Sixteen times the file must cost about sixteen times the time:
    the bound, 64, is halfway (geometrically) to the 256 of quadratic time, and leaves room
    for a loaded machine; the absolute bound is as loose."""
    head = b'{"format": "bytepair-model", "version": 1, "kind": "bytes", "pattern": "'
    seconds = {}
    for size in (10_000, 160_000):
        path = tmp_path / f"m{size}.json"
        path.write_bytes(head + unit * (size // len(unit)))
        seconds[size] = _refusal_seconds(path)
    assert seconds[160_000] < 1.0
    assert seconds[160_000] / seconds[10_000] < 64, seconds


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


_tricky = st.text(alphabet='[]{}"\\ab\u00e9', max_size=8)
_json_values = st.recursive(_tricky | st.integers(),
                            lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(_tricky, inner, max_size=3), max_leaves=20)


@given(_json_values, st.booleans())
def test_the_depth_scan_measures_valid_json_exactly(value, ascii_only):
    """Strings full of brackets, quotes and backslashes never count as nesting."""
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    depth = _depth(value)
    for limit in range(depth + 2):
        assert depth_exceeds(data, limit) == (depth > limit)


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


#: Counts a damaged Parquet file again and again with two worker processes; a run that
#: has not ended after the timeout dumps every thread's stack and exits with code 1.
_COUNT_LOOP = """
import faulthandler, sys
import bytepair
path, runs = sys.argv[1], int(sys.argv[2])
for run in range(runs):
    faulthandler.dump_traceback_later(30, exit=True)
    try:
        bytepair.count(path, workers=2, progress=False)
    except ValueError as exc:
        assert "d.parquet: row group 3 is unreadable" in str(exc), exc
    else:
        sys.exit("a damaged file was counted")
    faulthandler.cancel_dump_traceback_later()
print("runs", runs)
"""


@pytest.mark.slow
def test_a_failing_worker_pool_never_hangs(tmp_path):
    """300 counts of a damaged Parquet file with two worker processes, all ending with the
    error: shutting down a multiprocessing.Pool after a worker's error hung in about 1 run
    of 100 (it waited for a queue lock held by a worker it had killed)."""
    damaged = damaged_parquet(tmp_path / "d.parquet")
    # Two loops side by side: the machine's two cores, and workers forked while others exit.
    loops = [subprocess.Popen([sys.executable, "-c", _COUNT_LOOP, str(damaged), "150"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for loop in loops:
        out, err = loop.communicate(timeout=600)
        assert loop.returncode == 0 and out.split() == ["runs", "150"], err[-3000:]


#: Counts with worker processes, one of which kills itself (SIGKILL) at its first task.
_DYING_WORKER = """
import os, signal, sys
import bytepair
from bytepair.counts import counting
parent = os.getpid()
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[1] == "files":
    counting.part_into = die
    bytepair.count(sys.argv[2], workers=2, progress=False)
else:
    counting.count_documents = die
    bytepair.count(["some text"] * 100_000, pretokenize=r"\\w+|\\W+", workers=2, progress=False)
"""


@pytest.mark.parametrize("what", ["files", "documents"])
def test_a_worker_that_dies_ends_the_count_with_one_message(tmp_path, what):
    """A worker killed by a signal used to be replaced by multiprocessing.Pool, and its
    task waited for for ever."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(f'{{"text": "line {i}"}}\n' for i in range(50_000)))
    done = subprocess.run([sys.executable, "-c", _DYING_WORKER, what, str(corpus)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    name = "c.jsonl (part from" if what == "files" else "corpus"
    assert last.startswith("OSError: ") and name in last, done.stderr
    assert "a worker process ended abruptly while counting" in last
