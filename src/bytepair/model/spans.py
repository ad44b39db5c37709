"""Many pieces encoded at once, on several threads: what SuperBPE's stage 2 starts from."""

from __future__ import annotations

from array import array
from bisect import bisect_left

#: Pieces encoded per thread at least, in bytes: below this one thread is faster.
SPANS_PER_THREAD = 1 << 20


def encode_spans(model, data: bytes, starts: array, threads: int) -> tuple[array, array]:
    """:meth:`ByteModel.encode_spans` of ``model`` on ``threads`` threads, one contiguous run
    of pieces each (the compiled encoder runs without the GIL); the same arrays for any
    number. O(len(data)) work."""
    threads = max(1, min(threads, len(data) // SPANS_PER_THREAD))
    if threads == 1 or len(starts) < 2 * threads:
        return model.encode_spans(data, starts)
    cuts = sorted({0, len(starts) - 1, *(bisect_left(starts, len(data) * k // threads)
                                          for k in range(1, threads))})
    from concurrent.futures import ThreadPoolExecutor  # at first use, not at import (~5 ms)

    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(lambda a, b: model.encode_spans(data, starts[a:b + 1]),
                              cuts[:-1], cuts[1:]))
    # The first part's arrays grow in place (a large array is remapped, not copied).
    tokens, offsets = parts.pop(0)
    del offsets[-1]
    while parts:
        ids, at = parts.pop(0)
        offsets.extend(map(len(tokens).__add__, at[:-1]))
        tokens.extend(ids)
        del ids, at
    offsets.append(len(tokens))
    return tokens, offsets
