"""max_memory: training fits in the limit with the same rules, or stops with one line saying why."""

import functools
import gzip
import json
import os
import random
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import bytepair
from bytepair import training
from bytepair.counts import sources
from bytepair.learn import loop
from bytepair.training import trainer
from bytepair.training.trainer import Trainer
from bytepair._util.validate import format_memory, parse_memory
from bytepair.counts import spill
from bytepair.counts.counting import count_files
from bytepair.counts.spill import Spill
from bytepair.learn import budget, incremental
from bytepair.read.corpus import Files
from bytepair.split.pretokenize import resolve_pattern

from helpers import KJV, KJV_REST_GZ, MULTILINGUAL, needs_compiled, needs_compiled_splitter

SRC = str(Path(bytepair.__file__).parents[1])
GPT2 = resolve_pattern("gpt2")

TEXT = KJV.read_text(encoding="utf-8").splitlines()[:300]


@pytest.mark.parametrize("value,expected", [
    ("4GiB", 4 * 2**30), ("512MiB", 512 * 2**20), ("2GB", 2 * 10**9), ("1.5G", 3 * 2**29),
    (" 64 kib ", 64 * 2**10), ("1000", 1000), (123456, 123456),
])
def test_parse_memory_reads_sizes(value, expected):
    assert parse_memory(value) == expected


@pytest.mark.parametrize("value", ["4 gigs", "", "GiB", "-1GB", "inf", "nanGB", "0", "0.1B", "1e400GB"])
def test_parse_memory_names_the_argument_on_a_bad_size(value):
    with pytest.raises(ValueError, match=r"^max_memory: .* is not a memory size"):
        parse_memory(value)


@pytest.mark.parametrize("value,error", [(0, ValueError), (True, TypeError), (1.5, TypeError)])
def test_parse_memory_refuses_other_values(value, error):
    with pytest.raises(error, match="max_memory"):
        parse_memory(value)


def test_format_memory():
    assert [format_memory(n) for n in (512, 5000, 860 * 2**20, 1500000000)] == [
        "512 B", "4.9 KiB", "860 MiB", "1.4 GiB"]


def held(monkeypatch, size: int) -> None:
    """Make the process seem to hold ``size`` bytes."""
    monkeypatch.setattr(budget, "resident_bytes", lambda: size)


def test_a_limit_that_fits_gives_the_same_model(monkeypatch):
    expected = bytepair.train(TEXT, merges=500, workers=1, progress=False)
    held(monkeypatch, 10 * 2**20)
    got = bytepair.train(TEXT, merges=500, workers=1, progress=False, max_memory="1GiB")
    assert got.merges == expected.merges
    assert training.learn(bytepair.count(TEXT, workers=1, progress=False), 500,
                          max_memory=2**30) == expected.merges


def test_a_limit_below_the_estimate_stops_before_the_engine_is_built(monkeypatch):
    start = bytepair.train(TEXT, merges=10, workers=1, progress=False)
    held(monkeypatch, 10 * 2**20)
    counts = bytepair.count(TEXT, workers=1, progress=False)
    data, starts, _ = counts.flat()
    need = 10 * 2**20 + budget.engine_bytes(len(data), len(starts) - 1)

    def never(*args, **kwargs):
        raise AssertionError("the engine was built")

    monkeypatch.setattr(incremental.IncrementalEngine, "from_arrays", never)
    monkeypatch.setattr(incremental.IncrementalEngine, "__init__", never)
    with pytest.raises(bytepair.MemoryLimitError) as caught:
        bytepair.train(TEXT, merges=500, workers=1, progress=False, max_memory=need - 1)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"max_memory: training needs about {format_memory(need)} ")
    assert f"more than the limit of {format_memory(need - 1)}" in message
    # A warm start is refused the same way (its pieces' bytes bound what it needs).
    with pytest.raises(bytepair.MemoryLimitError, match="training needs about"):
        bytepair.train(TEXT, merges=500, workers=1, progress=False, init=start,
                       max_memory=need - 1)


def test_a_limit_below_what_is_held_stops_before_counting(monkeypatch):
    held(monkeypatch, 100 * 2**20)
    monkeypatch.setattr(Trainer, "count", lambda *a, **k: pytest.fail("counted"))
    with pytest.raises(bytepair.MemoryLimitError, match=r"^max_memory: 50 MiB is less than this "
                       r"process holds before training \(100 MiB\)$"):
        bytepair.train(TEXT, merges=10, max_memory="50MiB")


