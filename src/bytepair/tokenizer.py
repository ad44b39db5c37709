"""Training a real tokenizer from files: split, count, learn, add special tokens.

IDs: 0-255 are the bytes, ``256 + rank`` the learned tokens, and the special
tokens follow, in the order given: the first special token has ID
``256 + len(merges)``.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from array import array
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Collection, Iterable, Iterator, Sequence

import regex

from . import incremental
from ._validate import MAX_BYTE_MERGES, check_int
from .corpus import Files, as_files, iter_documents, read_file
from .model import BYTE_TOKENS, ByteModel
from . import fastsplit
from .pretokenize import PATTERNS, resolve_pattern, splitter
from .rules import Merge

#: Documents are sent to counting workers in batches of about this many characters.
BATCH_CHARS = 1 << 21
#: Line-based files are counted by workers in byte ranges of at least this size.
PART_BYTES = 1 << 23
#: encode_batch gives each thread at least this many characters.
THREAD_MIN_CHARS = 1 << 14
#: Special-token matchers kept per tokenizer (one per distinct set of tokens).
MATCHER_CACHE = 32
#: Up to this many special tokens are looked for one by one, not with a regex.
FEW_SPECIAL = 16


class Tokenizer:
    """A byte-level BPE tokenizer: pre-tokenizer, rules and special tokens.

    >>> tok = train(["low lower lowest"] * 3, merges=4, pretokenize="gpt2",
    ...             special_tokens=["<|end|>"], progress=False)
    >>> tok.vocab_size, tok.special_tokens
    (261, {'<|end|>': 260})
    >>> ids = tok.encode("lowest<|end|>", allowed_special="all")
    >>> ids[-1], tok.decode(ids)
    (260, 'lowest<|end|>')
    """

    def __init__(self, model: ByteModel, special_tokens: Sequence[str] = ()):
        self.model = model
        special_tokens = check_special_tokens(special_tokens)
        first = model.vocab_size
        self.special_tokens: dict[str, int] = {t: first + i for i, t in enumerate(special_tokens)}
        self._special_of_id = {i: t for t, i in self.special_tokens.items()}
        self._all_special = frozenset(self.special_tokens)
        # Special tokens that are not text are refused elsewhere; never fail here.
        self._special_bytes = tuple(t.encode("utf-8", "surrogatepass") for t in special_tokens)
        self._matchers: dict[frozenset, regex.Pattern] = {}

    def __repr__(self) -> str:
        return (f"<Tokenizer vocab_size={self.vocab_size} merges={len(self.merges)} "
                f"special_tokens={len(self.special_tokens)}>")

    def __eq__(self, other) -> bool:
        return (isinstance(other, Tokenizer) and self.model == other.model
                and self.special_tokens == other.special_tokens)

    @property
    def pattern(self) -> str | None:
        """The pre-tokenizer regex source (None: no split)."""
        return self.model.pattern

    @property
    def merges(self) -> list[Merge]:
        return self.model.merges

    @property
    def vocab_size(self) -> int:
        """256 bytes + learned tokens + special tokens."""
        return self.model.vocab_size + len(self.special_tokens)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of a token; a special token's bytes are its UTF-8 text."""
        token_id = check_int(token_id, "token_id", maximum=self.vocab_size - 1)
        special = self._special_of_id.get(token_id)
        return special.encode("utf-8") if special is not None else self.model.token_bytes(token_id)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating special-token text as ordinary text."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self.model.encode(text)

    def _matcher(self, tokens: frozenset):
        """A regex finding any of ``tokens``, longest first; built once per set of tokens."""
        matcher = self._matchers.get(tokens)
        if matcher is None:
            if len(self._matchers) >= MATCHER_CACHE:
                self._matchers.clear()
            # Longest first, so that a special token containing another wins.
            matcher = regex.compile("(" + "|".join(
                regex.escape(t) for t in sorted(tokens, key=len, reverse=True)) + ")")
            self._matchers[tokens] = matcher
        return matcher

    def _special_sets(self, allowed_special, disallowed_special) -> tuple[frozenset, frozenset]:
        if allowed_special == "all":
            allowed = self._all_special
        else:
            allowed = frozenset(allowed_special)
            unknown = allowed - self._all_special
            if unknown:
                raise ValueError(
                    f"allowed_special: not special tokens of this tokenizer: {sorted(unknown)}")
        disallowed = (self._all_special - allowed if disallowed_special == "all"
                      else frozenset(disallowed_special))
        return allowed, disallowed

    def encode(self, text: str, *, allowed_special: Collection[str] | str = frozenset(),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        """Encode ``text``; special tokens as tiktoken does.

        Special-token text in ``allowed_special`` (or ``"all"``) becomes its
        ID; text of a special token in ``disallowed_special`` (default: every
        one not allowed) raises ValueError; any other text is ordinary. The
        special-token matchers are built once per set of tokens and kept.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        if disallowed:
            found = self._find_special(disallowed, text)
            if found is not None:
                raise ValueError(
                    f"text contains the special token {found!r}; pass allowed_special to "
                    "encode it as its ID, or disallowed_special=() to encode it as text"
                )
        if not allowed or self._find_special(allowed, text) is None:
            return self.model.encode(text)
        out: list[int] = []
        for i, part in enumerate(self._matcher(allowed).split(text)):
            if i % 2:
                out.append(self.special_tokens[part])
            elif part:
                out.extend(self.model.encode(part))
        return out

    def encode_batch(self, texts: Iterable[str], *, threads: int | None = None,
                     allowed_special: Collection[str] | str = frozenset(),
                     disallowed_special: Collection[str] | str = "all") -> list[list[int]]:
        """:meth:`encode` of each text, on ``threads`` threads (default: one per core).

        The compiled encoder splits and merges without the GIL, so threads
        run in parallel; the result is the same for any number of threads.
        Texts are handed out in contiguous chunks of about equal size.
        """
        texts = texts if isinstance(texts, list) else list(texts)
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{index}] must be a str, got {type(text).__name__}")
        threads = (check_int(threads, "threads", minimum=1) if threads is not None
                   else os.cpu_count() or 1)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)

        def encode_chunk(chunk: list[str]) -> list[list[int]]:
            # Most batches hold no special-token text: one check of the joined
            # chunk, then the compiled batch encoder.
            if not (allowed or disallowed) or self._find_special(
                    allowed | disallowed, "\0".join(chunk)) is None:
                return self.model.encode_batch(chunk)
            return [self.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                    for text in chunk]

        total = sum(map(len, texts))
        threads = min(threads, len(texts), max(1, total // THREAD_MIN_CHARS))
        if threads <= 1:
            return encode_chunk(texts)
        chunks = _chunks(texts, total, 4 * threads)
        with ThreadPoolExecutor(threads) as pool:
            return [ids for part in pool.map(encode_chunk, chunks) for ids in part]

    def _find_special(self, tokens: frozenset, text: str) -> str | None:
        """One of ``tokens`` that occurs in ``text``, or None.

        A few tokens are looked for with ``str.__contains__`` (fast); many
        with one regex, built once per set of tokens.
        """
        if len(tokens) <= FEW_SPECIAL:
            for token in sorted(tokens):
                if token in text:
                    return token
            return None
        found = self._matcher(tokens).search(text)
        return found.group() if found else None

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The exact bytes of a token sequence, special tokens included; O(IDs + bytes).

        ``array("H")`` and ``array("I")`` of IDs are read without a list.
        """
        if isinstance(ids, array) and ids.typecode in "HI":
            return self.model._codec.decode_array(ids, self._special_bytes)
        return self.model._codec.decode(ids, self._special_bytes)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode to text; bytes that are not UTF-8 follow ``errors`` (as ``bytes.decode``)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace") -> list[str]:
        """:meth:`decode` of each sequence of IDs."""
        return [self.decode(ids, errors) for ids in batch]

    def decode_bytes_batch(self, batch: Iterable[Iterable[int]]) -> list[bytes]:
        """:meth:`decode_bytes` of each sequence of IDs."""
        return [self.decode_bytes(ids) for ids in batch]

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer to ``path`` atomically (see ``docs/format.md``)."""
        from .io import save_model

        save_model(self, path)

    def to_tokenizers_json(self, path: str | os.PathLike) -> None:
        """Export a Hugging Face ``tokenizer.json`` (see :mod:`bytepair.export`)."""
        from .export import to_tokenizers_json

        to_tokenizers_json(self, path)

    def to_tiktoken(self, path: str | os.PathLike) -> None:
        """Export a tiktoken BPE ranks file (see :mod:`bytepair.export`)."""
        from .export import to_tiktoken

        to_tiktoken(self, path)


def _chunks(texts: list[str], total: int, parts: int) -> list[list[str]]:
    """Contiguous runs of ``texts`` of about ``total / parts`` characters each."""
    target = total / parts
    chunks, chunk, size = [], [], 0
    for text in texts:
        chunk.append(text)
        size += len(text)
        if size >= target:
            chunks.append(chunk)
            chunk, size = [], 0
    if chunk:
        chunks.append(chunk)
    return chunks


def check_special_tokens(special_tokens) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a sequence of str, not a single str")
    tokens = list(special_tokens)
    for index, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise ValueError(f"special_tokens[{index}] must be a non-empty str, got {token!r}")
    if len(set(tokens)) != len(tokens):
        raise ValueError("special_tokens must not repeat a token")
    return tokens


def _ignore_interrupt() -> None:
    # Ctrl-C reaches the whole process group; only the parent should react
    # (it stops the pool), or every worker prints its own traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _count_batch(job: tuple[list, str | None]) -> Counter:
    """Piece counts (UTF-8 bytes -> count) of one batch of documents."""
    documents, source = job
    if source is None:
        return Counter(doc for doc in documents if doc)
    if source == PATTERNS["gpt2"] and fastsplit.available():
        return fastsplit.count_gpt2(documents)
    split = splitter(source)
    counts: Counter = Counter()
    for doc in documents:
        counts.update(split(doc))
    return Counter({piece.encode("utf-8"): n for piece, n in counts.items()})


def _batches(documents: Iterator, progress_bar) -> Iterator[list]:
    batch, size = [], 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if progress_bar is not None:
            progress_bar.update(len(doc))
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def count_pieces(documents: Iterable, source: str | None, *, workers: int = 1,
                 progress_bar=None) -> Counter:
    """Piece counts (UTF-8 bytes -> count) of a document stream.

    With ``workers > 1`` batches are counted in worker processes; the sum is
    the same whatever the split, so the result equals the single-process one.
    Shipping text to a worker costs about as much as counting it when no
    regex runs (no pre-tokenizer, or the compiled GPT-2 splitter), so those
    are counted in this process.
    """
    jobs = ((batch, source) for batch in _batches(iter(documents), progress_bar))
    total: Counter = Counter()
    fast = source is None or (source == PATTERNS["gpt2"] and fastsplit.available())
    if source is not None and fast:
        fastsplit.split_gpt2("")  # build its table once, before workers fork
    if workers <= 1 or fast:
        for job in jobs:
            total.update(_count_batch(job))
    else:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_ignore_interrupt) as pool:
            for counts in pool.imap_unordered(_count_batch, jobs):
                total.update(counts)
    return total


def _count_part(job: tuple) -> tuple[Counter, int]:
    path, start, end, text, per_line, jsonl_field, source = job
    documents = read_file(path, text=text, per_line=per_line, jsonl_field=jsonl_field,
                          start=start, end=end)
    size = (end if end is not None else path.stat().st_size) - start
    return _count_batch((documents, source)), size


def count_files(files: Files, source: str | None, *, workers: int, progress_bar=None) -> Counter:
    """Piece counts of files, each worker reading its own byte ranges.

    Only the counts travel between processes, not the text.
    """
    total_bytes = files.total_bytes()
    part = max(PART_BYTES, total_bytes // (4 * workers) + 1)
    jobs = [(path, start, end, source is not None, files.per_line, files.jsonl_field, source)
            for path, start, end in files.parts(part)]
    if source == PATTERNS["gpt2"] and fastsplit.available():
        fastsplit.split_gpt2("")  # build its table once, before workers fork
    total: Counter = Counter()
    with multiprocessing.get_context("fork").Pool(workers, initializer=_ignore_interrupt) as pool:
        for counts, size in pool.imap_unordered(_count_part, jobs):
            total.update(counts)
            if progress_bar is not None:
                progress_bar.update(size)
    return total


def _progress(progress: bool | None, **options):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(file=sys.stderr, dynamic_ncols=True, **options)


def train(
    corpus,
    *,
    vocab_size: int | None = None,
    merges: int | None = None,
    pretokenize: str | None = "gpt2",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    workers: int | None = None,
    progress: bool | None = None,
    init: Tokenizer | ByteModel | str | os.PathLike | None = None,
    per_line: bool = False,
    jsonl_field: str | None = None,
) -> Tokenizer:
    """Train a tokenizer on ``corpus``; see :class:`Tokenizer` for the IDs.

    ``corpus`` is a path, glob or :class:`bytepair.Files`, or an iterable of
    ``str``/``bytes`` documents, read as a stream. Give exactly one of
    ``vocab_size`` (256 bytes + learned tokens + special tokens) or
    ``merges`` (the total number of rules). Training stops early when the
    best pair is seen fewer than ``min_frequency`` times. ``init`` continues
    from an existing model: its rules are kept and training resumes. When
    ``init`` was itself trained on this corpus with the same pattern, the
    result equals training from scratch to the larger size.
    ``workers`` processes count the pieces (default: all cores).
    """
    source = resolve_pattern(pretokenize)
    special = check_special_tokens(special_tokens)
    min_frequency = check_int(min_frequency, "min_frequency", minimum=1)
    if (vocab_size is None) == (merges is None):
        raise ValueError("give exactly one of vocab_size and merges")
    if vocab_size is not None:
        floor = BYTE_TOKENS + len(special)
        vocab_size = check_int(vocab_size, "vocab_size", minimum=floor,
                               maximum=floor + MAX_BYTE_MERGES)
        merges = vocab_size - floor
    merges = check_int(merges, "merges", maximum=MAX_BYTE_MERGES)
    workers = check_int(workers, "workers", minimum=1) if workers is not None else (os.cpu_count() or 1)
    start_model = _initial_model(init, source)
    if len(start_model.merges) > merges:
        raise ValueError(
            f"init already has {len(start_model.merges)} merges, more than the {merges} requested"
        )

    corpus = as_files(corpus, per_line=per_line, jsonl_field=jsonl_field)
    bar = None
    try:
        # Without a pre-tokenizer counting is a dictionary update per document:
        # cheaper in this process than shipping the counts back from workers.
        if isinstance(corpus, Files) and workers > 1 and source is not None:
            bar = _progress(progress, desc="reading", unit="B", unit_scale=True,
                            total=corpus.total_bytes())
            counts = count_files(corpus, source, workers=workers, progress_bar=bar)
        else:
            bar = _progress(progress, desc="reading", unit="B" if source is None else "char",
                            unit_scale=True)
            documents = iter_documents(corpus, text=source is not None)
            counts = count_pieces(documents, source, workers=workers, progress_bar=bar)
        if bar is not None:
            bar.set_postfix(distinct_pieces=len(counts))
    finally:
        if bar is not None:
            bar.close()
    if not counts:
        raise ValueError("corpus: no text to train on (empty corpus)")
    rules = learn(counts, merges, min_frequency=min_frequency, start=start_model, progress=progress)
    return Tokenizer(ByteModel(rules, pattern=source), special)


def _initial_model(init, source: str | None) -> ByteModel:
    if init is None:
        return ByteModel([], pattern=source)
    if isinstance(init, (str, os.PathLike)):
        from .io import load

        init = load(init)
    model = init.model if isinstance(init, Tokenizer) else init
    if not isinstance(model, ByteModel):
        raise TypeError(f"init must be a Tokenizer, ByteModel or model path, got {type(init).__name__}")
    if model.pattern != source:
        raise ValueError("init was trained with a different pretokenize pattern")
    return model


def learn(counts: Counter, merges: int, *, min_frequency: int = 1,
          start: ByteModel | None = None, progress: bool | None = False) -> list[Merge]:
    """Rules from weighted pieces: up to ``merges`` in total, counting ``start``'s rules."""
    # Sorted pieces make the engine's input independent of how counting was split.
    pieces = sorted(counts)
    weights = array("q", (counts[p] for p in pieces))
    rules = list(start.merges) if start is not None else []
    if start is not None and start.merges:
        sequences = [array("I", start._encode_piece(p)) for p in pieces]
    else:
        sequences = pieces
    if sum(w * max(len(s) - 1, 0) for s, w in zip(sequences, weights)) > 2**63 - 1:
        raise ValueError("corpus holds more than 2**63 - 1 weighted pairs")
    trainer = incremental.IncrementalTrainer(
        sequences, weights, lambda left, right, rank: BYTE_TOKENS + rank, first_rank=len(rules)
    )
    bar = _progress(progress, desc="merging", unit="merge", total=merges, initial=len(rules))
    try:
        while len(rules) < merges:
            rule = trainer.step(min_frequency)
            if rule is None:
                break
            rules.append(rule)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return rules
