"""The learner's code in a process of its own, where it can be stopped for certain.

A time limit inside the process cannot stop every loop: a trace hook sees no
line event in ``while True: pass``, and an alarm signal reaches the main thread
only and waits for a C function to return. So the learner's file is imported,
and its functions called, in a child process (one per :class:`LearnerProcess`,
started once and reused for every call), with a limit on its memory
(``RLIMIT_AS``, :data:`MEMORY_LIMIT`) and on its CPU time (``RLIMIT_CPU``,
set before each request), and the parent kills it when one call runs past
:data:`CALL_SECONDS` of wall-clock time. Each call's answer is checked in the
child by :class:`bytepair.teach.exercise_learner.Learner` and sent back as
built-in values; a failure of any kind is one :class:`LearnerError` line.

The parent waits for the child without catching anything of its own: Ctrl-C
and SIGTERM end the check (the child is killed on the way out) rather than
being taken for the learner's failure.

The child is this module run as ``python -m bytepair.teach.exercise_process
FILE READ_FD WRITE_FD``; it talks over two pipes (pickled tuples), so that the
learner's ``print`` goes to the terminal as it would in the learner's own run.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import weakref
from multiprocessing.connection import Connection
from pathlib import Path

from bytepair.teach.exercise_learner import Learner, LearnerError, import_learner, show_args

#: The longest one call of a learner's function may take (wall clock), in seconds.
CALL_SECONDS = 2.0
#: The most address space the learner's process may use, in bytes.
MEMORY_LIMIT = 1 << 30
#: How long the child may take to start Python (before it imports the learner's file).
START_SECONDS = 60.0


def load_learner(path) -> LearnerProcess:
    """The learner's functions from the Python file ``path``, in a process of their own;
    ValueError in one line if the file is missing or cannot be imported."""
    if not Path(path).is_file():
        raise ValueError(f"no such file: {str(path)!r}")
    return LearnerProcess(path)


class LearnerProcess:
    """The learner's ``count_pairs`` and ``merge`` (see :class:`Learner`), run in a child process.

    The same methods as :class:`Learner`, plus :meth:`merge_rows` (one request
    for a whole round). Calls from several threads take turns. After a call
    was stopped (time, memory, the process ended), every later call fails at
    once with the same line until :meth:`restart` (the check stops there; the
    workbench restarts at its next request). :meth:`close` ends the child;
    it also ends when the object is collected, and at exit.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = self.path.name
        self.stopped: str | None = None
        self._lock = threading.Lock()
        self._child = None
        self._start()

    # -- the child's life ------------------------------------------------------------

    def _start(self) -> None:
        parent_read, child_write = os.pipe()
        child_read, parent_write = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(self.path), str(child_read),
                 str(child_write)],
                stdin=subprocess.DEVNULL, pass_fds=(child_read, child_write))
        finally:
            os.close(child_read)
            os.close(child_write)
        child = _Child(process, Connection(parent_read, writable=False),
                       Connection(parent_write, readable=False))
        self._child = child
        self._finalizer = weakref.finalize(self, child.end)
        try:
            child.receive(START_SECONDS, "started")
            ready = child.receive(CALL_SECONDS, "ready")
        except _Stopped as exc:
            self._child = None
            child.end()
            raise ValueError(exc.line(self.name, "when imported")) from None
        if ready[0] != "ready":
            self._child = None
            child.end()
            raise ValueError(ready[1])

    def restart(self) -> None:
        """Forget a stop: the next call starts a new child if the last one was stopped."""
        with self._lock:
            self.stopped = None

    def close(self) -> None:
        with self._lock:
            if self._child is not None:
                self._finalizer()
                self._child = None

    def __enter__(self) -> LearnerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- calls -----------------------------------------------------------------------

    def _request(self, what: str, request: tuple, answers: int, shown: list[tuple]) -> list:
        """Send ``request``; ``answers`` answers come back, one per call, each within
        :data:`CALL_SECONDS`; ``shown[k]`` are call ``k``'s arguments, for its one line."""
        with self._lock:
            if self.stopped is not None:
                raise LearnerError(self.stopped)
            if self._child is None:
                try:
                    self._start()
                except ValueError as exc:
                    self.stopped = str(exc)
                    raise LearnerError(self.stopped) from None
            child = self._child
            child.send(request)
            out = []
            for k in range(answers):
                try:
                    kind, value = child.receive(CALL_SECONDS, what)
                except _Stopped as exc:
                    self._finalizer()
                    self._child = None
                    self.stopped = exc.line(f"your {what}", f"on {show_args(shown[k])}")
                    raise LearnerError(self.stopped) from None
                if kind == "error":
                    raise LearnerError(value)  # the rest of the request was not run
                out.append(value)
            return out

    def count_pairs(self, words: list[list], where: str = "") -> list[tuple[tuple, int]]:
        """See :meth:`Learner.count_pairs`."""
        words = [list(word) for word in words]
        return self._request("count_pairs", ("count_pairs", words, where), 1, [(words,)])[0]

    def merge(self, word: list, pair: tuple, new_token, where: str = "") -> list:
        """See :meth:`Learner.merge`."""
        return self.merge_rows([word], pair, new_token, where)[0]

    def merge_rows(self, rows: list[list], pair: tuple, new_token, where: str = "") -> list[list]:
        """:meth:`merge` of each row, in one request (each call still has its own time limit)."""
        rows, pair = [list(row) for row in rows], tuple(pair)
        if not rows:
            return []
        return self._request("merge", ("merge", rows, pair, new_token, where), len(rows),
                             [(row, pair, new_token) for row in rows])


