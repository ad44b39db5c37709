"""Synthetic text for sizes no real corpus here can fill: pieces that keep growing (the
generator; ``benches/synthetic.py`` fits its model and checks it against real English).

SIMULATED, NOT REAL TEXT. The real corpora on this machine hold about 568 MB of
distinct text; beyond that a larger real corpus only repeats itself, and its
distinct pieces stop growing. Web text keeps producing new pieces (names,
numbers, identifiers, typos, other scripts), and at 10 GB and more the distinct
pieces, not the bytes read, set the memory of counting and of the engine. This
module writes text of any size whose *piece statistics* follow a model fitted
on the real English corpus (``docs/simulated-scale.md`` shows the fit and its limits):
* tokens are drawn independently, by rank, from a frequency law: the
  ``HEAD`` most frequent real pieces of the English 10 MB corpus (GPT-2
  split, one document per line) with their real frequencies, then a
  power-law tail ``p(r) ~ (r + q) ** -a`` over an unbounded number of ranks.
  The tail's exponent sets the growth of distinct pieces (Heaps' law
  ``distinct ~ n ** (1 / a)``);
* a tail piece drawn comes back at the next few tail places (a geometric
  burst), the shorter the rarer it is: this sets the share of pieces seen once
  and makes it rise with size, as real English's does;
* every rank past the head is a synthetic piece, a pure function of the seed
  and the rank: a *kind* (Latin letters, other scripts, digits, punctuation,
  white space) drawn with the real tail's shares, a length drawn from that
  kind's real lengths, a leading space with the kind's real rate, and its
  characters from a character-level Markov model of the real pieces of that
  kind (order 2 for Latin letters, order 1 for the rest);
* lines take as many pieces as real lines do (their real distribution). Where
  two pieces would run into one (``foo`` then ``bar``), the second gets a
  leading space, as real text has it.

Deterministic: block ``k`` (``BLOCK_TOKENS`` tokens of whole lines) is a
function of ``(seed, k)`` alone, so the same seed gives the same bytes on
every run and with any number of worker processes; a size is a prefix of
every larger one (cut at a line end). Streamed: worker processes make a few
blocks ahead of the writer, which writes them in order. A block is made in
numpy throughout (about 19 MB per CPU second).

The model's numbers live in ``benches/synthetic-english.json.gz`` (written by
``python -m benches.synthetic fit`` from the English corpus), so the
generator needs no real text to run.

    python -m benches.corpus --language synthetic --size 10GB
    python -m benches.corpus --language synthetic-web --size 1GB
"""


from __future__ import annotations

import collections
import gzip
import json
import multiprocessing
import os
import time
import unicodedata
from pathlib import Path

import numpy as np

from benches.corpora.cache import cache_dir

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "benches" / "synthetic-english.json.gz"
#: Bump when the generator's output for a seed changes: it is part of every cache name.
VERSION = 2
#: Real pieces kept with their real frequencies.
HEAD = 4096
#: Tokens per block (about 4.5 MB of text): the unit of determinism and of work.
BLOCK_TOKENS = 1 << 20
#: Synthetic ranks made once per generator (they recur in every block), the rest per block.
PRECOMPUTED = 1 << 15
#: The longest synthetic piece, in characters.
MAX_LENGTH = 48
KINDS = ("latin", "script", "number", "punct", "space")
#: The tail's settings: exponent ``a`` and shift ``q`` of ``p(r) ~ (r + q) ** -a``, from
#: ``python -m benches.synthetic check`` against the real English corpus ("english") and a
#: steeper growth for web text ("web"; docs/simulated-scale.md says where its exponent comes from).
SETTINGS = {
    "english": dict(a=1.11, q=-4070.0, once=0.2, once_slope=0.045, once_from=1e4, once_max=0.7),
    "web": dict(a=1.05, q=-4070.0, once=0.2, once_slope=0.045, once_from=1e4, once_max=0.7),
}
#: Characters that end a line for some readers: never inside a piece.
LINE_BREAKS = set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


