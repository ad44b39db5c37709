"""Batches of texts cut in parts for threads: what ``Tokenizer.encode_batch`` and
``encode_to_array`` run on more than one thread."""

from __future__ import annotations

from bisect import bisect_left
from contextlib import contextmanager
from typing import Iterator

from bytepair.model import codec

#: A batch gives each thread at least this many characters, in parts of at least half as many.
THREAD_MIN_CHARS = 1 << 14
#: A batch is cut in up to this many parts per thread (a free thread takes the next).
PARTS_PER_THREAD = 16


def cut(texts: list, threads: int) -> list[int]:
    """The first index of each part of ``texts`` and then ``len(texts)``: ranges of about
    equal size (in characters), one range when a single thread does better.

    Each thread gets at least ``THREAD_MIN_CHARS`` characters, in up to
    ``PARTS_PER_THREAD`` ranges, each taken by the next free thread: the threads
    end within one small range of each other. Bounds come from running sums
    (compiled: a million texts make no int objects) and bisection, so no Python
    loop runs over the texts here.
    """
    if threads <= 1 or len(texts) <= 1:
        return [0, len(texts)]
    ends = codec.text_ends(texts)
    total = ends[-1]
    threads = min(threads, len(texts), max(1, total // THREAD_MIN_CHARS))
    if threads <= 1:
        return [0, len(texts)]
    parts = min(PARTS_PER_THREAD * threads, max(threads, 2 * total // THREAD_MIN_CHARS))
    return sorted({0, len(texts), *(min(len(texts), bisect_left(ends, total * k / parts) + 1)
                                    for k in range(1, parts))})


def threads_for(bounds: list[int], threads: int) -> int:
    """How many threads encode the parts ``bounds`` cut (as :func:`cut` chose)."""
    return max(1, min(threads, len(bounds) - 1))


def map_parts(encode_part, bounds: list[int], threads: int) -> Iterator:
    """``encode_part(start, stop)`` of each range ``bounds`` cut, on up to ``threads``
    threads: the results in order, each as soon as it is ready (the workers go on
    with later ranges meanwhile)."""
    if len(bounds) <= 2:
        if len(bounds) == 2 and bounds[1] > 0:
            yield encode_part(0, bounds[1])
        return
    from concurrent.futures import ThreadPoolExecutor  # only batches use threads

    with ThreadPoolExecutor(threads_for(bounds, threads)) as pool:
        yield from pool.map(encode_part, bounds[:-1], bounds[1:])


class Running:
    """The compiled encoder's ``Parts`` while threads encode them: each part read in
    order waits until it is done (the reader goes on while later parts are encoded)."""

    def __init__(self, job, runs: list):
        self.job, self.runs = job, runs

    def __len__(self) -> int:
        return len(self.job)

    def lists(self, part: int) -> tuple[list, list[int]]:
        """Part ``part``'s lists and the positions of its texts not encoded."""
        self._wait(part)
        return self.job.lists(part)

    def array_bytes(self, part: int, itemsize: int) -> bytes | None:
        """Part ``part``'s IDs as raw ints, None when a text in it is not encoded."""
        self._wait(part)
        return self.job.array_bytes(part, itemsize)

    def _wait(self, part: int) -> None:
        if not self.job.wait(part):  # a thread stopped on an error: raise it
            for run in self.runs:
                run.result()


@contextmanager
def encoding(model, texts: list, bounds: list[int], threads: int, *, skip: tuple | None,
             lists: bool = True, append: int | None = None, itemsize: int = 4) -> Iterator:
    """The parts of ``texts`` cut at ``bounds`` (:class:`Running`) while ``threads`` threads
    encode them, each releasing the GIL once and taking parts until none is left, those of
    its own contiguous range first, while this thread takes the texts' buffers and then
    reads the parts (building a part's lists, with ``lists``, as it reads it). None when only the
    Python path can encode them (``skip`` None, a custom pattern, no compiled
    encoder). The threads read one piece cache of the model's pool together, each
    putting the pieces it merges in a cache of its own that joins the shared one
    when the threads are done (:func:`codec.learner_of`); on leaving, no thread takes
    another part."""
    if skip is None or model._pattern_code is None or not codec.compiled():
        yield None
        return
    slots = threads_for(bounds, threads)
    job = model._codec.encode_parts(texts, bounds, model._pattern_code, skip,
                                    -1 if append is None else append, itemsize, lists, slots)
    shared = model._caches.take()
    try:
        learners = [codec.learner_of(shared) for _ in range(slots)]
    except BaseException:
        model._caches.give(shared)
        raise

    def run(slot: int) -> None:
        job.run(learners[slot], slot)  # on an error, the job stops: no reader waits

    from concurrent.futures import ThreadPoolExecutor  # only batches use threads

    try:
        with ThreadPoolExecutor(slots) as pool:
            try:
                runs = [pool.submit(run, slot) for slot in range(slots)]
                job.gather()
                yield Running(job, runs)
            finally:
                job.stop()
    finally:  # every thread is done: what they learned joins the shared cache
        for learner in learners:
            shared.absorb(learner)
        model._caches.give(shared)
