"""The public training entry points: validation, then counting, then the chosen engine.

:func:`train_bytes` and :func:`train_words` fit rules on documents or word
counts held in memory; :func:`train` builds a :class:`Tokenizer` from files
or a document stream, or from piece-count tables that :func:`count` made.
Each stage hands its output to the next::

    sources = read_corpus(corpus)              # bytepair.read: Files or Documents
    counts = _count_sources(sources, pattern)  # bytepair.counts: split and count them
    rules = _learn(counts, merges)             # bytepair.learn: the merge loop
    Tokenizer(ByteModel(rules, pattern))       # bytepair.model
"""

from __future__ import annotations

import operator
import os
import sys
import time
from array import array
from bisect import bisect_left
from collections import Counter
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from bytepair._util.validate import (
    MAX_BYTE_MERGES,
    MAX_COUNT,
    as_document,
    check_end_of_word,
    check_engine,
    check_int,
    check_special_tokens,
    check_word_counts,
    merges_for_vocab_size,
    parse_memory,
    format_memory,
)
# In pipeline order: read, split, counts, learn, model, formats.
from bytepair.read.corpus import Documents, Files, as_files, read_corpus
from bytepair.split.pretokenize import check_matches_something, resolve_pattern, splitter
from bytepair.counts.checkpoint import Checkpoint, corpus_identity
from bytepair.counts.cluster import count_on_cluster
from bytepair.counts.counting import count_files, count_pieces, counted_in_blocks, counts_bytes
from bytepair.counts.piece_counts import PieceCounts, describe_pattern
from bytepair.counts.words import count_words
from bytepair.learn import incremental, naive
from bytepair.learn.budget import (MemoryLimitError, check_engine_fits, check_forecast,
                                   check_still_fits, counting_plan, resident_bytes)
from bytepair.learn import segments
from bytepair.learn import ties as tie_orders
from bytepair.learn import superbpe as superwords
from bytepair.learn import words as word_engines
from bytepair.learn.rules import Merge
from bytepair.model.models import BYTE_TOKENS, ByteModel, Stages, WordModel, encode_word
from bytepair.model.tokenizer import Tokenizer
from bytepair.formats.load import load

if TYPE_CHECKING:  # for annotations only: importing regex at start-up is slow
    import distributed
    import regex


#: Merges learned per call into the engine when a progress bar is updated between calls.
LEARN_CHUNK = 1024
#: With a checkpoint, the rules learned so far are written at most this often (seconds).
CHECKPOINT_SECONDS = 60.0


class _DefaultPattern(str):
    """A str equal to ``"gpt2"`` that :func:`train` tells apart from an explicit ``"gpt2"``
    by identity: when ``pretokenize`` is not given, count tables and ``init`` supply theirs."""

    __slots__ = ()


#: ``train``'s default ``pretokenize``: gpt2, unless the count tables or ``init`` name another.
DEFAULT_PATTERN = _DefaultPattern("gpt2")


def _byte_token(left: int, right: int, rank: int) -> int:
    return BYTE_TOKENS + rank


def _check_total(sequences, weights, name: str) -> None:
    # The compiled engine counts in signed 64 bits; refuse what could overflow.
    # sum(weight * len) bounds the windows from above and runs in C; only when
    # it is too large is the exact sum needed.
    if sum(map(operator.mul, weights, map(len, sequences))) <= MAX_COUNT:
        return
    if sum(w * max(len(s) - 1, 0) for s, w in zip(sequences, weights)) > MAX_COUNT:
        raise ValueError(f"{name} hold more than 2**63 - 1 weighted pairs")


def _check_flat_total(data: bytes, starts: array, weights: array) -> None:
    """:func:`_check_total` of pieces laid end to end; O(1) when every weight is small."""
    if not weights or len(data) * max(weights) <= MAX_COUNT:
        return
    lengths = map(operator.sub, starts[1:], starts[:-1])
    if sum(map(operator.mul, weights, lengths)) > MAX_COUNT:
        lengths = map(operator.sub, starts[1:], starts[:-1])
        if sum(w * max(n - 1, 0) for n, w in zip(lengths, weights)) > MAX_COUNT:
            raise ValueError("corpus pieces hold more than 2**63 - 1 weighted pairs")


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
    _check_total(pieces, repeat(1), "documents")
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
    merges = check_int(merges, "merges")
    end_of_word = check_end_of_word(end_of_word)
    engine = check_engine(engine)
    words = list(counts)
    weights = [counts[word] for word in words]
    tail = 1 if end_of_word else 0
    _check_total([range(len(word) + tail) for word in words], weights, "word_counts")
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
    merges = check_int(merges, "merges")
    end_of_word = check_end_of_word(end_of_word)
    min_frequency = check_int(min_frequency, "min_frequency", minimum=1)
    workers = check_int(workers, "workers", minimum=1) if workers is not None else (os.cpu_count() or 1)
    bar = _progress(progress, desc="reading", unit="B", unit_scale=True)
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
        _check_total([range(len(word) + tail) for word in words], weights, "corpus words")
    rules, _ = word_engines.fit(data, starts, weights, merges, end_of_word=end_of_word,
                                min_count=min_frequency, with_sequences=False)
    return WordModel(rules, end_of_word=end_of_word)


encode = encode_word


def _progress(progress: bool | None, **options):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm  # here, not at import: importing tqdm costs more than all of bytepair

    return tqdm(file=sys.stderr, dynamic_ncols=True, **options)