# --------------------------------------------------------------------------- kinds


def kind_of(piece: str) -> str:
    """The kind of a GPT-2 piece.

    >>> [kind_of(p) for p in (" the", "Straße", " 12", "...", "   ", " Москва")]
    ['latin', 'latin', 'number', 'punct', 'space', 'script']
    """
    if piece.isspace():
        return "space"
    body = piece[1:] if piece.startswith(" ") else piece
    cats = {unicodedata.category(c)[0] for c in body}
    if cats == {"L"} or cats == {"L", "M"}:
        return "latin" if all(ord(c) < 0x250 for c in body) else "script"
    if cats == {"N"}:
        return "number"
    return "punct"


def _class(c: str) -> int:
    """0 letter, 1 number, 2 other, 3 white space: GPT-2's run classes."""
    if c.isspace():
        return 3
    cat = unicodedata.category(c)[0]
    return 0 if cat in "LM" else 1 if cat == "N" else 2


#: Alphabet sizes: the most frequent characters of each kind (order-2 Latin model: 100).
_ALPHABET = {"latin": 100}
#: Resolution of the sampling tables: a uniform picks one of this many slots per state.
_SLOTS = 1024
#: Slots of the head's guide table (:meth:`Generator.ranks`).
_GUIDE = 1 << 16


