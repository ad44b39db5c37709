"""The public training entry points: validation, then the chosen engine."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import accumulate
from typing import Iterable, Mapping

from . import incremental, naive
from ._validate import (
    MAX_BYTE_MERGES,
    MAX_COUNT,
    as_document,
    check_end_of_word,
    check_engine,
    check_int,
    check_word_counts,
)
from .model import BYTE_TOKENS, ByteModel, WordModel, encode_word
from .pretokenize import resolve_pattern, splitter
from .rules import Merge


def _byte_token(left: int, right: int, rank: int) -> int:
    return BYTE_TOKENS + rank


def _check_total(sequences, weights, name: str) -> None:
    # The compiled engine counts in signed 64 bits; refuse what could overflow.
    if sum(w * max(len(s) - 1, 0) for s, w in zip(sequences, weights)) > MAX_COUNT:
        raise ValueError(f"{name} hold more than 2**63 - 1 weighted pairs")


def train_bytes(
    documents: Iterable[bytes | str],
    merges: int,
    *,
    pretokenize: str | None = None,
    engine: str | None = None,
) -> ByteModel:
    """Learn up to ``merges`` byte-pair rules from ``documents``.

    Each document (``bytes``, or ``str`` encoded as UTF-8) is a barrier. See
    :mod:`bytepair.naive` for the exact rules. ``pretokenize`` (a name in
    :data:`bytepair.pretokenize.PATTERNS` or a regex) first splits each
    document into pieces, and every piece is a barrier too; identical pieces
    are trained once with a weight, which gives exactly the rules of training
    on the pieces one by one. ``engine`` is ``"incremental"`` (the default:
    local count updates, compiled when available) or ``"naive"`` (full
    recount every round, the reference).

    >>> model = train_bytes(["aaa", "aba"], 12)
    >>> [(m.left, m.right, m.count, m.replacements) for m in model.merges][:2]
    [(97, 97, 2, 1), (97, 98, 1, 1)]
    """
    merges = check_int(merges, "merges", maximum=MAX_BYTE_MERGES)
    engine = check_engine(engine)
    source = resolve_pattern(pretokenize)
    if isinstance(documents, (str, bytes, bytearray)):
        raise TypeError("documents must be an iterable of documents, not a single str or bytes")
    try:
        documents = iter(documents)
    except TypeError:
        raise TypeError(
            f"documents must be an iterable of bytes or str, got {type(documents).__name__}"
        ) from None
    docs = list(documents)
    if not set(map(type, docs)) <= {bytes}:
        docs = [as_document(doc, i) for i, doc in enumerate(docs)]
    if source is None:
        if engine == "naive":
            rules, sequences = naive.fit(docs, [1] * len(docs), merges, _byte_token)
            return ByteModel(rules, sequences, pattern=source)
        return ByteModel(*_fit_documents(docs, merges), pattern=source)
    split = splitter(source)
    pieces_of = [
        [piece.encode("utf-8") for piece in split(_utf8(doc, i))]
        for i, doc in enumerate(docs)
    ]
    pieces = [piece for doc_pieces in pieces_of for piece in doc_pieces]
    _check_total(pieces, [1] * len(pieces), "documents")
    if engine == "naive":
        rules, piece_sequences = naive.fit(pieces, [1] * len(pieces), merges, _byte_token)
    else:
        # Identical pieces are trained once, with a weight.
        weight_of = Counter(pieces)
        unique = list(weight_of)
        weights = array("q", weight_of.values())
        rules, unique_sequences = incremental.fit(unique, weights, merges, _byte_token)
        sequence_of = dict(zip(unique, unique_sequences))
        piece_sequences = [sequence_of[piece] for piece in pieces]
    # Regroup the pieces' sequences by document.
    sequences, start = [], 0
    for doc_pieces in pieces_of:
        end = start + len(doc_pieces)
        sequences.append([t for seq in piece_sequences[start:end] for t in seq])
        start = end
    return ByteModel(rules, sequences, pattern=source)


def _fit_documents(docs: list[bytes], merges: int) -> tuple[list[Merge], list[list[int]]]:
    """Byte-mode rules and transformed documents, each distinct document trained once.

    The engine is built from flat arrays (all distinct documents joined,
    their offsets, their multiplicities): O(total bytes) in C, no loop per
    document in Python. No weighted total can overflow here: every window is
    a byte held in memory.
    """
    weight_of = Counter(docs)
    unique = list(weight_of)
    weights = array("q", weight_of.values())
    del weight_of
    starts = array("q", [0])
    starts.extend(accumulate(map(len, unique)))
    tokens = b"".join(unique)
    trainer = incremental.IncrementalTrainer.from_arrays(tokens, starts, weights, _byte_token)
    del tokens, starts
    rules = trainer.steps(merges)
    with incremental.gc_paused():
        unique_sequences = trainer.sequences(release=True)
        del trainer
        if len(unique) == len(docs):
            return rules, unique_sequences  # no duplicates: the lists are the documents'
        # A duplicate gets a copy, so that no two documents share a list.
        sequence_of = dict(zip(unique, unique_sequences))
        del unique, unique_sequences
        shared = dict(sequence_of)
        firsts = [sequence_of.pop(doc, None) for doc in docs]
        return rules, [seq if seq is not None else list(shared[doc]) for doc, seq in zip(docs, firsts)]


def _utf8(doc: bytes, index: int) -> str:
    try:
        return doc.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"documents[{index}]: invalid UTF-8 at byte offset {exc.start} (a pre-tokenizer needs text)"
        ) from None


def train_words(
    word_counts: Mapping[str, int],
    merges: int,
    *,
    end_of_word: str | None = None,
    engine: str | None = None,
) -> WordModel:
    """Learn up to ``merges`` rules over string symbols from word counts.

    A word starts as its characters (plus ``end_of_word`` when given); pair
    counts are weighted by the word's count; ties go to the smallest
    ``(left, right)`` in string order; a merged symbol is its two strings
    joined, so equal strings are one symbol.

    >>> train_words({"low": 1, "lower": 1, "lowest": 1}, 1, end_of_word="</w>").rules
    [('l', 'o')]
    """
    counts = check_word_counts(word_counts)
    merges = check_int(merges, "merges")
    end_of_word = check_end_of_word(end_of_word)
    engine = check_engine(engine)
    words = list(counts)
    start = [list(word) + ([end_of_word] if end_of_word else []) for word in words]
    weights = [counts[word] for word in words]
    _check_total(start, weights, "word_counts")
    if engine == "naive":
        rules, sequences = naive.fit(start, weights, merges, lambda left, right, rank: left + right)
    else:
        rules, sequences = _train_words_incremental(start, weights, merges)
    return WordModel(
        rules,
        end_of_word=end_of_word,
        words={word: tuple(seq) for word, seq in zip(words, sequences)},
    )


def _train_words_incremental(start, weights, merges):
    # Symbols are interned to integer IDs for the engine; the queue sorts by
    # the strings themselves, and a joined string that exists reuses its ID.
    keys: list[str] = []
    key_to_id: dict[str, int] = {}

    def intern(symbol: str) -> int:
        if symbol not in key_to_id:
            key_to_id[symbol] = len(keys)
            keys.append(symbol)
        return key_to_id[symbol]

    sequences = [array("I", map(intern, seq)) for seq in start]

    def join(left: int, right: int, rank: int) -> int:
        return intern(keys[left] + keys[right])

    rules, out = incremental.fit(
        sequences, array("q", weights), merges, join, keys=keys, key_to_id=key_to_id
    )
    rules = [
        Merge(m.rank, keys[m.left], keys[m.right], keys[m.token_id], m.count, m.replacements)
        for m in rules
    ]
    return rules, [[keys[t] for t in seq] for seq in out]


def learn_bpe(
    word_counts: Mapping[str, int],
    merges: int,
    *,
    end_of_word: str | None = None,
    engine: str | None = None,
) -> list[tuple[str, str]]:
    """The learned pairs, in order (see :func:`train_words` for the details).

    >>> learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 4)
    [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w')]
    """
    return train_words(word_counts, merges, end_of_word=end_of_word, engine=engine).rules


encode = encode_word
