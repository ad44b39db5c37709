"""Training on what is held in memory: documents as a list (:func:`train_bytes`), word counts
(:func:`train_words`, :func:`learn_bpe`), and the words of a corpus (:func:`learn_words`).

These return the models of the course's exercises (rules and, with documents, the
transformed sequences); :func:`bytepair.train` makes a full tokenizer from files.
"""

from __future__ import annotations

import operator
import os
from array import array
from collections import Counter
from itertools import accumulate, repeat
from typing import Iterable, Mapping

from bytepair._util.progress import progress_bar
from bytepair._util.validate import (MAX_BYTE_MERGES, MAX_COUNT, as_document, check_end_of_word,
                                     check_engine, check_int, check_size, check_word_counts)
from bytepair.read.corpus import Files
from bytepair.split.pretokenize import check_matches_something, resolve_pattern, splitter
from bytepair.counts.words import count_words
from bytepair.learn import incremental, loop, naive
from bytepair.learn import words as word_engines
from bytepair.learn.loop import check_total
from bytepair.learn.rules import Merge, byte_token
from bytepair.model.models import ByteModel, WordModel, encode_word


def train_bytes(
    documents: Iterable[bytes | str],
    merges: int,
    *,
    pretokenize: str | None = None,
    engine: str | None = None,
) -> ByteModel:
    """Learn up to ``merges`` byte-pair rules from ``documents``.

    Each document (``bytes``, or ``str`` encoded as UTF-8) is a barrier. See
    :mod:`bytepair.learn.naive` for the exact rules. ``pretokenize`` (a name in
    :data:`bytepair.split.pretokenize.PATTERNS` or a regex) first splits each
    document into pieces, and every piece is a barrier too; identical pieces
    are trained once with a weight, which gives exactly the rules of training
    on the pieces one by one. ``engine`` is ``"incremental"`` (the default:
    local count updates, compiled when available) or ``"naive"`` (full
    recount every round, the reference).

    >>> model = train_bytes(["aaa", "aba"], 12)
    >>> [(m.left, m.right, m.count, m.replacements) for m in model.merges][:2]
    [(97, 97, 2, 1), (97, 98, 1, 1)]
    """
    merges = check_size(merges, "merges", maximum=MAX_BYTE_MERGES)
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
            rules, sequences = naive.fit(docs, [1] * len(docs), merges, byte_token)
            return ByteModel(rules, sequences, pattern=source)
        return ByteModel(*_fit_documents(docs, merges), pattern=source)
    # Pieces in document order, and how many each document has: an empty
    # document costs a pointer and a count, not lists of its own.
    split = splitter(source)
    pieces, pieces_per_doc = [], array("Q")
    for i, doc in enumerate(docs):
        doc_pieces = split(_utf8(doc, i)) if doc else ()
        pieces.extend(piece.encode("utf-8") for piece in doc_pieces)
        pieces_per_doc.append(len(doc_pieces))
    del docs
    check_matches_something(source, pieces)
    check_total(pieces, repeat(1), "documents")
    if engine == "naive":
        rules, piece_sequences = naive.fit(pieces, [1] * len(pieces), merges, byte_token)
    else:
        # Identical pieces are trained once, with a weight.
        weight_of = Counter(pieces)
        unique = list(weight_of)
        weights = array("q", weight_of.values())
        rules, unique_sequences = _learned(
            incremental.IncrementalEngine(unique, weights, byte_token), merges)
        sequence_of = dict(zip(unique, unique_sequences))
        piece_sequences = [sequence_of[piece] for piece in pieces]
    # Regroup the pieces' sequences by document.
    sequences, start = [], 0
    for count in pieces_per_doc:
        end = start + count
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
    engine = incremental.IncrementalEngine.from_arrays(tokens, starts, weights, byte_token)
    del tokens, starts
    rules, unique_sequences = _learned(engine, merges)
    del engine
    with incremental.gc_paused():
        if len(unique) == len(docs):
            return rules, unique_sequences  # no duplicates: the lists are the documents'
        # A duplicate gets a copy, so that no two documents share a list.
        sequence_of = dict(zip(unique, unique_sequences))
        del unique, unique_sequences
        shared = dict(sequence_of)
        firsts = [sequence_of.pop(doc, None) for doc in docs]
        return rules, [seq if seq is not None else list(shared[doc]) for doc, seq in zip(docs, firsts)]