class _Stopped(Exception):
    """The child was stopped, or ended, before it answered."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why

    def line(self, who: str, when: str) -> str:
        """One line: ``who`` (``your merge``) stopped ``when`` (``on ARGS``, ``when imported``)."""
        if self.why == "time":
            return (f"{who} ran for more than {CALL_SECONDS:g} s {when} and was stopped: "
                    "does its loop always move on?")
        return f"{who} {self.why} {when}, and was stopped"


class _Child:
    """One child process and its two pipes."""

    def __init__(self, process: subprocess.Popen, reader: Connection, writer: Connection):
        self.process, self.reader, self.writer = process, reader, writer

    def send(self, request: tuple) -> None:
        try:
            self.writer.send(request)
        except OSError:
            pass  # the child has ended: receive() says how

    def receive(self, seconds: float, what: str) -> tuple:
        if not self.reader.poll(seconds):
            raise _Stopped("time")
        try:
            return self.reader.recv()
        except (EOFError, OSError):
            self.process.wait()
            raise _Stopped(_ended(self.process.returncode)) from None

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.close()
        self.writer.close()


def _ended(status: int) -> str:
    """How the child ended, for a learner's line."""
    if status == -signal.SIGXCPU:
        return "used more CPU time than its limit"
    if status == -signal.SIGKILL:
        return "was killed (out of memory?)"
    if status < 0:
        return f"ended its process with signal {signal.Signals(-status).name}"
    return f"ended its process (exit status {status})"


# -- the child -------------------------------------------------------------------------

def _limit(kind: int, soft: int) -> None:
    """Set a resource's soft limit (never above its hard one); ignored where unsupported."""
    try:
        import resource

        hard = resource.getrlimit(kind)[1]
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(kind, (soft, hard))
    except (ImportError, ValueError, OSError):
        pass


def _cpu_used() -> float:
    times = os.times()
    return times.user + times.system


def _serve(path: str, reader: Connection, writer: Connection) -> None:
    """The child's loop: import the learner's file, then answer requests until the pipe closes."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _limit(resource.RLIMIT_AS, MEMORY_LIMIT)
    writer.send(("started", None))
    try:
        learner = import_learner(path, contained=True)
    except ValueError as exc:
        writer.send(("error", str(exc)))
        return
    writer.send(("ready", learner.name))
    while True:
        try:
            request = reader.recv()
        except (EOFError, OSError):
            return
        calls = 1 if request[0] == "count_pairs" else len(request[1])
        _limit(resource.RLIMIT_CPU, math.ceil(_cpu_used() + CALL_SECONDS * calls) + 1)
        for answer in _answers(learner, request):
            writer.send(answer)
            if answer[0] == "error":
                break


def _answers(learner: Learner, request: tuple):
    """One ``(kind, value)`` per call of the request: ``("ok", answer)`` or ``("error", line)``."""
    try:
        if request[0] == "count_pairs":
            _, words, where = request
            yield "ok", learner.count_pairs(words, where)
            return
        _, rows, pair, new, where = request
        for row in rows:
            yield "ok", learner.merge(row, pair, new, where)
    except LearnerError as exc:
        yield "error", str(exc)
    except MemoryError:
        what = "count_pairs" if request[0] == "count_pairs" else "merge"
        yield "error", (f"your {what} used more memory than the limit of "
                        f"{MEMORY_LIMIT >> 20:,} MiB, and was stopped")


def main(argv: list[str]) -> None:
    path, read_fd, write_fd = argv
    _serve(path, Connection(int(read_fd), writable=False), Connection(int(write_fd),
                                                                       readable=False))


if __name__ == "__main__":
    main(sys.argv[1:])