def count(
    corpus: str | os.PathLike | Files | Iterable[str | bytes],
    *,
    pretokenize: str | regex.Pattern | None = "gpt2",
    per_line: bool = False,
    jsonl_field: str | None = None,
    text_column: str | None = None,
    workers: int | None = None,
    client: distributed.Client | None = None,
    progress: bool | None = None,
    count_memory: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    resume: bool = False,
) -> PieceCounts:
    """The piece counts of ``corpus``: what training learns from, as a table to keep or merge.

    Tables of shards add up to the table of all shards: ``sum(tables)``.
    O(corpus size) work; memory O(distinct pieces).

    ``corpus``
        A path, directory, glob or fsspec URL, a :class:`bytepair.Files`, a
        list of ``pathlib.Path``, or an iterable of ``str``/``bytes`` documents.
    ``pretokenize``
        How documents are cut into pieces: a pattern name, a regex or None (see :func:`train`).
    ``per_line``
        Each line of a plain text file is a document (without its line ending);
        otherwise each file is one document.
    ``jsonl_field``
        The field of JSON Lines records (``.jsonl``, ``.ndjson``) that holds the text
        (default ``"text"``).
    ``text_column``
        The string column of Parquet files that holds the text (default ``"text"``).
    ``workers``
        Threads (compiled counting of text files and of documents with a named pattern) or
        processes (JSON Lines, Parquet, URLs, custom regexes) that count; default: all cores.
        The table is the same for any number.
    ``client``
        A ``distributed.Client``: the cluster's workers count the files instead, one task per
        part (see :mod:`bytepair.counts.cluster`); the table is the same.
    ``progress``
        Show a progress bar on stderr; None (the default): only when stderr is a terminal.
    ``count_memory``
        A bound, in bytes, on the counting tables of all workers together (estimated from
        their distinct pieces): a table that passes its share is written to a temporary
        file (under ``TMPDIR``) as a sorted run, and the runs are merged at the end. None
        (the default): no bound. The table is the same. With ``checkpoint``, every counted
        part (16 MiB) is a run on disk already, so the bound changes nothing.
    ``checkpoint``
        A directory where each counted part of the files is kept as it is done, so that an
        interrupted count can be resumed (files only; see :mod:`bytepair.counts.checkpoint`).
    ``resume``
        Continue the count that ``checkpoint`` holds; the corpus and options must be the
        same (the error names what differs). The table is the same as an uninterrupted count's.

    >>> count(["low low lower"]).most_common(2)
    [(b' low', 1), (b' lower', 1)]
    """
    source = resolve_pattern(pretokenize)
    if checkpoint is None:
        return _count(corpus, source, per_line=per_line, jsonl_field=jsonl_field,
                      text_column=text_column, workers=workers, client=client, progress=progress,
                      count_memory=count_memory)
    files = _checkpoint_files(corpus, client, per_line=per_line, jsonl_field=jsonl_field,
                              text_column=text_column)
    saved = Checkpoint(checkpoint, _identity(files, source), resume=resume)
    return _count(files, source, per_line=per_line, jsonl_field=jsonl_field,
                  text_column=text_column, workers=workers, client=None, progress=progress,
                  count_memory=count_memory, checkpoint=saved)


def _checkpoint_files(corpus, client, **options) -> Files:
    """The files of a corpus to checkpoint: a stream or a cluster cannot be resumed."""
    if client is not None:
        raise ValueError("checkpoint: counting on a cluster cannot be checkpointed")
    files = as_files(corpus, **options)
    if not isinstance(files, Files):
        raise ValueError("checkpoint: only files can be resumed, not a stream of "
                         f"documents ({type(corpus).__name__})")
    return files


def _identity(files: Files | None, source: str | None, **more) -> dict:
    """What a checkpoint's run is: the corpus, its reading options and ``more``."""
    identity = {"pattern": source, **more}
    if files is not None:
        identity.update(corpus_identity(files))
    return identity


def _count(corpus, source: str | None, *, per_line: bool, jsonl_field: str | None,
           text_column: str | None, workers: int | None, client, progress: bool | None,
           count_memory: int | None = None, checkpoint: Checkpoint | None = None) -> PieceCounts:
    """:func:`count` with the pattern already resolved to its regex source."""
    workers = check_int(workers, "workers", minimum=1) if workers is not None else (os.cpu_count() or 1)
    if count_memory is not None:
        count_memory = check_int(count_memory, "count_memory", minimum=1)
    sources = read_corpus(corpus, per_line=per_line, jsonl_field=jsonl_field, text_column=text_column)
    if client is not None and not isinstance(sources, Files):
        raise TypeError("client: a cluster counts files (paths, globs, URLs or Files), "
                        f"not {type(sources.iterable).__name__}")
    if client is not None and count_memory is not None:
        raise ValueError("count_memory: the cluster's workers count, each its own parts; "
                         "it bounds local counting only")
    if checkpoint is not None:
        table = checkpoint.counts()
        if table is not None:
            return table
    if isinstance(sources, Files):
        bar = _progress(progress, desc="reading", unit="B", unit_scale=True,
                        total=sources.total_bytes())
    else:
        bar = _progress(progress, desc="reading", unit="B" if counts_bytes(source) else "char",
                        unit_scale=True)
    try:
        if checkpoint is not None:
            table = checkpoint.count(sources, source, workers=workers, progress_bar=bar)
            checkpoint.save_counts(table)
        else:
            table = _count_sources(sources, source, workers=workers, client=client,
                                   progress_bar=bar, count_memory=count_memory)
        if bar is not None:
            bar.set_postfix(distinct_pieces=len(table))
    finally:
        if bar is not None:
            bar.close()
    return table


def _count_sources(sources: Files | Documents, source: str | None, *, workers: int, client,
                   progress_bar, count_memory: int | None = None) -> PieceCounts:
    """The counting stage, given what the read stage made of the corpus: files are
    counted in parts (by a cluster's workers with ``client``), documents as a stream;
    ``count_memory`` bounds local tables (they spill to disk past it)."""
    if client is not None:
        return count_on_cluster(client, sources, source, progress_bar=progress_bar)
    if isinstance(sources, Files):
        return count_files(sources, source, workers=workers, progress_bar=progress_bar,
                           count_memory=count_memory)
    # Compiled counting takes the documents' bytes; the regex splitter takes text.
    documents = sources.documents(text=not counts_bytes(source))
    return count_pieces(documents, source, workers=workers, progress_bar=progress_bar,
                        count_memory=count_memory)


def _as_tables(corpus) -> list[PieceCounts] | None:
    """The tables when ``corpus`` is a :class:`PieceCounts` or a list of them, else None."""
    if isinstance(corpus, PieceCounts):
        return [corpus]
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, PieceCounts) for c in corpus):
        return list(corpus)
    return None