def _learned(engine: incremental.IncrementalEngine,
             merges: int) -> tuple[list[Merge], list[list[int]]]:
    """Up to ``merges`` rules from ``engine`` by the merge loop (:func:`bytepair.learn.loop.run`),
    and its sequences as they then stand (the engine ends)."""
    rules = loop.run(engine, [], merges, 1)
    with incremental.gc_paused():
        return rules, engine.sequences(release=True)


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
    """Learn up to ``merges`` rules over string symbols from ``word_counts`` (word -> count).

    A word starts as its characters (plus ``end_of_word`` when given); pair
    counts are weighted by the word's count; ties go to the smallest
    ``(left, right)`` in string order; a merged symbol is its two strings
    joined, so equal strings are one symbol. ``end_of_word`` (such as
    ``"</w>"``; None: nothing) is added after each word's characters.
    ``engine`` is ``"incremental"`` (the default) or ``"naive"`` (the reference).

    >>> train_words({"low": 1, "lower": 1, "lowest": 1}, 1, end_of_word="</w>").rules
    [('l', 'o')]
    """
    counts = check_word_counts(word_counts)
    merges = check_size(merges, "merges")
    end_of_word = check_end_of_word(end_of_word)
    engine = check_engine(engine)
    words = list(counts)
    weights = [counts[word] for word in words]
    tail = 1 if end_of_word else 0
    check_total([range(len(word) + tail) for word in words], weights, "word_counts")
    if engine == "naive":
        start = [list(word) + ([end_of_word] if end_of_word else []) for word in words]
        rules, sequences = naive.fit(start, weights, merges, lambda left, right, rank: left + right)
    else:
        data, starts = word_engines.flatten(words)
        rules, sequences = word_engines.fit(data, starts, array("q", weights), merges,
                                            end_of_word=end_of_word)
    return WordModel(
        rules,
        end_of_word=end_of_word,
        words={word: tuple(seq) for word, seq in zip(words, sequences)},
    )


def learn_bpe(
    word_counts: Mapping[str, int],
    merges: int,
    *,
    end_of_word: str | None = None,
    engine: str | None = None,
) -> list[tuple[str, str]]:
    """The learned pairs, in order: :func:`train_words` of ``word_counts``, ``merges``,
    ``end_of_word`` and ``engine`` (see there), without the counts.

    >>> learn_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 4)
    [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w')]
    """
    return train_words(word_counts, merges, end_of_word=end_of_word, engine=engine).rules


def learn_words(
    corpus: str | os.PathLike | Files | Iterable[str | bytes],
    merges: int,
    *,
    end_of_word: str | None = None,
    min_frequency: int = 1,
    workers: int | None = None,
    progress: bool | None = None,
) -> WordModel:
    """Word-mode rules straight from a corpus: count its words, then learn.

    ``corpus`` is a path, glob, :class:`bytepair.Files` or an iterable of
    ``str``/``bytes`` documents. Words are white-space separated (as
    ``str.split()`` cuts them) and counted by ``workers`` threads (default:
    all cores); every number of workers gives the same model. Up to
    ``merges`` rules are learned, those of :func:`train_words` on the word
    counts; training stops early
    when the best pair is seen fewer than ``min_frequency`` times;
    ``end_of_word`` is as in :func:`train_words`. ``progress`` shows a bar
    of the bytes read (default: when stderr is a terminal). The model has no
    ``words`` (use :func:`train_words` to keep them). O(corpus size) to
    count, then the merge loop of :mod:`bytepair.learn.words`.

    >>> learn_words(["low low low low low lower lower", "newest " * 6 + "widest " * 3], 4).rules
    [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w')]
    """
    merges = check_size(merges, "merges")
    end_of_word = check_end_of_word(end_of_word)
    min_frequency = check_int(min_frequency, "min_frequency", minimum=1)
    workers = check_int(workers, "workers", minimum=1) if workers is not None else (os.cpu_count() or 1)
    bar = progress_bar(progress, desc="reading", unit="B", unit_scale=True)
    try:
        data, starts, weights = count_words(corpus, workers=workers, progress_bar=bar)
    finally:
        if bar is not None:
            bar.close()
    if not weights:
        raise ValueError("corpus: no words to train on (empty corpus)")
    tail = 1 if end_of_word else 0
    # A word's UTF-8 bytes bound its characters: only when that bound is too
    # large are the characters counted.
    if sum(map(operator.mul, weights, map(operator.sub, starts[1:], starts[:-1]))) > MAX_COUNT:
        words = [data[a:b].decode("utf-8") for a, b in zip(starts, starts[1:])]
        check_total([range(len(word) + tail) for word in words], weights, "corpus words")
    rules, _ = word_engines.fit(data, starts, weights, merges, end_of_word=end_of_word,
                                min_frequency=min_frequency, with_sequences=False)
    return WordModel(rules, end_of_word=end_of_word)


encode = encode_word
