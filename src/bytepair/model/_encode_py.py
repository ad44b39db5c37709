"""Pure-Python twin of the compiled encoder ``bytepair.model._encode``: same API, same results.

Used when the extensions are not installed (``BYTEPAIR_NO_EXTENSIONS=1``)
and by the tests as the reference the compiled encoder must equal. The
merge is the heap encoder bytepair has always used; token bytes are built
lazily, so memory stays linear in the number of rules.
"""

from __future__ import annotations

import heapq
import operator
import sys
from array import array
from itertools import accumulate

#: No pre-tokenizer: the whole input is one piece (the compiled module's code).
PATTERN_NONE = -1
#: Pieces up to this many bytes go into the piece cache.
MAX_CACHED_PIECE = 256
#: Tokens up to this many bytes keep their bytes; longer ones are expanded when needed.
FLAT_MAX = 128
#: Lengths saturate here, as in the compiled module.
LENGTH_CAP = 1 << 62


class PieceCache:
    """Piece bytes -> token IDs for short pieces, within ``budget`` bytes (estimated).

    Each entry is charged its key, its list and the dictionary slot. As in
    the compiled cache, an insert that would go over the budget makes the
    cache full: it takes no new pieces until its recent misses outnumber its
    recent hits and half the pieces it holds, and is then emptied.
    """

    def __init__(self, budget: int = 24 << 20):
        if budget < 65536:
            raise ValueError(f"budget must be at least 65536 bytes, got {budget}")
        self.budget = budget
        self._entries: dict[bytes, list[int]] = {}
        self.nbytes = 0
        self._hits = self._misses = self._resets = 0
        self._full = False
        self._full_hits = self._full_misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def stats(self) -> dict:
        return {"hits": self._hits, "misses": self._misses, "resets": self._resets,
                "full": self._full}

    def clear(self) -> None:
        self._entries.clear()
        self.nbytes = 0
        self._full = False
        self._full_hits = self._full_misses = 0

    def get(self, piece: bytes):
        ids = self._entries.get(piece)
        if ids is not None:
            self._hits += 1
        else:
            self._misses += 1
        if self._full:
            self._seen(ids is not None)
        return ids

    def _seen(self, hit: bool) -> None:
        # As the compiled cache_seen: hits and misses over about the last 2 * len lookups.
        if hit:
            self._full_hits += 1
        else:
            self._full_misses += 1
        held = len(self._entries)
        if self._full_misses > self._full_hits and 2 * self._full_misses > held:
            self._resets += 1
            self.clear()
        elif self._full_hits + self._full_misses > 2 * held:
            self._full_hits //= 2
            self._full_misses //= 2

    def put(self, piece: bytes, ids: list[int]) -> None:
        if self._full:
            return
        cost = sys.getsizeof(piece) + sys.getsizeof(ids) + 100
        if self.nbytes + cost > self.budget:
            self._full = True
            return
        self._entries[piece] = ids
        self.nbytes += cost


