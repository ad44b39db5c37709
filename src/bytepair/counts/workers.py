"""Worker processes for counting: forked, killed with their parent, and fed jobs lazily.

:func:`process_pool` is a pool of forked processes that dies with its parent
and is killed at once when the parent leaves it by an exception;
:func:`unordered` runs jobs on it, a bounded window at a time, and names the
job a dead worker left undone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


#: prctl(2) option: the signal this process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def start_worker(parent: int) -> None:
    """Pool initializer: signals as a worker needs them, and death with the parent.

    Only the parent reacts to Ctrl-C and SIGTERM: it leaves the pool, which
    kills each worker (:func:`process_pool`). On Linux the kernel sends SIGKILL to the worker when the
    parent dies, even by SIGKILL; elsewhere a worker outlives a killed parent
    until its current task is done (``docs/design.md``).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Out of the parent's process group: a signal sent to the group (``timeout``,
    # ``kill -TERM -PGID``) is the parent's to handle; the workers ending by it
    # too would be reported as workers that died.
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        import ctypes  # loaded by _pool before the fork: no import runs in the worker

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the line above took effect


@contextlib.contextmanager
def process_pool(workers: int, initializer=start_worker, initargs=()) -> Iterator[ProcessPoolExecutor]:
    """``workers`` forked processes that each run ``initializer`` first (default :func:`start_worker`).

    Leaving the block normally waits for the workers' tasks. Leaving it by an
    exception (a worker's error, Ctrl-C, SIGTERM) kills the workers at once
    (SIGKILL) and waits only for them to be gone. Nothing in the parent waits
    on a lock a worker holds: the executor watches each worker's process and
    fails the pending tasks when one dies, whatever it was doing.
    (``multiprocessing.Pool.terminate`` could wait for ever for its result
    queue's lock, held by a worker it had just killed.)
    """
    # Imported at first use, not with bytepair (they cost a third of its import
    # time), and here in the parent, so that a forked worker imports nothing.
    import ctypes  # noqa: F401 (for start_worker)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=initializer, initargs=(os.getpid(), *initargs))
    try:
        yield pool
    except BaseException:
        # The executor's own map of its workers: no public way to end them now.
        for process in list((pool._processes or {}).values()):
            process.kill()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def unordered(pool: ProcessPoolExecutor, task: Callable, jobs: Iterable, window: int,
               name: Callable[[object], str]) -> Iterator:
    """``task(job)`` for every job, run by ``pool``, yielded as each finishes.

    Jobs are taken from ``jobs`` lazily, at most ``window`` in flight, so a
    stream of batches is never read far ahead. A worker that dies (killed,
    out of memory) raises OSError naming the input of a job it left undone
    (``name(job)``); a worker's own exception is raised as it is.
    """
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    jobs = iter(jobs)
    pending: dict = {}

    def died(job) -> OSError:
        return OSError(f"{name(job)}: a worker process ended abruptly while counting "
                       f"(killed, or out of memory?)")

    def fill() -> None:
        for job in jobs:
            try:
                pending[pool.submit(task, job)] = job
            except BrokenProcessPool:  # a worker died before this job could be handed out
                raise died(job) from None
            if len(pending) >= window:
                return

    fill()
    while pending:
        # In short waits: a SIGTERM or SIGINT that the kernel hands to another thread
        # only sets a flag, and the main thread runs the handler once it wakes up.
        done, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
        for future in done:
            job = pending.pop(future)
            try:
                result = future.result()
            except BrokenProcessPool:
                raise died(job) from None
            yield result
        fill()