def train(
    corpus: str | os.PathLike | Files | Iterable[str | bytes] | PieceCounts | Sequence[PieceCounts],
    *,
    vocab_size: int | None = None,
    merges: int | None = None,
    pretokenize: str | regex.Pattern | None = DEFAULT_PATTERN,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    workers: int | None = None,
    progress: bool | None = None,
    init: Tokenizer | ByteModel | str | os.PathLike | None = None,
    per_line: bool = False,
    jsonl_field: str | None = None,
    text_column: str | None = None,
    client: distributed.Client | None = None,
    count_memory: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    resume: bool = False,
    superbpe: int | None = None,
    superbpe_pretokenize: str | regex.Pattern = "superbpe",
    max_words: int = superwords.DEFAULT_MAX_WORDS,
    max_memory: int | str | None = None,
    ties: str | None = None,
    parity: str | None = None,
    dev: Mapping[str, object] | None = None,
    ratio: Mapping[str, float] | None = None,
    global_merges: int = 0,
    window_size: int = 100,
    alpha: float = 2.0,
) -> Tokenizer:
    """Train a tokenizer on ``corpus``; see :class:`Tokenizer` for the IDs.

    Give exactly one of ``vocab_size`` and ``merges``. Reading and counting
    are O(corpus size); the merge loop works on the distinct pieces.

    ``corpus``
        What to learn from: a path, directory, glob or fsspec URL, a
        :class:`bytepair.Files`, a list of ``pathlib.Path``, or an iterable of
        ``str``/``bytes`` documents, read as a stream; or piece counts already
        made by :func:`count` (a :class:`bytepair.PieceCounts` or a list of them, added up).
    ``vocab_size``
        256 bytes + learned tokens + special tokens.
    ``merges``
        The total number of rules (``init``'s included).
    ``pretokenize``
        How documents are cut into pieces, each a barrier: ``"gpt2"``, ``"cl100k"``,
        ``"o200k"``, ``"nanochat"``, ``"whitespace"``, ``"whitespace-split"``, ``"superbpe"``,
        None or ``"none"`` (no split), or a custom regex (a compiled pattern, or a str with
        regex characters). When not given:
        the pattern of the count tables, else of ``init``, else ``"gpt2"``; given, it must
        agree with them (the error names both).
    ``special_tokens``
        Texts that get the IDs after the learned tokens, in this order.
    ``min_frequency``
        Stop when the best pair is seen fewer times than this.
    ``workers``
        Threads or processes that count (see :func:`count`); default: all cores. The model
        is the same for any number.
    ``progress``
        Show progress bars on stderr; None (the default): only when stderr is a terminal.
    ``init``
        A model (or the path of one) to continue from: its rules are kept and training
        resumes. When ``init`` was trained on this same corpus with the same pattern, the
        result equals training from scratch to the larger size; on another corpus it is a
        different model.
    ``per_line``
        Each line of a plain text file is a document (without its line ending);
        otherwise each file is one document.
    ``jsonl_field``
        The field of JSON Lines records that holds the text (default ``"text"``).
    ``text_column``
        The string column of Parquet files that holds the text (default ``"text"``).
    ``client``
        A ``distributed.Client``: the cluster's workers count the files (see :func:`count`);
        the merge loop runs here either way.
    ``count_memory``
        A bound, in bytes, on the counting tables (see :func:`count`); the model is the same.
    ``checkpoint``
        A directory that keeps the run's progress: each counted part of the files, then the
        whole table, then the rules learned so far (at most every
        :data:`CHECKPOINT_SECONDS`), so that an interrupted run can be resumed. Files or
        count tables only, not a stream of documents.
    ``resume``
        Continue the run that ``checkpoint`` holds; the corpus and the options that shape the
        rules (pattern, reading options, ``min_frequency``, ``init``) must be the same (the
        error names what differs); the size may be larger. The model is the same as an
        uninterrupted run's, byte for byte.
    ``superbpe``
        A vocabulary size (256 bytes plus rules): train a SuperBPE superword tokenizer
        (:mod:`bytepair.learn.superbpe`). Training runs as usual up to this size, then goes
        on over the pieces that ``superbpe_pretokenize`` cuts, so that tokens may span
        spaces; the tokenizer then splits with ``superbpe_pretokenize``. Documents are read
        twice (once per stage); documents given as an iterable are held in memory for that.
        Count tables stand for the documents when they were counted with both patterns
        (``count(corpus)`` and ``count(corpus, pretokenize="superbpe")``): each stage adds up
        the tables cut with its pattern, and the model is the same; when ``pretokenize`` is not
        given, stage 1's pattern is that of the tables not cut with ``superbpe_pretokenize``.
        With ``init``: a model trained elsewhere with ``pretokenize``'s pattern is stage 1
        (when smaller than ``superbpe``, stage 1 goes on up to it first); a SuperBPE model
        trained with the same settings is continued in stage 2. Either way, stage 2's tables
        are enough when ``init`` covers stage 1.
    ``superbpe_pretokenize``
        The stage-2 pattern (a name or a custom regex; default ``"superbpe"``): a match is a
        piece, and so is the text between two matches.
    ``max_words``
        With ``superbpe``: no token may hold more than this many words (runs of bytes that
        are not ASCII white space); default 4.
    ``max_memory``
        A limit on this process's memory: bytes, or a size such as ``"4GiB"``, ``"512MiB"``
        or ``"2GB"``. Training stops with :class:`bytepair.MemoryLimitError` (a
        ``MemoryError`` and a ``ValueError``) and one line saying how much it needs: before
        any work when even the optimistic forecast from a sample of the files does not fit
        (plain local text with a named pattern, 16 MiB and more; see
        :mod:`bytepair.learn.budget`); once the pieces are counted, before the merge engine is
        built, when the engine's estimate does not fit; while merging, if the process passes
        the limit all the same. Counting keeps within it: its tables spill to disk as with
        ``count_memory`` (the smaller bound wins), with fewer ``workers`` when each one's
        table would be too small. The rules do not depend on it. Not yet with ``superbpe``.
    ``ties``
        How equal counts are broken: ``"bytepair"`` (the default: smallest ``(left, right)``
        in bytepair's IDs) or ``"tokenizers"``: as Hugging Face's ``BpeTrainer``, whose
        ``tokenizer.json`` the export then equals, IDs included (special tokens first, then
        the bytes in its alphabet order, then the merged tokens; see
        ``docs/from-tokenizers.md`` and :mod:`bytepair.learn.ties`). Not with ``superbpe``.
    ``parity``
        ``"base"`` or ``"window"``: parity-aware BPE (``docs/parity.md``). ``corpus`` is then
        a dict of languages, ``{"en": files, "hi": files}``, each anything ``corpus`` takes;
        give ``dev`` (the same dict shape: parallel text per language) or ``ratio`` (a target
        per language). Each rule is the best pair of the language that needs one most: the
        longest dev text in tokens, or the compression furthest below its target.
        ``global_merges`` rules come first from all languages' counts together; ``window``
        keeps a language from winning more than ``alpha / languages`` of the last
        ``window_size`` rules. ``ties="tokenizers"`` breaks ties as ``ParityBpeTrainer``.
        Not with ``init``, ``checkpoint``, ``superbpe`` or ``max_memory``.
    """
    if parity is not None or (isinstance(corpus, Mapping) and not isinstance(corpus, PieceCounts)):
        return _train_parity(
            corpus, parity=parity, dev=dev, ratio=ratio, global_merges=global_merges,
            window_size=window_size, alpha=alpha, vocab_size=vocab_size, merges=merges,
            pretokenize=pretokenize, special_tokens=special_tokens, min_frequency=min_frequency,
            workers=workers, progress=progress, per_line=per_line, jsonl_field=jsonl_field,
            text_column=text_column, client=client, count_memory=count_memory, ties=ties,
            unsupported=dict(init=init, checkpoint=checkpoint, superbpe=superbpe,
                             max_memory=max_memory))
    for name, value, default in (("dev", dev, None), ("ratio", ratio, None),
                                 ("global_merges", global_merges, 0),
                                 ("window_size", window_size, 100), ("alpha", alpha, 2.0)):
        if value is not default and value != default:
            raise ValueError(f"{name}: a parity option; give parity='base' or 'window' with it")
    ties = tie_orders.check_ties(ties)
    if ties == "tokenizers" and superbpe is not None:
        raise ValueError("superbpe: ties='tokenizers' reproduces BpeTrainer, which has no "
                         "SuperBPE stage")
    if superbpe is not None and (checkpoint is not None or count_memory is not None):
        raise ValueError(f"{'checkpoint' if checkpoint is not None else 'count_memory'}: "
                         "not available with superbpe (SuperBPE reads the corpus twice)")
    limit = parse_memory(max_memory) if max_memory is not None else None
    if limit is not None and superbpe is not None:
        raise ValueError("max_memory: not supported with superbpe yet")
    _check_limit_now(limit)
    if superbpe is not None:
        return _train_superbpe(
            corpus, vocab_size=vocab_size, merges=merges, pretokenize=pretokenize,
            special_tokens=special_tokens, min_frequency=min_frequency, workers=workers,
            progress=progress, init=init, per_line=per_line, jsonl_field=jsonl_field,
            text_column=text_column, client=client, superbpe=superbpe,
            superbpe_pretokenize=superbpe_pretokenize, max_words=max_words)
    special, merges, min_frequency = _sizes(vocab_size, merges, special_tokens, min_frequency)
    if workers is not None:
        check_int(workers, "workers", minimum=1)
    start_model = _init_model(init)
    if start_model is not None and start_model.stages is not None:
        raise ValueError(f"init is a SuperBPE model; give superbpe={start_model.stages.transition} "
                         f"(with its superbpe_pretokenize and max_words) to continue it")
    tables = _as_tables(corpus)
    counts = None
    if tables is not None:
        counts = tables[0] if len(tables) == 1 else sum(tables)  # mixed patterns: an error naming both
    source = _training_pattern(pretokenize, counts, start_model)
    if ties == "tokenizers":
        tie_orders.check_pattern(source)
        tie_orders.check_special_tokens(special)
    if start_model is None:
        start_model = ByteModel([], pattern=source)
    if len(start_model.merges) > merges:
        raise ValueError(
            f"init: the model already has {len(start_model.merges):,} merges, more than the "
            f"{merges:,} requested"
        )
    saved = on_rules = None
    if checkpoint is not None:
        saved, start_model = _training_checkpoint(
            checkpoint, resume, corpus, counts, client, source, start_model, min_frequency,
            per_line=per_line, jsonl_field=jsonl_field, text_column=text_column, ties=ties)
        if counts is not None and saved.counts() is None:
            saved.save_counts(counts)
        on_rules = _rules_writer(saved, source)
        if len(start_model.merges) > merges:
            raise ValueError(f"checkpoint: it already holds {len(start_model.merges)} merges, "
                             f"more than the {merges} requested")
    if counts is None:  # read, split and count
        if limit is not None:
            corpus, count_memory, workers = _count_within(
                limit, corpus, source, merges - len(start_model.merges), count_memory, workers,
                client, per_line=per_line, jsonl_field=jsonl_field, text_column=text_column)
        counts = _count(corpus, source, per_line=per_line, jsonl_field=jsonl_field,
                        text_column=text_column, workers=workers, client=client, progress=progress,
                        count_memory=count_memory, checkpoint=saved)
    if not counts:
        raise ValueError("corpus: no text to train on (empty corpus)")
    # A table's pattern is the table's, whoever named it: problems with it are the counts'.
    check_matches_something(source, counts, "pretokenize" if tables is None else "counts")
    # Learn, then the model. A table counted or summed here is nobody else's:
    # learning may empty it.
    made_here = tables is None or all(counts is not table for table in tables)
    rules = _learn(counts, merges, min_frequency=min_frequency, start=start_model,
                   progress=progress, release=made_here, limit=limit, on_rules=on_rules,
                   ties=ties)
    if on_rules is not None:
        on_rules(rules, final=True)
    ids = None
    if ties == "tokenizers":
        tie_orders.check_special_tokens(special, rules)
        ids = tie_orders.tokenizers_ids(len(rules), len(special))
    return Tokenizer(ByteModel._learned(rules, pattern=source), special, ids=ids)


