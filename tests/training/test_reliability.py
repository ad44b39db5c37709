"""Regression tests for issue 13: hostile model files, invalid text, signals, symlinks, modes.

Each test reproduces one defect found by an adversarial run. Signal tests run
the command line in a subprocess (a script that imports bytepair and slows one
step down by monkeypatching, so that the signal lands at a known moment).
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

import bytepair
from bytepair import ModelFormatError
from bytepair._util import atomic
from bytepair.counts import counting
from bytepair.cli.main import main
from bytepair.read.corpus import read_file
from bytepair.split.pretokenize import PATTERNS
from helpers import needs_compiled_splitter

SRC = str(Path(bytepair.__file__).resolve().parent.parent)


def model_text(**fields) -> str:
    header = {"format": "bytepair-model", "version": 1, "kind": "bytes", "pattern": None}
    header.update(fields)
    header.setdefault("merges", [[97, 97, 2, 1]])
    return json.dumps(header)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def corpus_that_must_not_be_read():
    raise AssertionError("the corpus was read before the arguments were checked")
    yield "never"  # a generator: nothing runs until it is consumed


# --- model files parsed defensively ---------------------------------------------


DEEP = 100_000


@pytest.mark.parametrize("text", [
    model_text(extra="x").replace('"extra": "x"', '"extra": ' + "[" * DEEP + "]" * DEEP),
    "[" * DEEP,
    "{" + '"a":' * 1 + "[" * DEEP,
], ids=["balanced", "unbalanced-array", "unbalanced-in-object"])
def test_deeply_nested_json_is_a_format_error(tmp_path, text):
    path = write(tmp_path / "deep.json", text)
    with pytest.raises(ModelFormatError) as raised:
        bytepair.load(path)
    assert str(path) in str(raised.value)


def test_deeply_nested_json_on_the_command_line_is_one_error_line(tmp_path, capsys):
    path = write(tmp_path / "deep.json", "[" * DEEP + "]" * DEEP)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bytepair: error: ")
    assert "nested deeper" in err


def test_shallow_unknown_keys_still_load(tmp_path):
    path = write(tmp_path / "m.json", model_text(extra=[[[[{"a": [1]}]]]], note="[[[[ {{"))
    assert bytepair.load(path).merges[0][1:3] == (97, 97)


def test_integer_too_long_to_read_is_a_format_error(tmp_path):
    path = write(tmp_path / "m.json", model_text().replace("2, 1]", "9" * 5000 + ", 1]"))
    with pytest.raises(ModelFormatError, match="corrupt"):
        bytepair.load(path)


def test_file_over_the_size_limit_is_refused_before_parsing(tmp_path):
    path = write(tmp_path / "m.json", model_text())
    with pytest.raises(ModelFormatError, match="larger than the limit of 20 bytes"):
        bytepair.load(path, max_bytes=20)
    assert bytepair.load(path, max_bytes=os.path.getsize(path)).vocab_size == 257


@pytest.mark.parametrize("fields", [
    {"kind": "tokenizer", "special_tokens": {"a": 1}},
    {"kind": "tokenizer", "special_tokens": [["x"]]},
    {"kind": "words", "end_of_word": ["x"], "merges": []},
    {"merges": [[97, 97, 2, 1, 5]]},
    {"merges": {"0": [97, 97, 2, 1]}},
    {"pattern": 5},
], ids=repr)
def test_wrong_types_are_format_errors(tmp_path, fields):
    path = write(tmp_path / "m.json", model_text(**fields))
    with pytest.raises(ModelFormatError):
        bytepair.load(path)


# --- patterns in model files -----------------------------------------------------


def test_a_pattern_name_is_not_compiled_as_a_literal_regex(tmp_path):
    # Found: "gpt2" was compiled as the regex matching the word "gpt2".
    path = write(tmp_path / "m.json", model_text(pattern="gpt2"))
    with pytest.raises(ModelFormatError, match="ambiguous"):
        bytepair.load(path, trust_pattern=True)


def test_a_literal_word_regex_from_a_count_table_saves_and_loads(tmp_path):
    # Found: a table counted with regex.compile("ab") trained a model whose file held the
    # bare word "ab", which loading refused as a pattern name.
    import regex

    table = bytepair.count(["abab xab ab", "ab"], pretokenize=regex.compile("ab"))
    table.save(tmp_path / "t.counts")
    tok = bytepair.train([bytepair.PieceCounts.load(tmp_path / "t.counts")], merges=1)
    tok.save(tmp_path / "m.json")
    assert '"(?:ab)"' in (tmp_path / "m.json").read_text()
    loaded = bytepair.load(tmp_path / "m.json")  # a literal word needs no trust
    assert loaded == tok and loaded.model.pattern == "ab"
    assert loaded.encode("abab") == tok.encode("abab") == [256, 256]


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_named_pattern_sources_load_without_trust(tmp_path, name):
    model = bytepair.train_bytes(["low lower lowest"], 3, pretokenize=name)
    model.save(tmp_path / "m.json")
    assert bytepair.load(tmp_path / "m.json") == model


def test_custom_pattern_needs_trust(tmp_path):
    model = bytepair.train_bytes(["12 ab 345"], 3, pretokenize=r"\d+|\D+")
    model.save(tmp_path / "m.json")
    with pytest.raises(ModelFormatError, match="trust_pattern=True"):
        bytepair.load(tmp_path / "m.json")
    assert bytepair.load(tmp_path / "m.json", trust_pattern=True) == model


@pytest.mark.parametrize("pattern", ["a*", r"\d*", "(?=a)|b", "x?"])
def test_pattern_matching_the_empty_string_is_refused_even_when_trusted(tmp_path, pattern):
    path = write(tmp_path / "m.json", model_text(pattern=pattern))
    with pytest.raises(ModelFormatError, match="empty string"):
        bytepair.load(path, trust_pattern=True)


def test_custom_pattern_on_the_command_line_needs_trust(tmp_path, capsys):
    model = bytepair.train_bytes(["12 ab 345"], 3, pretokenize=r"\d+|\D+")
    model.save(tmp_path / "m.json")
    assert main(["encode", str(tmp_path / "m.json"), "12 ab"]) == 2
    assert "pass --trust-pattern" in capsys.readouterr().err  # the flag, not the Python argument
    assert main(["encode", "--trust-pattern", str(tmp_path / "m.json"), "12 ab"]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in model.encode("12 ab")]


def test_catastrophic_pattern_does_not_hang_encode(tmp_path):
    # Found: a file with the pattern (a|aa)+$ made encode run for ever.
    path = write(tmp_path / "m.json", model_text(pattern="(a|aa)+$"))
    script = textwrap.dedent("""
        import sys, bytepair
        try:
            model = bytepair.load(sys.argv[1])
        except bytepair.ModelFormatError as exc:
            print("refused:", exc)
        else:
            model.encode("a" * 60 + "b")
            print("encoded")
    """)
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:") and "custom regex" in done.stdout


# --- text validity at the door ---------------------------------------------------


def test_surrogate_special_token_is_refused_before_the_corpus_is_read():
    with pytest.raises(ValueError, match=r"special_tokens\[1\] must be text.*lone surrogate"):
        bytepair.train(corpus_that_must_not_be_read(), merges=3, special_tokens=["ok", "\ud800"],
                       progress=False)


def test_surrogate_special_token_on_the_command_line_is_refused_before_training(tmp_path, capsys,
                                                                                monkeypatch):
    corpus = write(tmp_path / "c.txt", "some text to train on")
    # The library's spec refuses it when the run is set up: no trainer starts.
    monkeypatch.setattr("bytepair.training.trainer.Trainer.fit",
                        lambda *a, **k: pytest.fail("trained"))
    code = main(["train", str(corpus), "--merges", "3", "--special", "\udcff", "-o",
                 str(tmp_path / "m.json")])
    assert code == 2
    assert "--special #1" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_surrogate_special_token_is_refused_by_the_tokenizer():
    with pytest.raises(ValueError, match="lone surrogate"):
        bytepair.Tokenizer(bytepair.train_bytes(["ab"], 1), ["\ud800"])


def test_surrogate_end_of_word_is_refused_before_training():
    with pytest.raises(ValueError, match="end_of_word"):
        bytepair.train_words({"ab": 1}, 1, end_of_word="\udfff")


@pytest.mark.parametrize("fields", [
    {"kind": "tokenizer", "special_tokens": ["\ud800"]},
    {"kind": "words", "end_of_word": None, "merges": [["\ud800", "a", 1, 1]]},
    {"kind": "words", "end_of_word": "\udc80", "merges": []},
    {"pattern": "\\d+|\ud800"},
], ids=["special-token", "word-symbol", "end-of-word", "pattern"])
def test_load_refuses_strings_that_are_not_text(tmp_path, fields):
    # json.dumps writes lone surrogates as \\ud800 escapes, which JSON allows.
    path = write(tmp_path / "m.json", model_text(**fields))
    with pytest.raises(ModelFormatError, match="not text|lone surrogate"):
        bytepair.load(path, trust_pattern=True)


# --- per-line reading ------------------------------------------------------------


def test_per_line_strips_exactly_one_line_ending(tmp_path):
    # Found: b"ef\r\r\n" became b"ef"; a lone CR is not a line break.
    path = tmp_path / "lines.txt"
    path.write_bytes(b"ab\r\nef\r\r\ncr\rinside\n\r\nlast\r")
    assert list(read_file(path, text=False, per_line=True)) == [
        b"ab", b"ef\r", b"cr\rinside", b"", b"last\r"]
    assert list(read_file(path, text=True, per_line=True))[1] == "ef\r"


# --- output paths ----------------------------------------------------------------


def test_saving_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.json"
    bytepair.train_bytes(["aaa"], 1).save(target)
    link = tmp_path / "link.json"
    link.symlink_to(os.path.relpath(target, tmp_path))
    new = bytepair.train_bytes(["abab"], 2)
    new.save(link)
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "model.json")
    assert bytepair.load(target) == new
    assert sorted(os.listdir(tmp_path / "real")) == ["model.json"]


def test_cli_output_through_a_dangling_symlink_creates_the_target(tmp_path):
    corpus = write(tmp_path / "c.txt", "low lower lowest")
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "made.json")
    assert main(["train", str(corpus), "--merges", "3", "-q", "-o", str(link)]) == 0
    assert link.is_symlink()
    assert bytepair.load(tmp_path / "made.json").vocab_size == 259


def test_an_existing_file_keeps_its_mode(tmp_path):
    target = tmp_path / "model.json"
    bytepair.train_bytes(["aaa"], 1).save(target)
    os.chmod(target, 0o640)
    bytepair.train_bytes(["abab"], 2).save(target)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_a_new_file_gets_the_umask_mode(tmp_path):
    previous = os.umask(0o027)
    try:
        bytepair.train_bytes(["aaa"], 1).save(tmp_path / "model.json")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(tmp_path / "model.json").st_mode) == 0o640


@pytest.fixture
def full_directory(tmp_path):
    """A tiny tmpfs filled to the last block (needs mount rights; skipped otherwise)."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_is_found_before_training(full_directory, capsys):
    with pytest.raises(OSError) as raised:
        atomic.check_target(full_directory / "model.json", "-o")
    assert raised.value.errno == errno.ENOSPC
    code = main(["train", str(Path(bytepair.__file__).parent / "data" / "kjv-genesis-1-11.txt"),
                 "--merges", "3", "-o", str(full_directory / "model.json")])
    assert code == 2
    assert "-o: cannot write in directory" in capsys.readouterr().err
    assert sorted(os.listdir(full_directory)) == ["filler"]


