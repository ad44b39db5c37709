"""What several test modules share: data paths, the byte-token join, backend marks, a worker spy."""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

import pytest
from hypothesis import settings

from bytepair.counts import counting
from bytepair.split import fastsplit
from bytepair.learn import incremental
from bytepair.counts import sources
from bytepair.cli.main import main

DATA = Path(__file__).parent / "data"
#: King James Version, Genesis and Exodus, one verse per line (about 360 KB).
KJV = DATA / "kjv-genesis-exodus.txt"
#: The rest of the King James Version, gzip-compressed.
KJV_REST_GZ = DATA / "kjv-leviticus-revelation.txt.gz"
#: Short texts in many scripts.
MULTILINGUAL = DATA / "multilingual-sample.txt"

#: Skip a test of the compiled engine when it is absent on purpose (a pure-Python install).
needs_compiled = pytest.mark.skipif(
    bool(os.environ.get("BYTEPAIR_SKIP_COMPILED")) or incremental.BACKENDS["compiled"] is None,
    reason="the compiled extensions are not installed (BYTEPAIR_SKIP_COMPILED or BYTEPAIR_NO_EXTENSIONS)",
)
#: Skip a test of the compiled GPT-2 splitter when it is absent.
needs_compiled_splitter = pytest.mark.skipif(
    not fastsplit.available(), reason="the compiled splitter is not installed"
)


