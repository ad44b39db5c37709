"""Reading and counting as training asks for them: files found once, a bar, a checkpoint, a limit.

:func:`count` is the public entry (the piece-count tables that :func:`bytepair.train`
learns from); the trainers call the same steps.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

from bytepair._util.progress import progress_bar
from bytepair.read.corpus import Documents, Files, read_corpus
from bytepair.split.pretokenize import resolve_pattern
from bytepair.counts.checkpoint import Checkpoint
from bytepair.counts.counting import counts_bytes
from bytepair.counts.piece_counts import PieceCounts
from bytepair.counts.sources import check_client, count_sources
from bytepair.learn.budget import check_forecast, counting_plan
if TYPE_CHECKING:  # for annotations only: importing regex at start-up is slow
    import distributed
    import regex

    from bytepair.training.spec import CountOptions, ReadOptions


def read(corpus, reading: ReadOptions) -> Files | Documents:
    """The read stage: ``corpus`` as :class:`Files` (found now, once) or :class:`Documents`."""
    return read_corpus(corpus, **reading.as_keywords())


def count_tables(corpus) -> list[PieceCounts] | None:
    """The tables when ``corpus`` is a :class:`PieceCounts` or a list of them, else None. A table
    of sentencepiece's words is refused: byte-level training would read each word as a document."""
    if isinstance(corpus, PieceCounts):
        tables = [corpus]
    elif isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, PieceCounts) for c in corpus):
        tables = list(corpus)
    else:
        return None
    if any(table.sentencepiece is not None for table in tables):
        raise ValueError("corpus: a table of sentencepiece words (counted with --sentencepiece) trains "
                         "a sentencepiece model only (train --sentencepiece, bytepair.train_sentencepiece)")
    return tables


def added(tables: list[PieceCounts] | None) -> PieceCounts | None:
    """The tables as one (a sum when there are several; mixed patterns: an error naming both)."""
    if tables is None:
        return None
    return tables[0] if len(tables) == 1 else sum(tables)


def checkpoint_files(sources: Files | Documents, client) -> Files:
    """The files of a corpus to checkpoint: a stream or a cluster cannot be resumed."""
    if client is not None:
        raise ValueError("checkpoint: counting on a cluster cannot be checkpointed")
    if not isinstance(sources, Files):
        raise ValueError("checkpoint: only files can be resumed, not a stream of "
                         f"documents ({type(sources.iterable).__name__})")
    return sources


def plan_counting(limit: int, sources: Files | Documents, pattern: str | None, merges: int,
                  counting: CountOptions) -> CountOptions:
    """The counting options that keep counting within ``limit``: first the forecast from a
    sample refuses at once what cannot fit (files only), then the tables get a bound that
    keeps them inside the limit (they spill to disk past it), with fewer workers when each
    one's table would be too small. A cluster's workers are not this process: only the
    forecast applies to them."""
    import dataclasses  # here, as the spec: dataclasses cost import time

    check_forecast(limit, sources, pattern, merges)
    if counting.client is not None:
        return counting
    bound, workers = counting_plan(limit, counting.count_memory, counting.threads)
    return dataclasses.replace(counting, count_memory=bound, workers=workers)


def count_corpus(sources: Files | Documents, pattern: str | None, counting: CountOptions,
                 progress: bool | None, checkpoint: Checkpoint | None = None) -> PieceCounts:
    """The counts of what the read stage made of a corpus, with a bar of the bytes read;
    with ``checkpoint``, the table it holds, else a count kept there part by part."""
    check_client(sources, counting.client)
    if checkpoint is not None:
        table = checkpoint.counts()
        if table is not None:  # a resumed run: nothing to read
            return table
    if isinstance(sources, Files):
        bar = progress_bar(progress, desc="reading", unit="B", unit_scale=True,
                           total=sources.total_bytes())
    else:
        bar = progress_bar(progress, desc="reading", unit="B" if counts_bytes(pattern) else "char",
                           unit_scale=True)
    try:
        if checkpoint is not None:
            table = checkpoint.count(sources, pattern, workers=counting.threads, progress_bar=bar)
            checkpoint.save_counts(table)
        else:
            table = count_sources(sources, pattern, workers=counting.threads, client=counting.client,
                                  progress_bar=bar, count_memory=counting.count_memory)
        if bar is not None:
            bar.set_postfix(distinct_pieces=len(table))
    finally:
        if bar is not None:
            bar.close()
    return table


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
    from bytepair.training.spec import CountOptions, ReadOptions, count_identity  # at first use

    pattern = resolve_pattern(pretokenize)
    counting = CountOptions(workers, client, count_memory)
    sources = read(corpus, ReadOptions(per_line, jsonl_field, text_column))
    saved = None
    if checkpoint is not None:
        files = checkpoint_files(sources, client)
        saved = Checkpoint(checkpoint, count_identity(files, pattern), resume=resume)
    return count_corpus(sources, pattern, counting, progress, saved)
