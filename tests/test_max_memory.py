"""max_memory: training fits in the limit with the same rules, or stops with one line saying why."""

import pytest

import bytepair
from bytepair import training
from bytepair._util.validate import format_memory, parse_memory
from bytepair.learn import budget, incremental

from helpers import KJV

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
    monkeypatch.setattr(training, "resident_bytes", lambda: size)


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

    monkeypatch.setattr(incremental.IncrementalTrainer, "from_arrays", never)
    monkeypatch.setattr(incremental.IncrementalTrainer, "__init__", never)
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
    monkeypatch.setattr(training, "count", lambda *a, **k: pytest.fail("counted"))
    with pytest.raises(bytepair.MemoryLimitError, match=r"^max_memory: 50 MiB is less than this "
                       r"process holds before training \(100 MiB\)$"):
        bytepair.train(TEXT, merges=10, max_memory="50MiB")


def test_growing_past_the_limit_while_merging_stops_after_a_chunk(monkeypatch):
    expected = bytepair.train(TEXT, merges=60, workers=1, progress=False).merges
    monkeypatch.setattr(training, "LEARN_CHUNK", 10)
    # Before counting, the counting plan, the estimate and 2 chunks fit.
    sizes = iter([10 * 2**20] * 5 + [2**40] * 100)
    monkeypatch.setattr(budget, "resident_bytes", lambda: next(sizes))
    monkeypatch.setattr(training, "resident_bytes", lambda: next(sizes))
    steps = []
    original = incremental.IncrementalTrainer.steps
    monkeypatch.setattr(incremental.IncrementalTrainer, "steps",
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