def test_the_probe_leaves_no_file(tmp_path):
    atomic.check_target(tmp_path / "model.json")
    assert os.listdir(tmp_path) == []


# --- signals ---------------------------------------------------------------------


#: Runs the command line with one step slowed down: ``slow_save`` holds the
#: model write (after it started) and ``slow_count`` holds every worker's count.
SLOW_CLI = textwrap.dedent("""
    import faulthandler, os, signal, sys, time
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # see communicate_or_dump
    import bytepair._util.atomic, bytepair.read.blocks, bytepair.counts.counting
    from bytepair.cli.main import main

    mode = sys.argv[1]
    if mode == "slow_save":
        real_fdopen = os.fdopen

        class Slow:
            def __init__(self, handle):
                self._handle = handle
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                self._handle.close()
            def write(self, text):
                self._handle.write(text[: len(text) // 2])
                self._handle.flush()
                print("WRITING", flush=True)
                time.sleep(60)
            def __getattr__(self, name):
                return getattr(self._handle, name)

        bytepair._util.atomic.os.fdopen = lambda *a, **k: Slow(real_fdopen(*a, **k))
    elif mode == "slow_blocks":
        # Every block that file counting reads (4 KiB each) takes a while to arrive.
        real_read = bytepair.read.blocks.read_blocks

        def slow_blocks(*args, **kwargs):
            for block in real_read(*args, **{**kwargs, "block_bytes": 1 << 12}):
                os.write(1, b"BLOCK\\n")  # one write(2): the threads' lines never mix
                time.sleep(0.2)
                yield block

        bytepair.counts.counting.blocks.read_blocks = slow_blocks
    elif mode == "slow_count":
        # Every file part, in a worker or here, is counted by part_into.
        real_count = bytepair.counts.counting.part_into

        def slow_count(*args, **kwargs):
            # One write(2) of less than PIPE_BUF bytes: lines of two workers never mix.
            os.write(1, f"COUNTING {os.getpid()}\\n".encode())
            time.sleep(60)
            return real_count(*args, **kwargs)

        bytepair.counts.counting.part_into = slow_count
    sys.exit(main(sys.argv[2:]))
""")