def _train_parity(corpus, *, parity, dev, ratio, global_merges, window_size, alpha, vocab_size,
                  merges, pretokenize, special_tokens, min_frequency, workers, progress, ties,
                  unsupported: dict, **reading) -> Tokenizer:
    """:func:`train` with ``parity``: every option checked, then each language's text and
    dev text counted, then :func:`bytepair.learn.parity.learn`, then the model."""
    from bytepair.learn import parity as parity_engine

    ties = tie_orders.check_ties(ties)
    if parity is None:
        raise ValueError("corpus: a dict of languages is for parity-aware training; give "
                         "parity='base' or 'window'")
    if parity not in ("base", "window"):
        raise ValueError(f"parity must be 'base' or 'window', got {parity!r}")
    if not isinstance(corpus, Mapping) or isinstance(corpus, PieceCounts) or not corpus:
        raise ValueError("corpus: with parity, a dict of languages to their text, "
                         "e.g. {'en': 'en.txt', 'hi': 'hi.txt'}")
    for name, value in unsupported.items():
        if value is not None:
            raise ValueError(f"{name}: not available with parity")
    languages = list(corpus)
    for language in languages:
        if not isinstance(language, str) or not language:
            raise ValueError(f"corpus: a language is named by a non-empty string, got {language!r}")
    if (dev is None) == (ratio is None):
        raise ValueError("parity: give dev (parallel text per language) or ratio (a target "
                         "per language), one of them")
    targets = None
    if dev is not None:
        if not isinstance(dev, Mapping):
            raise ValueError("dev: a dict of languages to their dev text")
        _same_languages("dev", dev, languages)
    else:
        if not isinstance(ratio, Mapping):
            raise ValueError("ratio: a dict of languages to their target")
        _same_languages("ratio", ratio, languages)
        targets = []
        for language in languages:
            value = ratio[language]
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not value > 0 or value == float("inf")):
                raise ValueError(f"ratio: {language}'s target must be a positive finite "
                                 f"number, got {value!r}")
            targets.append(float(value))
    check_int(global_merges, "global_merges", minimum=0)
    check_int(window_size, "window_size", minimum=1)
    if (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 0
            or alpha == float("inf")):
        raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    special, merges, min_frequency = _sizes(vocab_size, merges, special_tokens, min_frequency)
    if workers is not None:
        check_int(workers, "workers", minimum=1)
    source = _training_pattern(pretokenize, None, None)
    if ties == "tokenizers":
        tie_orders.check_pattern(source)
        tie_orders.check_special_tokens(special)

    def counted(what: str, texts: Mapping) -> list[PieceCounts]:
        tables = []
        for language in languages:
            table = _count(texts[language], source, workers=workers, progress=progress, **reading)
            if not table:
                raise ValueError(f"{what}: {language} has no text")
            tables.append(table)
        return tables

    tables = counted("corpus", corpus)
    dev_tables = counted("dev", dev) if dev is not None else None
    bar = _progress(progress, desc="merging", unit="merge", total=merges)
    try:
        learned = parity_engine.learn(
            tables, merges, dev=dev_tables, ratio=targets, variant=parity,
            global_merges=global_merges, window_size=window_size, alpha=alpha,
            min_frequency=min_frequency, ties=ties, progress_bar=bar)
    finally:
        if bar is not None:
            bar.close()
    rules = [Merge(*rule[:6]) for rule in learned]
    ids = None
    if ties == "tokenizers":
        tie_orders.check_special_tokens(special, rules)
        ids = tie_orders.tokenizers_ids(len(rules), len(special))
    return Tokenizer(ByteModel._learned(rules, pattern=source), special, ids=ids)