def examples(thorough: int) -> int:
    """A test's own count of Hypothesis examples: ``thorough`` in CI's thorough profile, a fifth
    of it (at least 10) in the default fast one, as the two profiles' defaults are."""
    return thorough if settings.get_current_profile_name() == "thorough" else max(10, thorough // 5)


def sampled(values, keep) -> list:
    """Parameters for a test that runs on every value in CI but only on ``keep`` by default:
    the other values are marked ``slow`` (CI's ``-m ""`` runs them)."""
    missing = set(keep) - set(values)
    assert not missing, f"sampled: {missing} not among the values"
    return [value if value in keep else pytest.param(value, marks=pytest.mark.slow)
            for value in values]


def byte_token(left: int, right: int, rank: int) -> int:
    """The byte-mode join: rule ``rank`` makes token ``256 + rank``."""
    return 256 + rank


class WorkerSpy:
    """Proves that counting ran in workers other than the calling thread, and in how many.

    Installed (by :func:`spy_on_workers`) before the pool starts, it makes each
    worker's first block, part or batch wait until ``workers`` workers have
    started one, so the work is surely shared. A worker is a thread of this process
    (compiled counting) or a forked process; ``reports`` lists the
    ``(pid, thread)`` of every partial table that ``bytepair.train`` summed,
    and ``sizes`` the bytes each covered.
    """

    def __init__(self, workers: int):
        self.reports: list[tuple[int, int]] = []
        self.sizes: list[int] = []
        self.barrier = multiprocessing.get_context("fork").Barrier(workers, timeout=120)
        #: The thread that called ``bytepair.train``: never a worker.
        self.caller = (os.getpid(), threading.get_ident())

    @property
    def workers(self) -> set[tuple[int, int]]:
        return set(self.reports)

    @property
    def processes(self) -> set[int]:
        return {pid for pid, _ in self.reports}

    def shared_by(self, count: int) -> bool:
        """Whether exactly ``count`` workers, none of them the caller, counted everything."""
        return len(self.workers) == count and self.caller not in self.workers


def spy_on_workers(monkeypatch, *, workers: int = 2, part_bytes: int = 1000,
                   batch_chars: int = 2000) -> WorkerSpy:
    """Small blocks, parts and batches for ``bytepair.train``, with a :class:`WorkerSpy` watching."""
    spy = WorkerSpy(workers)
    started = set()  # shared by threads; each forked worker has its own copy

    def first_job_waits() -> None:
        me = (os.getpid(), threading.get_ident())
        if me != spy.caller and me not in started:
            started.add(me)
            spy.barrier.wait()

    real_count = counting.count_documents

    def count_documents(documents, source):
        first_job_waits()
        return real_count(documents, source)

    real_part = counting.part_into

    def part_into(*args):
        first_job_waits()
        return real_part(*args)

    real_block = counting.count_block

    def count_block(*args):
        first_job_waits()
        return real_block(*args)

    monkeypatch.setattr(counting, "count_documents", count_documents)
    monkeypatch.setattr(counting, "part_into", part_into)
    monkeypatch.setattr(counting, "count_block", count_block)
    count_files, count_pieces = sources.count_files, sources.count_pieces
    def record(partial) -> None:
        spy.reports.append((partial.pid, partial.thread))
        spy.sizes.append(partial.size)

    monkeypatch.setattr(sources, "count_files", lambda *args, **options: count_files(
        *args, part_bytes=part_bytes, on_partial=record, **options))
    monkeypatch.setattr(sources, "count_pieces", lambda *args, **options: count_pieces(
        *args, batch_chars=batch_chars, on_partial=record, **options))
    return spy


def run(capsys, *argv) -> tuple[int, str, str]:
    """Run the command line in process: ``(exit code, stdout, stderr)``."""
    code = main([os.fspath(a) if isinstance(a, Path) else str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def assert_bad_input(capsys, directory: Path, argv, *words: str) -> str:
    """Exit code 2, one line ``bytepair: error: ...`` naming the problem, no new file."""
    before = listing(directory)
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bytepair: error: ")
    for word in words:
        assert word in lines[0]
    assert listing(directory) == before  # no output, no temporary file left
    return lines[0]


def write_shards(directory: Path, lines: list[str], count: int) -> list[Path]:
    """``lines`` dealt round-robin into ``count`` shard files, one document per line."""
    paths = []
    for i in range(count):
        path = directory / f"shard-{i}.txt"
        path.write_text("\n".join(lines[i::count]) + "\n")
        paths.append(path)
    return paths


def damaged_parquet(path: Path, *, groups: int = 8, group: int = 3) -> Path:
    """A snappy Parquet file of ``groups`` row groups whose row group ``group`` does not decode.

    Bytes in the middle of that group's compressed page are overwritten, one
    candidate position after another, until reading the group fails: the file
    is the same in every run, and so is the damage.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [f"row {i}: naïve café {'ab ' * (i % 7)}" * 20 for i in range(groups * 50)]
    pq.write_table(pa.table({"text": rows}), path, row_group_size=50, compression="snappy",
                   use_dictionary=False)
    clean = path.read_bytes()
    chunk = pq.ParquetFile(path).metadata.row_group(group).column(0)
    begin = chunk.data_page_offset
    for offset in range(begin + chunk.total_compressed_size // 2, begin + chunk.total_compressed_size):
        data = bytearray(clean)
        data[offset:offset + 4] = b"\xff\xfe\xfd\xfc"
        path.write_bytes(data)
        try:
            pq.ParquetFile(path).read_row_group(group).column(0).to_pylist()
        except (OSError, pa.ArrowException, UnicodeDecodeError):
            return path
    raise AssertionError("no damage made the row group unreadable")


#: Appended to a script run by :func:`peak_rss_mib`: print the process's peak resident memory.
_PRINT_PEAK = """
with open("/proc/self/status") as status:
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
"""


def peak_rss_mib(script: str, *args: str) -> float:
    """Run ``script`` in a fresh interpreter; its peak resident memory in MiB.

    Read from ``VmHWM`` in ``/proc/self/status`` (Linux): the peak of this program's
    own memory. ``resource.getrusage``'s ``ru_maxrss`` would not do: it survives
    ``execve``, so it starts at the size of the test process that forked the child.
    """
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script + _PRINT_PEAK, *args], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1]) / 1024


# -- reading a page in a real browser (tests/teach/test_browser_*.py) ------------------------

def text_of(driver, selector: str) -> str:
    """The text the page shows at ``selector`` now, read in one script. Waits read state this
    way, never through an element found earlier: the page may replace it meanwhile (a
    StaleElementReferenceException inside the wait)."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''", selector)


def shown(driver, selector: str) -> bool:
    """Whether an element at ``selector`` is drawn (not hidden), read in one script."""
    return driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return !!e && e.getClientRects().length > 0", selector)


# -- a learner's correct exercise file (tests/teach) -----------------------------------------

RIGHT_MERGE = """
def merge(word, pair, new_token):
    out, i = [], 0
    while i < len(word):
        if word[i:i + 2] == list(pair):
            out.append(new_token); i += 2
        else:
            out.append(word[i]); i += 1
    return out
"""
RIGHT_COUNT = """
def count_pairs(words):
    counts = {}
    for word in words:
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
"""


def reference_encode(tok, text: str, specials) -> list[int]:
    """The naive encoder: the regex module splits, the pure-Python twin merges, the
    ``specials`` in ``text`` are their tokens (longest first, as tiktoken)."""
    import regex

    from bytepair.model import _encode_py
    from bytepair.split.pretokenize import splitter

    python = _encode_py.Encoder([m.left for m in tok.merges], [m.right for m in tok.merges])
    split = splitter(tok.pattern) if tok.pattern is not None else (lambda t: [t])
    specials = sorted(specials, key=len, reverse=True)
    parts = regex.split("(" + "|".join(map(regex.escape, specials)) + ")", text) if specials else [text]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(tok.special_tokens[part])
        elif part:
            out.extend(python.encode_pieces(split(part)))
    return out


def random_rules(draw, alphabet: bytes, least: int, most: int) -> tuple[list[int], list[int]]:
    """A rule table over ``alphabet`` for a Hypothesis ``draw``: each rule joins two earlier
    tokens, no pair twice; ``least``-``most`` draws (a repeated pair is skipped)."""
    from hypothesis import strategies as st

    tokens, lefts, rights, seen = sorted(set(alphabet)), [], [], set()
    for _ in range(draw(st.integers(least, most))):
        pair = (draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens)))
        if pair in seen:
            continue
        seen.add(pair)
        lefts.append(pair[0])
        rights.append(pair[1])
        tokens.append(255 + len(lefts))
    return lefts, rights