def test_growing_past_the_limit_while_merging_stops_after_a_chunk(monkeypatch):
    expected = bytepair.train(TEXT, merges=60, workers=1, progress=False).merges
    monkeypatch.setattr(loop, "LEARN_CHUNK", 10)
    # Before counting, the counting plan, the estimate and 2 chunks fit.
    sizes = iter([10 * 2**20] * 5 + [2**40] * 100)
    monkeypatch.setattr(budget, "resident_bytes", lambda: next(sizes))
    steps = []
    original = incremental.IncrementalEngine.steps
    monkeypatch.setattr(incremental.IncrementalEngine, "steps",
                        lambda self, *a: steps.append(1) or original(self, *a))
    with pytest.raises(bytepair.MemoryLimitError,
                       match=r"^max_memory: training passed the limit of 1.0 GiB after 30 merges "
                             r"\(1,024 GiB in use\); stopped before the system runs out$"):
        bytepair.train(TEXT, merges=60, workers=1, progress=False, max_memory="1GiB")
    assert len(steps) == 3
    # The same limit with room to spare: the full run, the same rules.
    held(monkeypatch, 10 * 2**20)
    assert bytepair.train(TEXT, merges=60, workers=1, progress=False,
                          max_memory="1GiB").merges == expected


def test_memory_limit_error_is_a_memory_error_and_a_value_error():
    assert issubclass(bytepair.MemoryLimitError, MemoryError)
    assert issubclass(bytepair.MemoryLimitError, ValueError)


# -- the command line ---------------------------------------------------------


def cli(capsys, *args) -> tuple[int, str]:
    from bytepair.cli.main import main

    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


def test_cli_max_memory_that_fits_writes_the_same_model(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(TEXT), encoding="utf-8")
    assert cli(capsys, "train", corpus, "--merges", 200, "--workers", 1, "-q",
               "-o", tmp_path / "free.json")[0] == 0
    held(monkeypatch, 10 * 2**20)
    assert cli(capsys, "train", corpus, "--merges", 200, "--workers", 1, "-q",
               "--max-memory", "1GiB", "-o", tmp_path / "limited.json") == (0, "")
    assert bytepair.load(tmp_path / "limited.json").merges == bytepair.load(tmp_path / "free.json").merges


def test_cli_max_memory_too_small_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(TEXT), encoding="utf-8")
    held(monkeypatch, 10 * 2**20)
    code, err = cli(capsys, "train", corpus, "--merges", 200, "--max-memory", "10MiB",
                    "-o", tmp_path / "m.json")
    assert code == 2
    assert err.startswith("bytepair: error: --max-memory: training needs about ")
    assert err.endswith("more than the limit of 10 MiB\n") and err.count("\n") == 1
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("size", ["4gigs", "0", "1e400GB"])
def test_cli_max_memory_bad_size_is_a_usage_error(tmp_path, capsys, size):
    code, err = cli(capsys, "train", tmp_path / "none.txt", "--merges", 5, "--max-memory", size,
                    "-o", tmp_path / "m.json")
    assert code == 2
    assert err == ("bytepair: error: train: argument --max-memory: expected a memory size such "
                   f"as 4GiB, 512MiB or 2GB, got {size!r}\n")


# -- before any work: the forecast from a sample -------------------------------------------------


@pytest.fixture(scope="module")
def words(tmp_path_factory) -> Path:
    """About 1 MB of random words, one line of twelve each: nearly every piece distinct,
    so distinct pieces grow with the input (the case a forecast must not miss)."""
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("words") / "words.txt"
    path.write_text("\n".join(" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))
                                       for _ in range(12)) for _ in range(10000)))
    return path


@pytest.fixture
def small_sample(monkeypatch):
    """A forecast from 16 blocks of 2 KiB, for inputs from 128 KiB on."""
    monkeypatch.setattr(budget, "SAMPLE_BLOCKS", 16)
    monkeypatch.setattr(budget, "SAMPLE_BLOCK", 2048)
    monkeypatch.setattr(budget, "FORECAST_FROM", 1 << 17)


def real_counts(path) -> tuple[int, int]:
    data, _, counts = bytepair.count(path, per_line=True, workers=1, progress=False).flat()
    return len(data), len(counts)


@needs_compiled_splitter  # the sample is counted by the compiled splitter
def test_the_forecast_finds_what_the_input_holds_when_pieces_keep_coming(words, small_sample):
    seen = budget.forecast(Files(words, per_line=True), GPT2)
    positions, pieces = real_counts(words)
    assert seen.sample < seen.total == words.stat().st_size
    (least, expected), (fewest, number) = seen.positions, seen.pieces
    assert least < expected and fewest < number
    # Random words: the growth law extrapolates them from an eighth to within its error.
    assert 0.75 * positions < expected < 1.25 * positions
    assert 0.75 * pieces < number < 1.25 * pieces
    low, high = seen.need(100, 10 << 20)
    assert 10 << 20 < low <= high