def _same_languages(name: str, given: Mapping, languages: list[str]) -> None:
    """Refuse a dev set or ratio that misses a training language or names another."""
    missing = [language for language in languages if language not in given]
    if missing:
        raise ValueError(f"{name}: missing for {', '.join(map(str, missing))} (every training "
                         f"language needs one)")
    extra = [language for language in given if language not in languages]
    if extra:
        raise ValueError(f"{name}: {', '.join(map(str, extra))} is not a training language")


def _training_checkpoint(directory, resume: bool, corpus, counts: PieceCounts | None, client,
                         source: str | None, start_model: ByteModel, min_frequency: int,
                         ties: str = "bytepair", **options) -> tuple[Checkpoint, ByteModel]:
    """The checkpoint of a training run, and the model to start from: the rules it
    holds when it got that far, else ``start_model``."""
    import hashlib  # at first use: its OpenSSL binding is slow to import

    files = None
    if counts is None:
        files = _checkpoint_files(corpus, client, **options)
        more = {}
    else:
        # Count tables stand for the corpus: their size and a digest of their pieces.
        digest = hashlib.sha256()
        for piece, number in sorted(counts.items()):
            digest.update(len(piece).to_bytes(8, "little") + piece + number.to_bytes(8, "little"))
        more = {"counts": digest.hexdigest()}
    init_rules = [[m.left, m.right] for m in start_model.merges]
    init = hashlib.sha256(repr(init_rules).encode()).hexdigest() if init_rules else None
    if ties != "bytepair":  # the default is left out: older checkpoints stay valid
        more["ties"] = ties
    saved = Checkpoint(directory, _identity(files, source, min_frequency=min_frequency,
                                            init=init, **more), resume=resume)
    if saved.rules_path.exists():
        start_model = _init_model(load(saved.rules_path, trust_pattern=True))
    return saved, start_model


def _rules_writer(saved: Checkpoint, source: str | None):
    """``on_rules`` of :func:`_learn`: the rules so far, written atomically at most
    every :data:`CHECKPOINT_SECONDS` (and at the end: ``final``)."""
    last = time.monotonic()

    def write(rules: list[Merge], final: bool = False) -> None:
        nonlocal last
        if final or time.monotonic() - last >= CHECKPOINT_SECONDS:
            ByteModel(rules, pattern=source).save(saved.rules_path)
            last = time.monotonic()

    return write


def _count_within(limit: int, corpus, source: str | None, merges: int, count_memory: int | None,
                  workers: int | None, client, **options):
    """``(corpus, count_memory, workers)`` to count ``corpus`` within ``limit``: first the
    forecast from a sample refuses at once what cannot fit (files only), then the counting
    tables get a bound that keeps them inside the limit (they spill to disk past it), with
    fewer workers when each one's table would be too small. A cluster's workers are not
    this process: only the forecast applies to them."""
    corpus = read_corpus(corpus, **options)  # the files are found once, here
    check_forecast(limit, corpus, source, merges)
    if client is None:
        count_memory, workers = counting_plan(limit, count_memory, workers or os.cpu_count() or 1)
    return corpus, count_memory, workers


def _check_limit_now(limit: int | None) -> None:
    held = resident_bytes()
    if limit is not None and held > limit:
        raise MemoryLimitError(f"max_memory: {format_memory(limit)} is less than this process "
                               f"holds before training ({format_memory(held)})")


def _sizes(vocab_size, merges, special_tokens, min_frequency) -> tuple[list, int, int]:
    """The checked special tokens, number of merges (from ``vocab_size`` or ``merges``,
    exactly one given) and ``min_frequency`` of a training run."""
    special = check_special_tokens(special_tokens)
    min_frequency = check_int(min_frequency, "min_frequency", minimum=1)
    if (vocab_size is None) == (merges is None):
        raise ValueError("give exactly one of vocab_size and merges")
    if vocab_size is not None:
        merges = merges_for_vocab_size(vocab_size, len(special))
    return special, check_int(merges, "merges", maximum=MAX_BYTE_MERGES), min_frequency