def start_cli(mode: str, *args) -> subprocess.Popen:
    # A session of its own, so that the test can signal its process group.
    return subprocess.Popen([sys.executable, "-c", SLOW_CLI, mode, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": SRC}, start_new_session=True)


def communicate_or_dump(process: subprocess.Popen, timeout: float) -> None:
    """Wait for the CLI to exit; if it hangs, fail with the stacks of all its threads."""
    try:
        process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)  # faulthandler, registered by SLOW_CLI
        time.sleep(1)
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"still running {timeout} s after the signal; its threads:\n{err}")


def wait_for_line(process: subprocess.Popen, prefix: str) -> str:
    line = process.stdout.readline()
    assert line.startswith(prefix), (line, process.stderr.read() if process.poll() is not None else "")
    return line


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus" / "c.txt"
    path.parent.mkdir()
    path.write_bytes((Path(bytepair.__file__).parent / "data" / "kjv-genesis-1-11.txt").read_bytes())
    return path


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_during_the_save_leaves_nothing_behind(tmp_path, corpus, sig):
    # Found: SIGTERM or SIGKILL during the write left .<name>.<random>.tmp behind.
    out = tmp_path / "out"
    out.mkdir()
    with start_cli("slow_save", "train", corpus, "--merges", 20, "--workers", 1, "-q",
                   "-o", out / "model.json") as process:
        try:
            wait_for_line(process, "WRITING")
            # Half the model is in the temporary file; it must not be visible.
            assert os.listdir(out) == []
            process.send_signal(sig)
            _, err = process.communicate(timeout=30)
        finally:
            process.kill()
    assert process.returncode == (128 + signal.SIGTERM if sig == signal.SIGTERM else -signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert err.strip() == "bytepair: terminated"
    assert os.listdir(out) == []


@pytest.fixture
def two_part_corpus(tmp_path):
    # count_files starts no more workers than there are parts: make at least two.
    path = tmp_path / "corpus" / "c.txt"
    path.parent.mkdir()
    text = (Path(bytepair.__file__).parent / "data" / "kjv-genesis-1-11.txt").read_bytes()
    path.write_bytes(text * (counting.PART_BYTES // len(text) + 2))
    return path


def worker_pids(process: subprocess.Popen, workers: int) -> list[int]:
    busy = int(wait_for_line(process, "COUNTING").split()[1])  # a worker counting its first part
    pids = [child.pid for child in psutil.Process(process.pid).children()]
    assert busy in pids and len(pids) == workers
    return pids


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def gone(pids: list[int], timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not alive(pids)


@needs_compiled_splitter
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_counting_threads_stop_at_the_next_block_after_a_signal(tmp_path, sig):
    # Compiled counting runs on threads, which a signal does not stop: the pool must
    # not count the rest of the corpus (two gzip files of 60 blocks, 0.2 s each to
    # read) before the process can exit.
    text = (Path(bytepair.__file__).parent / "data" / "kjv-genesis-1-11.txt").read_bytes()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a", "b"):
        (corpus / f"{name}.txt.gz").write_bytes(gzip.compress((text * 8)[: 60 * 4096]))
    with start_cli("slow_blocks", "train", corpus, "--per-line", "--merges", 20, "--workers", 2,
                   "-q", "-o", tmp_path / "model.json") as process:
        try:
            wait_for_line(process, "BLOCK")
            wait_for_line(process, "BLOCK")  # both threads are counting
            started = time.monotonic()
            process.send_signal(sig)
            _, err = process.communicate(timeout=30)
            waited = time.monotonic() - started
        finally:
            process.kill()
    assert process.returncode == (130 if sig == signal.SIGINT else 128 + signal.SIGTERM), err
    assert waited < 5, f"the process took {waited:.1f} s to stop"
    assert not (tmp_path / "model.json").exists()


@pytest.mark.parametrize("sig,group", [(signal.SIGTERM, False), (signal.SIGKILL, False),
                                       (signal.SIGTERM, True)],
                         ids=["SIGTERM", "SIGKILL", "SIGTERM-to-the-group"])
def test_no_worker_outlives_a_signalled_parent(tmp_path, two_part_corpus, sig, group):
    # Found: after SIGTERM the workers ran on, reparented to init, for up to 50 s.
    # A signal to the whole group (as `timeout` sends) must not hang the parent.
    pids: list[int] = []
    # Per line, so that the file has two parts whether or not the splitter is compiled; a
    # custom regex, so that Python splits and the workers are processes (not threads).
    with start_cli("slow_count", "train", two_part_corpus, "--per-line", "--merges", 20, "--workers", 2,
                   "--pretokenize", r"\w+|\W+", "-q", "-o", tmp_path / "model.json") as process:
        try:
            pids = worker_pids(process, 2)
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
            communicate_or_dump(process, 30)
            assert gone(pids), "a worker outlived its parent"
        finally:
            process.kill()
            for pid in alive(pids):
                os.kill(pid, signal.SIGKILL)
    assert process.returncode == (128 + signal.SIGTERM if sig == signal.SIGTERM else -signal.SIGKILL)
    assert not (tmp_path / "model.json").exists()