class Encoder:
    """The rules of a byte-mode model: encode, decode and token bytes, in Python.

    Construction is O(rules): pair ranks and token lengths; the bytes of
    tokens up to ``FLAT_MAX`` bytes are built on first use.
    """

    def __init__(self, lefts, rights):
        if len(lefts) != len(rights):
            raise ValueError("lefts and rights must have the same length")
        self._left = list(lefts)
        self._right = list(rights)
        self._rank_of: dict[tuple[int, int], int] = {}
        self._length = [1] * 256
        for rank, pair in enumerate(zip(self._left, self._right)):
            if pair in self._rank_of:
                raise ValueError(f"rule {rank} repeats the pair {pair}")
            self._rank_of[pair] = rank
            self._length.append(min(self._length[pair[0]] + self._length[pair[1]], LENGTH_CAP))
        self._short: list[bytes | None] | None = None

    @property
    def vocab_size(self) -> int:
        return 256 + len(self._left)

    # -- encoding --

    def encode(self, data, pattern: int = PATTERN_NONE, cache: PieceCache | None = None) -> list[int]:
        if pattern != PATTERN_NONE:
            raise ValueError("the pure-Python encoder splits no built-in pattern; pass pieces")
        if isinstance(data, str):
            data = _utf8(data)
        return self._piece(bytes(data), cache) if data else []

    def encode_pieces(self, pieces, cache: PieceCache | None = None) -> list[int]:
        out: list[int] = []
        for piece in pieces:
            if isinstance(piece, str):
                piece = _utf8(piece)
            if piece:
                out.extend(self._piece(piece, cache))
        return out

    def _piece(self, data: bytes, cache: PieceCache | None) -> list[int]:
        if len(data) == 1:
            return [data[0]]
        cached = cache is not None and len(data) <= MAX_CACHED_PIECE
        if cached:
            ids = cache.get(data)
            if ids is not None:
                return list(ids)
        ids = self.merge(data)
        if cached:
            cache.put(data, ids)
            return list(ids)
        return ids

    def encode_spans(self, data: bytes, starts) -> tuple[array, array]:
        """Each ``data[starts[k]:starts[k + 1]]`` encoded whole, laid end to end, and where each begins."""
        ids, offsets = array("I"), array("q", [0])
        for start, end in zip(starts, starts[1:]):
            if end > start:
                ids.extend(self.merge(bytes(data[start:end])))
            offsets.append(len(ids))
        return ids, offsets

    def merge(self, data: bytes) -> list[int]:
        """Encode one piece, with no split.

        Equivalent to replaying every rule over the whole input, but only
        pairs that are present are visited: O(n log n) for n input bytes.
        A new adjacency always involves the token just made, whose rules all
        rank later, so popping ``(rank, position)`` from a heap gives exactly
        the rank-order, left-to-right passes.
        """
        tokens = list(data)
        n = len(tokens)
        rank_of = self._rank_of
        if n < 2 or not rank_of:
            return tokens
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prev = list(range(-1, n - 1))
        heap = [
            (rank_of[pair], i)
            for i, pair in enumerate(zip(tokens, tokens[1:]))
            if pair in rank_of
        ]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            j = nxt[i]
            if j < 0 or rank_of.get((tokens[i], tokens[j])) != rank:
                continue  # consumed or changed since it was pushed
            tokens[i] = 256 + rank
            nxt[i] = after = nxt[j]
            nxt[j] = -2
            if after >= 0:
                prev[after] = i
                r = rank_of.get((tokens[i], tokens[after]))
                if r is not None:
                    heapq.heappush(heap, (r, i))
            before = prev[i]
            if before >= 0:
                r = rank_of.get((tokens[before], tokens[i]))
                if r is not None:
                    heapq.heappush(heap, (r, before))
        out = []
        i = 0
        while i >= 0:
            out.append(tokens[i])
            i = nxt[i]
        return out

    # -- token bytes and decoding --

    def _short_bytes(self) -> list[bytes | None]:
        if self._short is None:
            short: list[bytes | None] = [bytes([i]) for i in range(256)]
            for left, right in zip(self._left, self._right):
                a, b = short[left], short[right]
                short.append(a + b if a is not None and b is not None
                             and len(a) + len(b) <= FLAT_MAX else None)
            self._short = short
        return self._short

    def _write(self, token: int, out: list[bytes]) -> None:
        short = self._short_bytes()
        stack = [token]
        while stack:
            t = stack.pop()
            data = short[t]
            if data is not None:
                out.append(data)
            else:
                stack.append(self._right[t - 256])
                stack.append(self._left[t - 256])

    def token_length(self, token: int) -> int:
        return self._length[token]

    def token_bytes(self, token: int) -> bytes:
        return self.decode([token])

    def decode(self, ids, specials: tuple = ()) -> bytes:
        base = self.vocab_size
        limit = base + len(specials)
        tokens = []
        for position, token in enumerate(ids):
            if type(token) is not int:
                if isinstance(token, bool):
                    raise TypeError(f"ids[{position}] must be an int, got bool")
                try:
                    token = operator.index(token)  # numpy integers and the like
                except TypeError:
                    raise TypeError(f"ids[{position}] must be an int, got {type(token).__name__}") from None
            if not 0 <= token < limit:
                raise ValueError(f"ids[{position}] = {token} is outside the vocabulary (0..{limit - 1})")
            tokens.append(token)
        if sum(self._length[t] if t < base else 0 for t in tokens) > LENGTH_CAP:
            raise ValueError("ids: the decoded bytes would not fit in memory")
        out: list[bytes] = []
        for token in tokens:
            if token < base:
                self._write(token, out)
            else:
                out.append(specials[token - base])
        return b"".join(out)

    def decode_array(self, ids, specials: tuple = ()) -> bytes:
        view = memoryview(ids)
        if view.format not in ("H", "<H", "=H", "I", "<I", "=I", "L", "<L", "=L") or view.itemsize not in (2, 4):
            raise TypeError(f"ids: need unsigned 16- or 32-bit integers, got format {view.format!r}")
        return self.decode(view.tolist(), specials)


def join_lists(parts: list) -> list:
    """One new list of the items of every list in ``parts``, in order."""
    return [item for part in parts for item in part]


def text_ends(texts: list) -> array:
    """The running sums of the lengths of ``texts`` (str and bytes; anything else counts 0)."""
    return array("q", accumulate(len(t) if isinstance(t, (str, bytes)) else 0 for t in texts))


def untrack_int_records(records: list) -> None:
    """The compiled encoder leaves tuples of ints out of the cyclic collector; Python cannot."""


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"data is not encodable as UTF-8: {exc.reason} at index {exc.start}") from None


def count_ids(ids, size: int):
    """How often each ID below ``size`` occurs in a buffer of unsigned 32-bit IDs (``array("q")``)."""
    view = memoryview(ids)
    if not (view.itemsize == 4 and view.format in ("I", "<I", "=I", "L", "<L", "=L")):
        raise TypeError(f"ids: need unsigned 32-bit integers, got format {view.format!r}")
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    counts = array("q", bytes(8 * size))
    for index, token in enumerate(view.tolist()):
        if token >= size:
            raise ValueError(f"ids[{index}] = {token} is outside the vocabulary (0..{size - 1})")
        counts[token] += 1
    return counts


def words_in_text(text: str) -> int:
    """``len(text.split())``: runs of characters that are not white space."""
    return len(text.split())
