"""Which encoder runs: the compiled ``bytepair.model._encode`` or its pure-Python twin.

Also the pool of piece caches a model hands out, one per encode running at
the same time, so that threads never share a cache while the compiled
encoder runs without the GIL.
"""

from __future__ import annotations

import threading

from bytepair._util.backend import extensions_wanted
from bytepair.model import _encode_py
from bytepair.split.pretokenize import PATTERNS

_compiled = None
if extensions_wanted():
    try:
        from bytepair.model import _encode as _compiled
    except ImportError:  # pragma: no cover - depends on how the package was installed
        _compiled = None

#: The encoder module in use.
backend = _compiled if _compiled is not None else _encode_py
#: The pattern code of "no split: the whole input is one piece".
PATTERN_NONE = backend.PATTERN_NONE
#: Byte budget of each piece cache, table and arenas together: 24 MiB, so that the table of
#: 64-byte slots, a power of two, can reach 16 MiB (196,608 pieces at three quarters full) with
#: 8 MiB left for the arenas; with 16 MiB it stopped at 8 MiB, and 5 MB of multilingual text
#: (122k distinct pieces to cache) missed 34k of them on every pass. A model keeps one
#: cache per encode that ran at the same time, never more, so its caches take at most
#: ``CACHE_BYTES`` per concurrent call however many calls there are. A batch on threads is
#: one encode: its threads read one cache together, and during the call each also fills a
#: learner (:func:`learner_of`) of at most ``CACHE_BYTES``, which joins the shared cache
#: and is freed when the call ends.
CACHE_BYTES = 24 << 20


def compiled() -> bool:
    """True when the compiled encoder is in use."""
    return backend is _compiled


def learner_of(shared):
    """A new piece cache that reads ``shared`` first and keeps what it merges itself, for
    one of the threads that encode a batch together (``PieceCache.lend``): its budget is
    ``shared``'s; ``shared.absorb(learner)`` adds its pieces to ``shared`` and empties it."""
    learner = backend.PieceCache(shared.budget)
    shared.lend(learner)
    return learner


def untrack_int_records(records: list) -> None:
    """Keep rule records (tuples of ints, such as ``Merge``) out of the cyclic garbage
    collector, which CPython does for plain tuples of ints but not for namedtuples.
    A no-op without the compiled encoder."""
    backend.untrack_int_records(records)


def join_lists(parts: list) -> list:
    """One new list of the items of the lists ``parts``, in order; built where the
    cyclic collector does not read it until it is full (compiled encoder)."""
    return backend.join_lists(parts)


def text_ends(texts: list):
    """The running sums of the lengths of ``texts`` (str in characters, bytes in bytes,
    anything else 0) as ``array("q")``, without a Python int per text (compiled encoder)."""
    return backend.text_ends(texts)


def count_ids(ids, size: int):
    """How often each ID below ``size`` occurs in a buffer of unsigned 32-bit IDs
    (an ``array("I")``), as ``array("q")`` of ``size`` counts. O(len(ids) + size)."""
    return backend.count_ids(ids, size)


def words_in_text(text: str) -> int:
    """``len(text.split())`` (words split on white space) without building the list."""
    return backend.words_in_text(text)


def new_encoder(lefts, rights, stage_one: int | None = None):
    """An encoder for rules given as their left and right token IDs, in rank order.

    ``stage_one``: a SuperBPE model's stage-1 rules, its first ones. The compiled encoder then
    merges a piece that is not a whole token with them first, part by part, and with the others
    after, run by run (the same IDs); the pure-Python twin merges every piece whole.
    """
    encoder = backend.Encoder(lefts, rights)
    if stage_one is not None and 0 < stage_one < len(lefts) and hasattr(encoder, "set_stage_one"):
        encoder.set_stage_one(backend.Encoder(lefts[:stage_one], rights[:stage_one]))
    return encoder


def pattern_code(source: str | None) -> int | None:
    """The compiled splitter's code for a named pattern; None when Python must split."""
    if source is None:
        return PATTERN_NONE
    codes = getattr(backend, "PATTERN_CODES", {})
    for name, known in PATTERNS.items():
        if source == known and name in codes:
            return codes[name]
    return None


class CachePool:
    """Piece caches for concurrent encodes: take one, give it back when done.

    At most one cache per encode running at the same time is ever made, each
    bounded by ``budget`` bytes. A thread (or an ``owner`` such as a thread
    slot of ``bytepair.model.parts``) takes back the cache it gave last when
    that one is free: a cache then keeps meeting the same thread's text.
    """

    def __init__(self, budget: int = CACHE_BYTES):
        self.budget = budget
        self._free: list = []  # (thread ident, cache), the latest given last
        self._lock = threading.Lock()

    def take(self, owner=None):
        """A free cache, the one ``owner`` (default: this thread) gave last if it is free."""
        owner = threading.get_ident() if owner is None else owner
        with self._lock:
            for index in range(len(self._free) - 1, -1, -1):
                if self._free[index][0] == owner:
                    return self._free.pop(index)[1]
            if self._free:
                return self._free.pop()[1]
        return backend.PieceCache(self.budget)

    def give(self, cache, owner=None) -> None:
        """Give ``cache`` back, for ``owner`` (default: this thread) to take first."""
        with self._lock:
            self._free.append((threading.get_ident() if owner is None else owner, cache))

    def __len__(self) -> int:
        """How many caches are free now."""
        return len(self._free)