@needs_compiled_splitter  # the sample is counted by the compiled splitter
def test_the_forecast_of_real_text_is_near_what_it_holds(small_sample, tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "SAMPLE_BLOCK", 1 << 14)  # 256 KiB of its 3.8 MB
    rest = tmp_path / "kjv.txt"
    rest.write_bytes(gzip.decompress(KJV_REST_GZ.read_bytes()))
    seen = budget.forecast(Files(rest, per_line=True), GPT2)
    positions, pieces = real_counts(rest)
    assert positions / 2 < seen.positions[0] <= seen.positions[1] < 2 * positions
    assert pieces / 2 < seen.pieces[0] <= seen.pieces[1] < 2 * pieces


@needs_compiled_splitter  # the sample is counted by the compiled splitter
def test_what_cannot_be_sampled_is_not_forecast(words, small_sample, tmp_path):
    packed = tmp_path / "words.txt.gz"
    packed.write_bytes(gzip.compress(words.read_bytes()))
    records = tmp_path / "words.jsonl"
    records.write_text("\n".join(json.dumps({"text": line}) for line in words.read_text().splitlines()))
    assert budget.forecast(Files(packed, per_line=True), GPT2) is None
    assert budget.forecast(Files(records), GPT2) is None
    assert budget.forecast(Files(words), None) is None  # byte mode, each file one piece
    assert budget.forecast(Files(MULTILINGUAL, per_line=True), GPT2) is None  # small: counting is quick
    assert budget.forecast(Files(words, per_line=True), r"\w+") is None  # a custom regex
    assert budget.forecast(Files(words, per_line=True), None) is not None  # each line one piece


@needs_compiled_splitter  # the sample is counted by the compiled splitter
def test_a_forecast_over_the_limit_stops_before_any_work(words, small_sample, monkeypatch):
    held(monkeypatch, 10 << 20)
    seen = budget.forecast(Files(words, per_line=True), GPT2)
    least, expected = seen.need(500, 10 << 20)
    monkeypatch.setattr(trainer, "count_corpus", lambda *a, **k: pytest.fail("counted"))
    with pytest.raises(bytepair.MemoryLimitError) as caught:
        bytepair.train(words, merges=500, per_line=True, max_memory=least - 1)
    message = str(caught.value)
    assert message == (
        f"max_memory: training this corpus needs about {format_memory(expected)} (forecast "
        f"from {format_memory(seen.sample)} read across its {format_memory(seen.total)}), "
        f"more than the limit of {format_memory(least - 1)} even if the forecast is 25% high; "
        "nothing was counted")
    assert least < expected


@needs_compiled_splitter  # the sample is counted by the compiled splitter
def test_a_forecast_within_the_limit_trains_the_same_model(words, small_sample, monkeypatch):
    expected = bytepair.train(words, merges=300, per_line=True, workers=1, progress=False).merges
    held(monkeypatch, 10 << 20)
    least, _ = budget.forecast(Files(words, per_line=True), GPT2).need(300, 10 << 20)
    positions, pieces = real_counts(words)
    limit = max(least, (10 << 20) + budget.engine_bytes(positions, pieces, 300)) + 1
    assert bytepair.train(words, merges=300, per_line=True, workers=1, progress=False,
                          max_memory=limit).merges == expected


@needs_compiled_splitter  # the sample is counted by the compiled splitter
def test_cli_forecast_over_the_limit_is_one_line(words, small_sample, tmp_path, capsys, monkeypatch):
    held(monkeypatch, 10 << 20)
    code, err = cli(capsys, "train", words, "--per-line", "--merges", 500, "--max-memory", "11MiB",
                    "-o", tmp_path / "m.json")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("bytepair: error: --max-memory: training this corpus needs about ")
    assert err.endswith("more than the limit of 11 MiB even if the forecast is 25% high; "
                        "nothing was counted\n")
    assert not (tmp_path / "m.json").exists()


# -- while counting: the tables spill within the limit -------------------------------------------


