"""What several test modules share: data paths, the byte-token join, backend marks, a worker spy."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from bytepair import counting, fastsplit, incremental, trainers

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


def byte_token(left: int, right: int, rank: int) -> int:
    """The byte-mode join: rule ``rank`` makes token ``256 + rank``."""
    return 256 + rank


class WorkerSpy:
    """Proves that counting ran in worker processes, and in how many.

    Installed (by :func:`spy_on_workers`) before the pool forks, it makes each
    worker's first table wait until ``workers`` workers have started one, so
    the work is surely shared; ``pids`` lists the process of every partial
    table that ``bytepair.train`` summed.
    """

    def __init__(self, workers: int):
        self.pids: list[int] = []
        self.barrier = multiprocessing.get_context("fork").Barrier(workers, timeout=120)

    @property
    def processes(self) -> set[int]:
        return set(self.pids)


def spy_on_workers(monkeypatch, *, workers: int = 2, part_bytes: int = 1000,
                   batch_chars: int = 2000) -> WorkerSpy:
    """Small parts and batches for ``bytepair.train``, with a :class:`WorkerSpy` watching."""
    spy = WorkerSpy(workers)
    parent = os.getpid()
    real_count = counting.count_documents
    started = []  # each forked worker has its own copy

    def count_documents(documents, source):
        if os.getpid() != parent and not started:
            started.append(True)
            spy.barrier.wait()
        return real_count(documents, source)

    monkeypatch.setattr(counting, "count_documents", count_documents)
    count_files, count_pieces = trainers.count_files, trainers.count_pieces
    record = lambda partial: spy.pids.append(partial.pid)  # noqa: E731
    monkeypatch.setattr(trainers, "count_files", lambda *args, **options: count_files(
        *args, part_bytes=part_bytes, on_partial=record, **options))
    monkeypatch.setattr(trainers, "count_pieces", lambda *args, **options: count_pieces(
        *args, batch_chars=batch_chars, on_partial=record, **options))
    return spy