def _train_superbpe(corpus, *, vocab_size, merges, pretokenize, special_tokens, min_frequency,
                    workers, progress, init, per_line, jsonl_field, text_column, client,
                    superbpe, superbpe_pretokenize, max_words) -> Tokenizer:
    """:func:`train` with ``superbpe``: stage 1 as ever, then the warm start over stage-2 pieces.

    From documents, each stage counts them with its own pattern; from count tables, each
    stage takes the tables cut with its pattern (:func:`_stage_tables`), added up.
    """
    start = _init_model(init)
    tables = _as_tables(corpus)
    stage2 = resolve_pattern(superbpe_pretokenize, "superbpe_pretokenize")
    source = _stage1_pattern(pretokenize, tables, stage2, start)
    special, merges, min_frequency = _sizes(vocab_size, merges, special_tokens, min_frequency)
    transition = check_int(superbpe, "superbpe", minimum=BYTE_TOKENS)
    if transition - BYTE_TOKENS >= merges:
        raise ValueError(
            f"superbpe: the transition vocabulary {transition} must be smaller than the final "
            f"one of {BYTE_TOKENS + merges} bytes and learned tokens"
            f"{' (vocab_size less the special tokens)' if special and vocab_size else ''}")
    max_words = check_int(max_words, "max_words", minimum=1)
    if source is None:
        raise ValueError("superbpe: SuperBPE needs a stage-1 pretokenize pattern; with none (byte "
                         "mode) every document is one piece and there is no stage 1 to go beyond")
    if stage2 is None:
        raise ValueError("superbpe_pretokenize: stage 2 needs a pattern (none would make every "
                         "document one piece)")
    if workers is not None:
        check_int(workers, "workers", minimum=1)
    if tables is not None:
        stage1_tables, stage2_tables = _stage_tables(tables, source, stage2)
    else:
        corpus = read_corpus(corpus, per_line=per_line, jsonl_field=jsonl_field,
                             text_column=text_column)
        if not isinstance(corpus, Files):
            if client is not None:
                raise TypeError("client: a cluster counts files (paths, globs, URLs or Files), "
                                f"not {type(corpus.iterable).__name__}")
            corpus = list(corpus.documents(text=False))  # read twice: held in memory
    options = dict(per_line=per_line, jsonl_field=jsonl_field, text_column=text_column,
                   workers=workers, client=client, progress=progress)
    stages = Stages(transition, source, max_words)
    start_model = _initial_superbpe_model(start, source, stages)
    rules = list(start_model.merges)
    if len(rules) > merges:
        raise ValueError(f"init already has {len(rules)} merges, more than the {merges} requested")
    if start_model.stages is None and len(rules) < transition - BYTE_TOKENS:
        if tables is None:
            counts, made_here = _count(corpus, source, **options), True
        else:
            counts, made_here = _added(stage1_tables, source, "stage-1")
            made_here = made_here and source != stage2  # one table serves both stages
        if not counts:
            raise ValueError("corpus: no text to train on (empty corpus)")
        check_matches_something(source, counts, "pretokenize" if tables is None else "counts")

        def learn_stage1() -> list[Merge]:
            nonlocal counts
            learned = _learn(counts, transition - BYTE_TOKENS, min_frequency=min_frequency,
                             start=start_model, progress=progress, release=made_here)
            del counts
            return learned

        if tables is None:
            rules, pieces = _learn_while_counting(learn_stage1, corpus, stage2, options)
        else:
            rules, pieces = learn_stage1(), None
    else:
        pieces = _count(corpus, stage2, **options) if tables is None else None
    # Stage 2 starts where stage 1 ended (early, when pairs ran out).
    stages = stages._replace(transition=BYTE_TOKENS + len(rules)) if start_model.stages is None \
        else start_model.stages
    if tables is not None:
        pieces, made_here = _added(stage2_tables, stage2, "stage-2")
        if not made_here:
            # Stage 2 empties the table it learns from: a new table over the same arrays
            # leaves the caller's whole.
            pieces = PieceCounts._from_flat(*pieces.flat(), pieces.pattern)
    if not pieces:
        raise ValueError("corpus: no text to train on (empty corpus)")
    rules = _learn_stage2(pieces, rules, merges, max_words=max_words, min_frequency=min_frequency,
                          progress=progress, threads=workers or os.cpu_count() or 1)
    return Tokenizer(ByteModel._learned(rules, pattern=stage2, stages=stages), special)


def _learn_while_counting(learn: Callable[[], list[Merge]], corpus: Files | list[bytes],
                          stage2: str, options: dict) -> tuple[list[Merge], PieceCounts]:
    """``learn()`` (stage 1) and the stage-2 count of ``corpus``: at the same time when
    that count runs in compiled code, one after the other otherwise.

    Stage-1 learning keeps one core busy; the count, which releases the GIL,
    takes the other ``workers - 1`` meanwhile (with all of them it would
    compete with learning for the cores). Only a count that starts no
    processes runs beside it (no fork while a thread runs). Its errors are
    raised here after learning, as they would be when run in turn, and the
    counting thread is joined on every way out (an interrupt waits for it).
    It draws no progress bar: two bars on two threads would write over each
    other.
    """
    workers = options["workers"] or os.cpu_count() or 1
    if workers == 1 or not (isinstance(corpus, Files) and options["client"] is None
                            and counted_in_blocks(corpus, stage2)):
        rules = learn()
        return rules, _count(corpus, stage2, **options)
    from concurrent.futures import ThreadPoolExecutor  # at first use, not at import (~5 ms)

    with ThreadPoolExecutor(1, thread_name_prefix="bytepair-stage2") as pool:
        counting = pool.submit(_count, corpus, stage2,
                               **{**options, "workers": workers - 1, "progress": False})
        rules = learn()
        return rules, counting.result()


def _stage1_pattern(pretokenize, tables: list[PieceCounts] | None, stage2: str | None,
                    start: ByteModel | None) -> str | None:
    """SuperBPE's stage-1 pattern: the one given, else that of the count tables not cut with
    the stage-2 pattern, else ``init``'s, else gpt2 (as :func:`_training_pattern`)."""
    if pretokenize is not DEFAULT_PATTERN:
        return resolve_pattern(pretokenize)
    others = {table.pattern for table in tables or ()} - {stage2}
    if len(others) > 1:
        names = sorted(map(describe_pattern, others))
        raise ValueError(f"corpus: the count tables were cut with {', '.join(names[:-1])} and "
                         f"{names[-1]} besides the stage-2 pattern {describe_pattern(stage2)}; "
                         f"SuperBPE's stage 1 has one (pretokenize names which)")
    if others:
        return others.pop()
    if start is not None:
        return start.stages.pretokenize if start.stages is not None else start.pattern
    return resolve_pattern(pretokenize)