def test_the_counting_plan_takes_a_share_of_what_is_left_and_fewer_workers(monkeypatch):
    held(monkeypatch, 100 << 20)
    share = int((400 << 20) * budget.COUNT_SHARE)
    assert budget.counting_plan(500 << 20, None, 64) == (share, share // budget.MIN_TABLE_BYTES - 1)
    assert budget.counting_plan(500 << 20, None, 2) == (share, 2)
    assert budget.counting_plan(500 << 20, 1 << 20, 4) == (1 << 20, 1)  # a smaller bound given
    assert budget.counting_plan(101 << 20, None, 4) == (int((1 << 20) * budget.COUNT_SHARE), 1)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_limit_spills_counting_and_trains_the_same_model(workers, words, monkeypatch):
    expected = bytepair.train(words, merges=300, per_line=True, workers=1, progress=False).merges
    written = []
    real = Spill.write
    monkeypatch.setattr(Spill, "write", lambda self, table: written.append(len(table)) or
                        real(self, table))
    monkeypatch.setattr(budget, "MIN_TABLE_BYTES", 1 << 10)
    # Blocks of 64 KiB: a table is looked at after each.
    monkeypatch.setattr(sources, "count_files", functools.partial(count_files, part_bytes=1 << 16))
    held(monkeypatch, 10 << 20)
    positions, pieces = real_counts(words)
    room = budget.engine_bytes(positions, pieces, 300)
    # A share of the room that holds about 20,000 pieces a table: the words' 115,000 spill.
    monkeypatch.setattr(budget, "COUNT_SHARE", 20000 * spill.BYTES_PER_PIECE * (workers + 1) / room)
    got = bytepair.train(words, merges=300, per_line=True, workers=workers, progress=False,
                         max_memory=(10 << 20) + room)
    assert len(written) >= 2
    assert got.merges == expected


# -- at the kernel's level: a hard cap on the address space --------------------------------------

CAPPED = textwrap.dedent("""
    import resource, sys
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    from bytepair.cli.main import main
    # The cap: what the process has mapped now plus the room given.
    cap = size + int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    sys.exit(main(sys.argv[2:]))
""")


def capped(room: int, *args) -> subprocess.CompletedProcess:
    """``bytepair *args`` in a fresh process that cannot map more than ``room`` bytes more."""
    return subprocess.run([sys.executable, "-c", CAPPED, str(room), *map(str, args)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": SRC})


@pytest.fixture(scope="module")
def many_words(tmp_path_factory) -> Path:
    """About 2.5 MB of random words: the engine needs about 45 MiB on top of counting's."""
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("words") / "many.txt"
    path.write_text("\n".join(" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))
                                       for _ in range(12)) for _ in range(25000)))
    return path


@pytest.mark.slow
@needs_compiled  # the room is measured for the compiled engine and splitter
@needs_compiled_splitter
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_under_a_hard_cap_the_limit_stops_with_its_line_where_training_would_die(many_words,
                                                                                 tmp_path):
    train = ["train", many_words, "--per-line", "--merges", 2000, "--workers", 1, "-q"]
    # Without a limit, 50 MiB of room is not enough (the whole run needs about 60 MiB more
    # than the process holds after importing): it fails (MemoryError, or an abort in the
    # engine), whatever it was doing.
    free = capped(50 << 20, *train, "-o", tmp_path / "free.json")
    assert free.returncode != 0 and "bytepair: error: --max-memory" not in free.stderr
    assert "MemoryError" in free.stderr or "bad_alloc" in free.stderr or free.returncode < 0
    # With --max-memory below the cap: one line, nothing written.
    limited = capped(50 << 20, *train, "--max-memory", "45MiB", "-o", tmp_path / "limited.json")
    assert limited.returncode == 2, limited.stderr
    assert limited.stderr.startswith("bytepair: error: --max-memory: training needs about ")
    assert limited.stderr.count("\n") == 1
    assert not (tmp_path / "limited.json").exists()


@pytest.mark.slow
@needs_compiled
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_under_a_hard_cap_a_limit_that_fits_trains_the_same_model(many_words, tmp_path):
    train = ["train", many_words, "--per-line", "--merges", 2000, "--workers", 1, "-q"]
    free = capped(1 << 30, *train, "-o", tmp_path / "free.json")
    assert free.returncode == 0, free.stderr
    limited = capped(300 << 20, *train, "--max-memory", "200MiB", "-o", tmp_path / "limited.json")
    assert limited.returncode == 0, limited.stderr
    assert (tmp_path / "limited.json").read_bytes() == (tmp_path / "free.json").read_bytes()


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(2, 10**6), st.integers(1, 10**9),
       st.integers(1, 10**9))
def test_growth_stays_between_the_sample_and_the_input(at_sample, at_half, sample, more, further):
    half, total = sample // 2, sample + more
    # A sample holds at most its own bytes of distinct pieces, and its half no more than it.
    at_sample = min(at_sample, sample)
    at_half = min(at_half, at_sample)
    beta = budget.exponent(sample, at_sample, half, at_half)
    assert 0.0 <= beta <= 1.0
    grown = budget.grown(at_sample, sample, total, beta)
    assert at_sample <= grown <= total
    # A larger input never holds fewer, and a sample that grew faster forecasts more.
    assert grown <= budget.grown(at_sample, sample, total + further, beta)
    faster = budget.exponent(sample, at_sample, half, max(1, at_half // 2))
    assert beta <= faster and grown <= budget.grown(at_sample, sample, total, faster)
