"""The learner's code in a process of its own: a loop with no line events, too much memory or an
exit of the process is stopped and said in one line, by the check and by a real server; and
SIGTERM and Ctrl-C end the check instead of being taken for the learner's failure."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bytepair.teach import exercise
from helpers import RIGHT_COUNT, RIGHT_MERGE

#: CPython emits no line event in this loop: a trace hook never sees it.
NO_LINE_EVENTS = "def count_pairs(words):\n    while True: pass\n" + RIGHT_MERGE
#: calloc'd: no memory is touched, but the address space is far past the limit.
TOO_MUCH_MEMORY = ("def count_pairs(words):\n    data = bytes(3 << 30)\n    return {}\n"
                   + RIGHT_MERGE)
#: A legitimate but slow count, which says when it runs: the check is signalled inside it.
SLOW = "import time\n" + RIGHT_COUNT.replace(
    "    counts = {}", "    open({mark!r}, 'w').close()\n    time.sleep(0.5)\n    counts = {}"
) + RIGHT_MERGE

def write(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


def check(path, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "bytepair", "exercise", "check", str(path),
                           *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow  # the real command; in process: test_exercise
def test_a_loop_without_line_events_is_stopped_and_the_check_ends(tmp_path):
    started = time.monotonic()
    result = check(write(tmp_path, "loop", NO_LINE_EVENTS), "--examples", "5")
    assert result.returncode == 1, result
    failures = [line for line in result.stdout.splitlines() if "ran for more than" in line]
    assert failures == ["  FAIL  your count_pairs ran for more than 2 s on [[]] and was "
                        "stopped: does its loop always move on?"], result.stdout
    # One stop, then the check goes on without calling the stopped code again.
    assert time.monotonic() - started < 100


def test_too_much_memory_and_an_exit_of_the_process_are_one_line(tmp_path):
    learner = exercise.load_learner(write(tmp_path, "memory", TOO_MUCH_MEMORY))
    with learner, pytest.raises(exercise.LearnerError, match=r"^your count_pairs ran out of "
                                r"memory on \[\['a', 'b'\]\]$"):
        learner.count_pairs([["a", "b"]])
    exits = write(tmp_path, "exits", "import os\n" + RIGHT_COUNT +
                  "def merge(word, pair, new):\n    os._exit(7)\n")
    with exercise.load_learner(exits) as learner:
        with pytest.raises(exercise.LearnerError, match=r"^your merge ended its process \(exit "
                           r"status 7\) on \['a', 'b'\], \('a', 'b'\), 'ab', and was stopped$"):
            learner.merge(["a", "b"], ("a", "b"), "ab")
        with pytest.raises(exercise.LearnerError, match="ended its process"):  # at once, again
            learner.count_pairs([["a"]])
        learner.restart()  # a new process: its count_pairs is right
        assert learner.count_pairs([["a", "b"]]) == [(("a", "b"), 1)]


def test_a_file_that_never_finishes_importing_is_stopped(tmp_path):
    with pytest.raises(ValueError, match=r"^hangs.py ran for more than 2 s when imported and "
                       r"was stopped"):
        exercise.load_learner(write(tmp_path, "hangs", "while True: pass\n"))


@pytest.mark.parametrize("sig, code, word", [
    (signal.SIGTERM, 143, "terminated"),
    pytest.param(signal.SIGINT, 130, "interrupted", marks=pytest.mark.slow),  # the same path
])
def test_a_signal_ends_the_check(tmp_path, sig, code, word):
    mark = tmp_path / "running"
    path = write(tmp_path, "slow", SLOW.replace("{mark!r}", repr(str(mark))))
    process = subprocess.Popen([sys.executable, "-m", "bytepair", "exercise", "check", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               # a shell's background job ignores SIGINT: this one must not
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for _ in range(600):  # the search has called the learner's code
            if mark.exists() or process.poll() is not None:
                break
            time.sleep(0.1)
        assert mark.exists(), process.communicate()
        time.sleep(0.2)  # inside its sleep
        process.send_signal(sig)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, (out, err)
    assert err == f"bytepair: {word}\n"


def _start_server(*args):
    process = subprocess.Popen([sys.executable, "-m", "bytepair", "workbench", "--no-browser",
                                *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert "serving on http://127.0.0.1:" in line, (line, process.stderr.read())
    host, port = line.split("http://")[1].split("/")[0].split(":")
    return process, host, int(port)


def _post(host, port, path, payload, timeout):
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request("POST", path, json.dumps(payload).encode(),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_the_server_stops_the_learners_loop_and_goes_on(tmp_path):
    process, host, port = _start_server("--exercise", str(write(tmp_path, "loop", NO_LINE_EVENTS)))
    try:
        status, answer = _post(host, port, "/api/workbench/learner",
                               {"corpus": "low lower", "merges": 1}, timeout=30)
        assert status == 400, answer
        assert answer["error"].startswith("loop.py: your count_pairs ran for more than 2 s on "), \
            answer
        # Nothing of the learner's keeps running: the server's process is idle again.
        before = _cpu_seconds(process.pid)
        time.sleep(1.0)
        assert _cpu_seconds(process.pid) - before < 0.5
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True,
                                  text=True).stdout.split()
        assert children == [], children
        status, answer = _post(host, port, "/api/workbench/parse", {"corpus": "low"}, timeout=30)
        assert status == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