def _stage_tables(tables: list[PieceCounts], source: str,
                  stage2: str) -> tuple[list[PieceCounts], list[PieceCounts]]:
    """The count tables of each SuperBPE stage: those cut with its pattern (a table serves both
    when the patterns are equal). A table cut with neither, or no table for stage 2, is an
    error; stage 1's tables are checked when stage 1 runs (``init`` may stand for it)."""
    for table in tables:
        if table.pattern not in (source, stage2):
            raise ValueError(
                f"corpus: a count table was cut with {describe_pattern(table.pattern)}, neither "
                f"the stage-1 pattern {describe_pattern(source)} nor the stage-2 pattern "
                f"{describe_pattern(stage2)}")
    stage1 = [table for table in tables if table.pattern == source]
    stage2_tables = [table for table in tables if table.pattern == stage2]
    if not stage2_tables:
        raise ValueError(_missing_stage("stage-2", stage2))
    for group in (stage1, stage2_tables):
        if sum(table.total() for table in group) > MAX_COUNT:
            raise ValueError(f"corpus: the tables cut with {describe_pattern(group[0].pattern)} "
                             "count more than 2**63 - 1 pieces together (counts are 64-bit)")
    return stage1, stage2_tables


def _missing_stage(stage: str, pattern: str) -> str:
    return (f"corpus: no count table was cut with the {stage} pattern {describe_pattern(pattern)}; "
            f"SuperBPE needs the documents counted with each stage's pattern")


def _added(tables: list[PieceCounts], pattern: str, stage: str) -> tuple[PieceCounts, bool]:
    """The tables of one stage as one table, and whether it was made here (a sum) rather
    than being the caller's own."""
    if not tables:
        raise ValueError(_missing_stage(stage, pattern))
    if len(tables) == 1:
        return tables[0], False
    return sum(tables), True


def _initial_superbpe_model(model: ByteModel | None, source: str, stages: Stages) -> ByteModel:
    """The model SuperBPE training starts from: none, a stage-1 model, or a SuperBPE model
    trained with the same settings (continued in stage 2)."""
    if model is None:
        return ByteModel([], pattern=source)
    if model.stages is None:
        if model.pattern != source:
            raise ValueError("init was trained with a different pretokenize pattern")
        if model.vocab_size > stages.transition:
            raise ValueError(f"init has {model.vocab_size} tokens, more than the transition "
                             f"superbpe={stages.transition}; give superbpe={model.vocab_size} to "
                             f"add superwords to it")
        return model
    if model.stages.pretokenize != source or model.stages.max_words != stages.max_words:
        raise ValueError("init is a SuperBPE model trained with another pretokenize or max_words")
    if model.stages.transition != stages.transition:
        raise ValueError(f"init is a SuperBPE model with transition {model.stages.transition}, "
                         f"not superbpe={stages.transition}")
    return model


def _learn_stage2(pieces: PieceCounts, rules: list[Merge], merges: int, *, max_words: int,
                  min_frequency: int, progress: bool | None, threads: int = 1) -> list[Merge]:
    """SuperBPE's stage 2: the rules so far go on over the distinct stage-2 pieces, each
    encoded by them, up to ``merges`` rules, under the word cap.

    The pieces never become Python objects: the table's flat buffer is encoded
    into one flat array of IDs (:meth:`ByteModel.encode_spans`), which the
    engine reads in C.
    """
    data, starts, weights = pieces.flat()
    pieces._release()
    _check_flat_total(data, starts, weights)
    positions = 0  # of the engine built last

    def sequences(learned: list[Merge]) -> tuple[list, tuple]:
        # The pieces encoded by every rule so far: where training stands (encoding
        # with the rules in rank order is how training replaces), and the word cap.
        model = ByteModel(rules + learned)
        tokens, offsets = _encode_spans(model, data, starts, threads)
        shapes = superwords.shapes([model.token_bytes(t) for t in range(model.vocab_size)])
        return [tokens, offsets, weights], (shapes, max_words)

    def build(tokens, starts, weights, learned: list[Merge], word_limit: tuple):
        nonlocal positions
        positions = len(tokens)
        return incremental.IncrementalTrainer.from_arrays(
            tokens, starts, weights, _byte_token, first_rank=len(rules) + len(learned),
            word_limit=word_limit)

    def run(trainer: incremental.IncrementalTrainer, learned: list[Merge],
            min_count: int) -> list[Merge]:
        done = rules + learned
        new = _run(trainer, list(done), merges, min_count, progress)[len(done):]
        _release_meanwhile(trainer, positions)
        return new

    # Most of the pieces' windows hold pairs too rare ever to be learned: the
    # engine gets only the stretches between them (bytepair.learn.segments).
    return rules + segments.fit(sequences, merges - len(rules), build, run,
                                min_count=min_frequency, threads=threads)


#: Engines of at least this many token positions are freed on a thread of their own.
RELEASE_ON_THREAD_POSITIONS = 1 << 20


def _release_meanwhile(trainer: incremental.IncrementalTrainer, positions: int) -> None:
    """Free a trainer's memory, on a thread of its own when it is large, while the
    caller makes the model.

    Stage 2's engine holds an occurrence list per pair seen more than twice,
    each a block of its own: at 100 MB of text, freeing them took 0.3 s of CPU
    in the caller's thread. The compiled engine frees without the GIL; the
    thread is not a daemon, so the interpreter waits for it before it exits.
    A small engine is freed at once: no thread outlives a small training (a
    fork right after would find it running).
    """
    if positions < RELEASE_ON_THREAD_POSITIONS:
        trainer.release()
        return
    import threading  # at first use, not at import

    threading.Thread(target=trainer.release, name="bytepair-release").start()


#: Pieces encoded per thread at least, in bytes: below this one thread is faster.
SPANS_PER_THREAD = 1 << 20


def _encode_spans(model: ByteModel, data: bytes, starts: array, threads: int) -> tuple[array, array]:
    """:meth:`ByteModel.encode_spans` on ``threads`` threads, one contiguous run of pieces
    each (the compiled encoder runs without the GIL); the same arrays for any number."""
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



def _init_model(init) -> ByteModel | None:
    """The byte model that ``init`` gives (loaded when it is a path), or None."""
    if init is None:
        return None
    if isinstance(init, (str, os.PathLike)):
        init = load(init)
    model = init.model if isinstance(init, Tokenizer) else init
    if not isinstance(model, ByteModel):
        raise TypeError(f"init must be a Tokenizer, ByteModel or model path, got {type(init).__name__}")
    return model


