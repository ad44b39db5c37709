"""Loose ends inside: the threaded count wakes up for signals, and a spill directory left by a
killed run is found and removed by the next one."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import bytepair
from bytepair.counts import counting, spill
from bytepair.split import fastsplit
from helpers import KJV
from test_spill import SLOW_SPILL

SRC = str(Path(bytepair.__file__).parents[1])


# -- the threaded count waits in short steps ----------------------------------------------------

@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers run in the main thread")
@pytest.mark.skipif(not fastsplit.available(),
                    reason="counting threads need the compiled splitter (pure-Python install)")
def test_a_signal_delivered_to_a_counting_thread_interrupts_at_once():
    """A SIGINT the kernel hands to a counting thread must interrupt the main thread while that
    thread still counts, not once its block is done (here: never, unless released)."""
    release = threading.Event()
    worker: list[int] = []
    interrupted_at: list[float] = []

    def count(table, job):
        worker.append(threading.get_ident())
        release.wait(30)  # a block that takes long (a slow disk, a huge line)
        return counting._partial(None, 0)

    def on_sigint(signum, frame):
        interrupted_at.append(time.monotonic())
        release.set()  # let the counting thread finish, so that the pool can end
        raise KeyboardInterrupt

    def send():
        deadline = time.monotonic() + 30
        while not worker and time.monotonic() < deadline:  # never wait forever
            time.sleep(0.01)
        if not worker:
            return
        time.sleep(0.2)  # the main thread is waiting on the result by now
        signal.pthread_kill(worker[0], signal.SIGINT)

    previous = signal.signal(signal.SIGINT, on_sigint)
    sender = threading.Thread(target=send)
    try:
        start = time.monotonic()
        sender.start()
        with pytest.raises(KeyboardInterrupt):
            counting._on_threads(count, [("job",)], 1, lambda partial: None)
    finally:
        signal.signal(signal.SIGINT, previous)
        release.set()
        sender.join()
    # Before the fix the main thread slept in the lock until the block was done (30 s).
    assert interrupted_at and interrupted_at[0] - start < 10


# -- spill directories of killed runs ----------------------------------------------------------

def _slow_count(tmp_path, temporary, *extra):
    return subprocess.Popen(
        [sys.executable, "-c", SLOW_SPILL, "count", str(KJV), "--per-line", "--workers", "1",
         "--count-memory", "100K", "-q", "-o", str(tmp_path / "out"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(temporary)})


def _count(tmp_path, temporary, *extra) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bytepair", "count", str(KJV), "--per-line", "--workers", "1",
         "--count-memory", "100K", "-q", "-o", str(tmp_path / "again"), *extra],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(temporary)})


def _spill_directories(temporary) -> list[str]:
    return sorted(str(p) for p in temporary.rglob("*") if p.is_dir())


@pytest.mark.parametrize("resume", [False, True], ids=["new run", "resume"])
def test_a_killed_runs_spill_directory_is_removed_by_the_next_run(tmp_path, resume):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = _slow_count(tmp_path, temporary)
    try:
        assert process.stdout.readline() == "SPILLED\n", process.stderr.read()
        process.send_signal(signal.SIGKILL)  # no clean-up can run
        process.communicate(timeout=60)
    finally:
        process.kill()
    left = [p for p in _spill_directories(temporary) if Path(p).parent.name.startswith("bytepair-spill-")]
    assert left, "the killed run left no spill directory: nothing to test"
    # Where the docs say.
    assert all(Path(p).parent.name == f"bytepair-spill-{os.getuid()}" for p in left)
    if resume:  # a checkpointed run, resumed: its own runs live in its checkpoint
        checkpoint = ["--checkpoint", str(tmp_path / "ck")]
        subprocess.run([sys.executable, "-m", "bytepair", "count", str(KJV), "--per-line", "-q",
                        "-o", str(tmp_path / "unused"), *checkpoint], check=True,
                       env={**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(temporary / "other")})
        (tmp_path / "unused").unlink()
        done = _count(tmp_path, temporary, *checkpoint, "--resume")
    else:
        done = _count(tmp_path, temporary)
    assert done.returncode == 0, done.stderr
    assert os.listdir(temporary) == []
    assert bytepair.PieceCounts.load(tmp_path / "again") == bytepair.count(KJV, per_line=True)


def test_a_live_runs_spill_directory_is_kept(tmp_path):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = _slow_count(tmp_path, temporary)
    try:
        assert process.stdout.readline() == "SPILLED\n", process.stderr.read()
        before = _spill_directories(temporary)
        done = _count(tmp_path, temporary)
        assert done.returncode == 0, done.stderr
        assert set(before) <= set(_spill_directories(temporary))  # the live run's is still there
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert os.listdir(temporary) == []


def test_remove_abandoned_takes_only_unlocked_directories(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with spill.Spill(1 << 20) as live:
        root = Path(spill.spill_root())
        assert Path(live.directory).parent == root
        dead = root / "12345-dead"
        dead.mkdir()
        (dead / "run-1").write_bytes(b"x")
        (root / "12345-dead.lock").write_bytes(b"")  # nobody holds it
        assert spill.remove_abandoned() == [str(dead)]
        assert Path(live.directory).is_dir()
    assert os.listdir(tmp_path) == []


# -- word counting and held-out samples read through the reading stage ---------------------------

@pytest.fixture
def texts(tmp_path):
    (tmp_path / "w.jsonl").write_text('{"body": "lower lowest low"}\n{"body": "newer newest"}\n')
    (tmp_path / "good.txt").write_text("lower lowest low newer newest\n")
    (tmp_path / "bad.txt").write_bytes(b"low \xff\xfe lower\n")
    return tmp_path


def test_learn_words_takes_the_reading_options(texts, capsys):
    from helpers import run
    code, _, err = run(capsys, "learn-words", texts / "w.jsonl", "--jsonl-field", "body",
                       "--merges", "5", "-o", texts / "w.model", "-q")
    assert code == 0, err
    assert bytepair.load(texts / "w.model") == bytepair.learn_words(
        ["lower lowest low", "newer newest"], 5)


def test_learn_words_gives_the_reading_errors(texts, capsys):
    from helpers import assert_bad_input, run
    assert_bad_input(capsys, texts, ["learn-words", texts / "good.txt", texts / "bad.txt",
                                     "--merges", "5", "-o", texts / "w.model"],
                     "bad.txt: invalid UTF-8 at byte offset 4", "--skip-unreadable")
    code, _, err = run(capsys, "learn-words", texts / "good.txt", texts / "bad.txt", "--merges",
                       "5", "--skip-unreadable", "-o", texts / "w.model")
    assert code == 0 and "skipped 1 file" in err
    assert bytepair.load(texts / "w.model") == bytepair.learn_words(texts / "good.txt", 5)


@pytest.fixture
def small_model(texts):
    path = texts / "m.json"
    bytepair.train([(texts / "good.txt").read_text()] * 3, merges=10).save(path)
    return path


def test_evaluate_samples_take_the_reading_options(texts, small_model, capsys):
    from helpers import run
    code, out, err = run(capsys, "evaluate", small_model, "--sample", texts / "w.jsonl",
                         "--jsonl-field", "body", "--json")
    assert code == 0, err
    report = json.loads(out)
    model = bytepair.load(small_model)
    documents = ["lower lowest low", "newer newest"]  # the field's texts, not the JSON lines
    assert report["samples"][0]["documents"] == 2
    assert report["samples"][0]["bytes"] == sum(map(len, documents))
    assert report["rows"][0]["tokens"] == sum(len(model.encode(t)) for t in documents)


def test_evaluate_samples_give_the_reading_errors(texts, small_model, capsys):
    from helpers import assert_bad_input, run
    assert_bad_input(capsys, texts, ["evaluate", small_model, "--sample", texts / "good.txt",
                                     "--sample", texts / "bad.txt"],
                     "bad.txt: invalid UTF-8 at byte offset 4", "--skip-unreadable")
    code, out, err = run(capsys, "evaluate", small_model, "--sample", f"{texts}/*.txt=en",
                         "--skip-unreadable")
    assert code == 0, err
    assert "skipped 1 file" in err and "en" in out