class _CharModel:
    """A character-level Markov model of one kind, sampled many pieces at a time through a
    lookup table per state (``_SLOTS`` slots, each a character in proportion to its count)."""

    def __init__(self, spec: dict, kind: str):
        self.order = spec["order"]
        alphabet = spec["alphabet"][: _ALPHABET.get(kind, 255)]
        a = self.a = max(1, len(alphabet))
        index = {c: i for i, c in enumerate(alphabet)}
        states = (a + 1) ** self.order
        counts = np.zeros((states, a), dtype=np.float64)
        for key, n in spec["transitions"]:
            history, c = key.split("\0")
            if c not in index or any(h not in index for h in history):
                continue
            state = 0
            for h in history.rjust(self.order, "\1"):
                state = state * (a + 1) + (a if h == "\1" else index[h])
            counts[state, index[c]] += n
        unigram = counts.sum(axis=0) + 1e-9
        counts[counts.sum(axis=1) == 0] = unigram
        cdf = np.cumsum(counts, axis=1)
        cdf /= cdf[:, -1:]
        slots = (np.arange(_SLOTS) + 0.5) / _SLOTS
        self.table = np.empty((states, _SLOTS), dtype=np.uint8)
        for row in range(states):
            self.table[row] = np.searchsorted(cdf[row], slots, side="right").clip(0, a - 1)
        self.codes = np.array([ord(c) for c in alphabet] or [32], dtype=np.uint32)
        # Each character's UTF-8 bytes (up to 4) and their number: pieces are made as bytes.
        encoded = [c.encode("utf-8") for c in alphabet] or [b" "]
        self.utf8_length = np.array([len(e) for e in encoded], dtype=np.int64)
        self.utf8 = np.array([list(e.ljust(4, b"\0")) for e in encoded], dtype=np.uint8)
        lengths = spec["lengths"] or [[1, 1]]
        self.length_values = np.array([l for l, _ in lengths])
        lc = np.cumsum([n for _, n in lengths]).astype(np.float64)
        self.length_cdf = lc / lc[-1]
        self.start = sum(a * (a + 1) ** i for i in range(self.order))

    def sample(self, u_length: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One piece body per row, all in numpy: ``(data, lengths, order)``, the bodies' UTF-8
        bytes end to end, each one's length in bytes, and the rows in the order they are laid
        out (longest first). Its length in characters comes from ``u_length``, its ``j``-th
        character from :func:`_column` ``j + 4`` of its row's ``keys``: only as many
        uniforms as a row has characters are made."""
        n = len(u_length)
        if not n:
            return np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        lengths = self.length_values[np.searchsorted(self.length_cdf, u_length, side="right")
                                     .clip(0, len(self.length_values) - 1)]
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        keys = keys[order]
        width = int(lengths[0])
        active = n - np.searchsorted(lengths[::-1], np.arange(width), side="right")  # longer than j
        a = self.a
        state = np.full(n, self.start, dtype=np.int64)
        out = np.zeros((n, width), dtype=np.int64)
        modulus = (a + 1) ** (self.order - 1)
        for j in range(width):
            m = int(active[j])
            slot = (_column(keys[:m], j + 4) * _SLOTS).astype(np.int64)
            c = self.table[state[:m], slot].astype(np.int64)
            out[:m, j] = c
            state[:m] = (state[:m] % modulus) * (a + 1) + c
        inside = np.arange(width)[None, :] < lengths[:, None]
        chars = out[inside]  # row by row: each piece's characters in order
        widths = self.utf8_length[chars]
        data = self.utf8[chars][np.arange(4)[None, :] < widths[:, None]]
        sizes = np.bincount(np.repeat(np.arange(n), lengths), weights=widths, minlength=n)
        return data, sizes.astype(np.int64), order


_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays: a counter-based hash, so a rank's random
    numbers are the same whichever block asks for them."""
    x = x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _keys(seed: int, ranks: np.ndarray) -> np.ndarray:
    """Each rank's key: the start of its stream of uniforms (:func:`_column`)."""
    return _mix(ranks.astype(np.uint64) * _GOLDEN
                + np.uint64((seed * 0xD1B54A32D192ED03 + 1) & 0xFFFFFFFFFFFFFFFF))


def _column(keys: np.ndarray, column: int) -> np.ndarray:
    """Uniform ``column`` (from 1) in (0, 1) of each key: a pure function of (seed, rank,
    column), so a rank's random numbers are the same whichever block asks for them."""
    bits = _mix(keys + np.uint64((column * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)) >> np.uint64(11)
    return (bits.astype(np.float64) + 0.5) / float(1 << 53)


class Generator:
    """The generator for one seed and setting; :meth:`block` is its whole output, block by
    block."""

    def __init__(self, seed: int = 0, setting: str = "english", model: Path = MODEL):
        with gzip.open(model, "rt", encoding="utf-8") as f:
            spec = json.load(f)
        self.seed = seed
        self.setting = setting
        params = SETTINGS[setting]
        self.a, self.q = params["a"], params["q"]
        self.once, self.once_slope, self.once_max = params["once"], params["once_slope"], params["once_max"]
        self.once_from = params["once_from"]
        head = spec["head"]
        total = spec["tokens"]
        self.head_pieces = [p.encode("utf-8") for p, _ in head]
        probs = np.array([c for _, c in head], dtype=np.float64) / total
        self.head_cdf = np.cumsum(probs)
        self.head_mass = float(self.head_cdf[-1])
        # A guide table: where the uniforms of each of _GUIDE equal slots of (0, 1) fall in
        # the head, so that only the few slots a rank boundary crosses need a search.
        self.guide = np.searchsorted(self.head_cdf, np.arange(_GUIDE + 1) / _GUIDE,
                                     side="right").astype(np.uint16)
        self.models = {k: _CharModel(spec["kinds"][k], k) for k in KINDS}
        shares = np.array([spec["kinds"][k]["share"] for k in KINDS])
        self.kind_cdf = np.cumsum(shares / shares.sum())
        self.kind_space = np.array([spec["kinds"][k]["space"] for k in KINDS])
        lt = spec["line_tokens"]
        self.line_values = np.array([n for n, _ in lt if n > 0])
        lc = np.cumsum([c for n, c in lt if n > 0]).astype(np.float64)
        self.line_cdf = lc / lc[-1]
        # Fixed pieces: 0 a space, 1 a line end, then the head, then the first PRECOMPUTED
        # synthetic ranks (they recur in every block); rank r is fixed piece r + 1.
        infos = [_info(p) for p in (b" ", b"\n", *self.head_pieces)]
        pre = self.tail_pieces(np.arange(HEAD + 1, HEAD + 1 + PRECOMPUTED, dtype=np.int64))
        self.fixed = _Pool([b" ", b"\n", *self.head_pieces],
                           np.array([i[0] for i in infos], dtype=np.int8),
                           np.array([i[1] for i in infos], dtype=np.int8),
                           np.array([i[2] for i in infos], dtype=bool)) + pre

    def tail_pieces(self, ranks: np.ndarray) -> "_Pool":
        """The synthetic piece of each rank (past the head): a function of (seed, rank), made
        for all ranks at once in numpy."""
        n = len(ranks)
        keys = _keys(self.seed, ranks)
        u_kind, u_length, u_space = (_column(keys, c) for c in (1, 2, 3))
        kinds = np.searchsorted(self.kind_cdf, u_kind, side="right").clip(0, len(KINDS) - 1)
        spaced = (u_space < self.kind_space[kinds]) & (kinds != KINDS.index("space"))
        body = np.zeros(n, dtype=np.int64)
        parts = []
        for k, kind in enumerate(KINDS):
            rows = np.nonzero(kinds == k)[0]
            if len(rows):
                data, sizes, order = self.models[kind].sample(u_length[rows], keys[rows])
                rows = rows[order]
                body[rows] = sizes
                parts.append((rows, data, sizes))
        lengths = body + spaced
        offsets = np.zeros(n, dtype=np.int64)
        np.cumsum(lengths[:-1], out=offsets[1:])
        flat = np.empty(int(lengths.sum()), dtype=np.uint8)
        flat[offsets[spaced]] = ord(" ")
        for rows, data, sizes in parts:
            starts = offsets[rows] + spaced[rows]
            within = np.arange(len(data)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            flat[np.repeat(starts, sizes) + within] = data
        classes = np.array([0, 0, 1, 2, 3], dtype=np.int8)[kinds]
        return _Pool.of_arrays(flat, offsets, lengths, classes, classes, spaced)

    def ranks(self, block: int, count: int) -> np.ndarray:
        """``count`` token ranks of ``block`` (1-based; past ``HEAD``: synthetic)."""
        rng = np.random.Generator(np.random.PCG64([self.seed, block, 1]))
        u = rng.random(count)
        slot = (u * _GUIDE).astype(np.int64)
        ranks = self.guide[slot].astype(np.int64)
        crossed = np.nonzero(ranks != self.guide[slot + 1])[0]
        ranks[crossed] = np.searchsorted(self.head_cdf, u[crossed], side="right")
        ranks += 1
        tail = u >= self.head_mass
        v = (1.0 - u[tail]) / (1.0 - self.head_mass)  # in (0, 1]
        start = HEAD + 1 + self.q
        x = start * np.power(v, -1.0 / (self.a - 1.0)) - self.q
        drawn = np.minimum(np.floor(x), 2.0**62).astype(np.int64).clip(HEAD + 1)
        # Bursts: a tail piece drawn comes back at the next few tail places (real text
        # repeats a rare name or number where it uses it), geometric: one copy with
        # probability ``once`` at the rank ``1e4 - q``, more often the rarer the piece
        # (``once_slope`` per e-fold of ``rank + q``, up to ``once_max``).
        single = self.once + self.once_slope * np.log(np.maximum(1.0, (drawn + self.q) / self.once_from))
        copies = rng.geometric(single.clip(0.05, self.once_max))
        ranks[tail] = np.repeat(drawn, copies)[: len(drawn)]
        return ranks

    def block(self, block: int) -> bytes:
        """Block ``block`` of the output: whole lines, about ``BLOCK_TOKENS`` tokens."""
        rng = np.random.Generator(np.random.PCG64([self.seed, block, 2]))
        mean = float((self.line_values * np.diff(self.line_cdf, prepend=0)).sum())
        lines = self.line_values[np.searchsorted(
            self.line_cdf, rng.random(int(BLOCK_TOKENS / mean * 1.5) + 16), side="right")
            .clip(0, len(self.line_values) - 1)]
        ends = np.cumsum(lines)
        keep = int(np.searchsorted(ends, BLOCK_TOKENS, side="left")) + 1
        ends = ends[:keep]
        count = int(ends[-1])
        ranks = self.ranks(block, count)
        fixed = self.fixed
        tail = ranks > HEAD + PRECOMPUTED
        uniq, inverse = np.unique(ranks[tail], return_inverse=True)
        pool = fixed + self.tail_pieces(uniq)
        ids = ranks + 1
        ids[tail] = len(fixed) + inverse
        first, last, spaced = pool.first[ids], pool.last[ids], pool.spaced[ids]
        line_start = np.zeros(count, dtype=bool)
        line_start[0] = True
        line_start[ends[:-1]] = True
        prev_last = np.roll(last, 1)
        # Pieces that would run into the one before: same run class, or after white space.
        clash = ~line_start & ~spaced & ((first == prev_last) | (prev_last == 3))
        clash &= ~((first == 3) & (prev_last == 3))
        # Output sequence: a space before each clash, a line end after each line.
        extra_space = np.nonzero(clash)[0]
        seq = np.insert(ids, extra_space, 0)
        ends_in_seq = ends + np.searchsorted(extra_space, ends, side="left")
        seq = np.insert(seq, ends_in_seq, 1)
        # Gather the pieces' bytes (int32 indexes: half the memory traffic of int64).
        sizes = pool.lengths[seq].astype(np.int32)
        total = int(sizes.sum(dtype=np.int64))
        starts = (pool.offsets[seq] - (np.cumsum(sizes, dtype=np.int64) - sizes)).astype(np.int32)
        index = np.repeat(starts, sizes)
        index += np.arange(total, dtype=np.int32)
        return pool.flat[index].tobytes()


class _Pool:
    """Pieces laid end to end (``flat``, ``offsets``, ``lengths``) with their run classes at
    each end and whether they start with a space (see :func:`_info`)."""

    def __init__(self, pieces: list[bytes], first, last, spaced):
        self.lengths = np.array([len(p) for p in pieces], dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.int64)
        self.flat = np.frombuffer(b"".join(pieces), dtype=np.uint8)
        self.first, self.last, self.spaced = first, last, spaced

    @classmethod
    def of_arrays(cls, flat, offsets, lengths, first, last, spaced) -> "_Pool":
        pool = cls.__new__(cls)
        pool.flat, pool.offsets, pool.lengths = flat, offsets, lengths
        pool.first, pool.last, pool.spaced = first, last, spaced
        return pool

    def __len__(self) -> int:
        return len(self.lengths)

    def __add__(self, other: "_Pool") -> "_Pool":
        joined = _Pool.__new__(_Pool)
        joined.lengths = np.concatenate((self.lengths, other.lengths))
        joined.offsets = np.concatenate((self.offsets, other.offsets + len(self.flat)))
        joined.flat = np.concatenate((self.flat, other.flat))
        joined.first = np.concatenate((self.first, other.first))
        joined.last = np.concatenate((self.last, other.last))
        joined.spaced = np.concatenate((self.spaced, other.spaced))
        return joined


def _info(piece: bytes) -> tuple[int, int, bool]:
    """(class of its first character, of its last, starts with a space and is not all space)."""
    text = piece.decode("utf-8")
    if not text:
        return 2, 2, True
    spaced = text[0] == " " and not text.isspace()
    return _class(text[1] if spaced else text[0]), _class(text[-1]), spaced


# --------------------------------------------------------------------------- writing


_worker_generator: Generator | None = None
_generators: dict[tuple[int, str], Generator] = {}


def _init(seed: int, setting: str) -> None:
    """This process's generator for (seed, setting), made once (making one takes seconds)."""
    global _worker_generator
    if (seed, setting) not in _generators:
        _generators[seed, setting] = Generator(seed, setting)
    _worker_generator = _generators[seed, setting]


def _block(k: int) -> bytes:
    return _worker_generator.block(k)


def write(out, size: int, seed: int = 0, setting: str = "english", workers: int = 1) -> dict:
    """Write the first ``size`` bytes (cut at a line end) of the synthetic text to the binary
    file ``out``; the same bytes for any ``workers``. Workers make blocks ahead of the
    writer (a few each), which writes them in order."""
    total = lines = 0
    pool = multiprocessing.get_context("spawn").Pool(workers, _init, (seed, setting)) \
        if workers > 1 else None
    if pool is None:
        _init(seed, setting)
    pending: collections.deque = collections.deque()
    ahead = 2 * workers
    k = 0
    try:
        while True:
            if pool is not None:
                while len(pending) < ahead:
                    pending.append(pool.apply_async(_block, (k,)))
                    k += 1
                data = pending.popleft().get()
            else:
                data = _block(k)
                k += 1
            room = size - total
            done = len(data) >= room
            if done:
                data = data[: data.rfind(b"\n", 0, room) + 1]
            out.write(data)
            total += len(data)
            lines += data.count(b"\n")
            if done:
                break
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return dict(bytes=total, lines=lines)


def corpus_path(size: int, *, setting: str = "english", seed: int = 0, rebuild: bool = False,
                workers: int | None = None, cache: Path | None = None) -> Path:
    """The synthetic corpus of ``size`` bytes, written once into the benchmark cache with a
    JSON manifest beside it (``python -m benches.corpus --language synthetic``)."""
    cache = cache or cache_dir()
    name = "synthetic" if setting == "english" else f"synthetic-{setting}"
    path = cache / f"{name}-v{VERSION}-seed{seed}-{size}.txt"
    manifest = path.with_suffix(".json")
    if path.exists() and manifest.exists() and not rebuild:
        return path
    cache.mkdir(parents=True, exist_ok=True)
    larger = sorted((int(p.stem.rsplit("-", 1)[1]), p) for p in cache.glob(f"{name}-v{VERSION}-seed{seed}-*.txt")
                    if int(p.stem.rsplit("-", 1)[1]) > size and p.with_suffix(".json").exists())
    if larger and not rebuild:  # every size is a prefix of every larger one
        return _prefix(larger[0][1], size, path)
    workers = workers or min(2, os.cpu_count() or 1)
    started = time.perf_counter()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            info = write(f, size, seed, setting, workers)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info.update(recipe=f"synthetic v{VERSION}", language=name, simulated=True, seed=seed,
                setting=setting, requested=size, **SETTINGS[setting],
                model=MODEL.name, built_seconds=round(time.perf_counter() - started, 1),
                recipe_text="SIMULATED text: real English head pieces and synthetic tail "
                            "pieces drawn from a fitted frequency law (benches/synthetic.py)")
    manifest.write_text(json.dumps(info, indent=1) + "\n")
    return path


def _prefix(larger: Path, size: int, path: Path) -> Path:
    """``path``: the first ``size`` bytes of ``larger`` cut at a line end, and its manifest."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    total = lines = 0
    try:
        with open(larger, "rb") as f, open(tmp, "wb") as out:
            while total < size and (data := f.read(min(1 << 24, size - total))):
                if total + len(data) >= size:
                    data = data[: data.rfind(b"\n") + 1]
                    total = size  # stop after this write
                out.write(data)
                lines += data.count(b"\n")
                total = total if total == size else total + len(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info = json.loads(larger.with_suffix(".json").read_text())
    info.update(bytes=path.stat().st_size, lines=lines, requested=size, prefix_of=larger.name)
    path.with_suffix(".json").write_text(json.dumps(info, indent=1) + "\n")
    return path