def _training_pattern(pretokenize, counts: PieceCounts | None, init: ByteModel | None) -> str | None:
    """The pattern to train with: the one given, else the count tables', else ``init``'s, else gpt2.

    Whatever was given explicitly must agree with the tables and ``init``;
    a conflict names both patterns.
    """
    given = pretokenize is not DEFAULT_PATTERN
    if given:
        source = resolve_pattern(pretokenize)
    elif counts is not None:
        source = counts.pattern
    elif init is not None:
        source = init.pattern
    else:
        source = resolve_pattern(pretokenize)
    if counts is not None and counts.pattern != source:
        raise ValueError(
            f"pretokenize: the counts were cut with {describe_pattern(counts.pattern)}, "
            f"not {describe_pattern(source)}"
        )
    if init is not None and init.pattern != source:
        what = "pretokenize" if given else "the counts"
        raise ValueError(
            f"init was trained with a different pretokenize pattern: {describe_pattern(init.pattern)}, "
            f"where {what} {'names' if given else 'were cut with'} {describe_pattern(source)}"
        )
    return source


def learn(counts: PieceCounts | Mapping[bytes, int], merges: int, *, min_frequency: int = 1,
          start: ByteModel | None = None, progress: bool | None = False,
          max_memory: int | str | None = None, ties: str | None = None) -> list[Merge]:
    """Rules from weighted pieces: up to ``merges`` in total, counting ``start``'s rules.

    The order of the pieces does not matter (counts are sums), so they go to
    the engine as the table holds them, laid end to end in one flat buffer
    (:meth:`PieceCounts.flat`). ``max_memory`` and ``ties`` as in :func:`train`.
    """
    limit = parse_memory(max_memory) if max_memory is not None else None
    ties = tie_orders.check_ties(ties)
    _check_limit_now(limit)
    return _learn(counts, merges, min_frequency=min_frequency, start=start, progress=progress,
                  release=False, limit=limit, ties=ties)


def _learn(counts: PieceCounts | Mapping[bytes, int], merges: int, *, min_frequency: int,
           start: ByteModel | None, progress: bool | None, release: bool,
           limit: int | None = None, on_rules=None, ties: str = "bytepair") -> list[Merge]:
    """:func:`learn`; ``release`` empties ``counts`` once the engine is built, so that
    the table's memory (at 1 GB of text, 87 MB of flat arrays) is free while merging;
    ``limit``: the memory limit in bytes (checked before the engine is built and after
    each chunk of merges), or None; ``on_rules`` (checkpoints) sees the rules so far after
    each call into the engine."""
    if not isinstance(counts, PieceCounts):
        counts = PieceCounts._from_dict(dict(counts), None)
    rules = list(start.merges) if start is not None else []
    if start is not None and start.merges:
        pieces = list(counts)
        # Encoding with the start's rules only shortens the pieces: their bytes bound it.
        check_engine_fits(limit, sum(map(len, pieces)), len(pieces), merges - len(rules))
        weights = array("q", counts.values())
        sequences = [array("I", start.encode_piece(p)) for p in pieces]
        if ties == "tokenizers":
            sequences = list(map(tie_orders.relabel_ids, sequences))
        _check_total(sequences, weights, "corpus pieces")
        trainer = incremental.IncrementalTrainer(sequences, weights, _byte_token,
                                                 first_rank=len(rules))
        del pieces, sequences
    else:
        data, starts, weights = counts.flat()
        _check_flat_total(data, starts, weights)
        check_engine_fits(limit, len(data), len(weights), merges - len(rules))
        if ties == "tokenizers":
            data = tie_orders.relabel(data)
        arrays = [data, starts, weights]
        del data, starts, weights
        if release:
            # The engine frees the table's arrays once it has laid them out, before
            # it builds its pair index: at 1 GB of text they are 0.2 GB.
            counts._release()
        trainer = incremental.IncrementalTrainer.taking_arrays(arrays, _byte_token)
    if release:
        counts._release()
    if ties != "tokenizers":
        return _run(trainer, rules, merges, min_frequency, progress, limit, on_rules)
    # The engine learns on relabelled bytes (bytepair.learn.ties): its rules go back to
    # bytepair's byte IDs before anyone sees them.
    first = len(rules)
    restored = None if on_rules is None else (
        lambda learned, **final: on_rules(tie_orders.restore(learned, first), **final))
    rules = tie_orders.restore(_run(trainer, rules, merges, min_frequency, progress, limit,
                                    restored), first)
    tie_orders.check_distinct(rules, first)
    return rules


def _kept_pairs_floor(count: int, learned: int, merges: int) -> int:
    """How often a pair must be counted for the engine to keep it, once ``learned`` of
    the ``merges`` rules this engine learns are out and the last was counted ``count``
    times.

    A guess at half the count of the last rule to come, from the counts'
    fall with the rank: the count of rule k fell like k ** -1.2 to k ** -1.6
    on the benchmark corpora, so ``count * (learned / merges) ** 2`` is below
    the last rule's. Guessing too high costs one recount of every pair; too
    low, memory.
    """
    return int(count * (learned / merges) ** 2 / 2)


def _run(trainer, rules: list[Merge], merges: int, min_frequency: int,
         progress: bool | None, limit: int | None = None, on_rules=None) -> list[Merge]:
    """Step ``trainer`` until ``rules`` holds ``merges`` rules or no pair reaches ``min_frequency``;
    ``limit``: the memory limit in bytes, checked after each chunk, or None; ``on_rules``
    (checkpoints) sees the rules so far after each call into the engine."""
    bar = _progress(progress, desc="merging", unit="merge", total=merges, initial=len(rules))
    first = len(rules)  # rules that were there before this engine (a warm start, stage 1)
    if min_frequency > 1:
        # No pair counted fewer times will be learned: the engine need not keep one
        # (SuperBPE's stage 2 runs on its stretches with min_frequency at the cut's floor).
        trainer.keep_pairs_from(min_frequency)
    try:
        while len(rules) < merges:
            # Many merges per call into the engine; chunks keep the bar moving.
            chunk = min(merges - len(rules), LEARN_CHUNK)
            learned = trainer.steps(chunk, min_frequency)
            rules += learned
            if learned:
                trainer.keep_pairs_from(_kept_pairs_floor(learned[-1].count, len(rules) - first,
                                                          merges - first))
            if len(rules) < merges:
                check_still_fits(limit, len(rules))
            if bar is not None:
                bar.update(len(learned))
            if on_rules is not None:
                on_rules(rules)
            if len(learned) < chunk:
                break  # no pair left reaches min_frequency
    finally:
        if bar is not None:
            bar.close()
    return rules
