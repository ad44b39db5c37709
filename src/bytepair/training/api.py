"""The public training entry points: :func:`train` builds a :class:`TrainSpec` and fits the
trainer :func:`trainer_for` picks; :func:`learn` is the merge loop alone, on counts.

Each stage hands its output to the next (see docs/design.md, "How a call flows")::

    spec = TrainSpec(...)                    # every option, checked once
    trainer = trainer_for(spec)              # Trainer, SuperBPETrainer or ParityAwareTrainer
    sources = read(corpus)                   # bytepair.read: Files or Documents
    counts = trainer.count(sources)          # bytepair.counts: split and count them
    rules = trainer.learn(counts, start)     # bytepair.learn: the merge loop and its hooks
    trainer.model(rules)                     # bytepair.model: the Tokenizer
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from bytepair._util.validate import parse_memory
from bytepair.read.corpus import Files
from bytepair.counts.piece_counts import PieceCounts
from bytepair.learn.budget import check_limit_now
from bytepair.learn.loop import MemoryHook, ProgressHook, learn_counts
from bytepair.learn.rules import Merge
from bytepair.learn.ties import check_ties
from bytepair.learn.superbpe import DEFAULT_MAX_WORDS
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.training.defaults import DEFAULT_PATTERN

if TYPE_CHECKING:  # for annotations only: importing regex at start-up is slow
    import distributed
    import regex

    from bytepair.training.spec import TrainSpec
    from bytepair.training.trainer import Trainer


def trainer_for(spec: TrainSpec) -> Trainer:
    """The trainer of ``spec``: :class:`~bytepair.training.superbpe.SuperBPETrainer` with
    ``superbpe``, :class:`~bytepair.training.parity.ParityAwareTrainer` with ``parity``, else
    :class:`~bytepair.training.trainer.Trainer`. The spec says what to train; this picks
    who trains it, so that the spec imports none of the trainers.

    >>> from bytepair.training.spec import TrainSpec
    >>> type(trainer_for(TrainSpec(merges=3))).__name__
    'Trainer'
    """
    # The trainers are imported at first use: their modules cost import time.
    if spec.parity is not None:
        from bytepair.training.parity import ParityAwareTrainer

        return ParityAwareTrainer(spec)
    if spec.superbpe is not None:
        from bytepair.training.superbpe import SuperBPETrainer

        return SuperBPETrainer(spec)
    from bytepair.training.trainer import Trainer

    return Trainer(spec)


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
    max_words: int = DEFAULT_MAX_WORDS,
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
        :data:`bytepair.training.trainer.CHECKPOINT_SECONDS`), so that an interrupted run can be resumed. Files or
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
        table would be too small. The rules do not depend on it. Not yet with ``superbpe``
        (its stage-2 engine's memory is not estimated yet).
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
        Not with ``superbpe``. With ``init``, its rules come first and the choice of language
        starts afresh; a ``checkpoint`` resumes to the uninterrupted run's model
        (:class:`bytepair.training.ParityAwareTrainer`).
    """
    # The spec's dataclasses are made at first use: they cost import time.
    from bytepair.training.spec import (CheckpointOptions, CountOptions, ReadOptions,
                                        SuperBPEOptions, TrainSpec, check_not_languages,
                                        parity_options)

    if parity is None:
        check_not_languages(corpus)
    return trainer_for(TrainSpec(
        vocab_size=vocab_size, merges=merges, pretokenize=pretokenize,
        special_tokens=special_tokens, min_frequency=min_frequency, init=init,
        reading=ReadOptions(per_line, jsonl_field, text_column),
        counting=CountOptions(workers, client, count_memory),
        superbpe=None if superbpe is None else SuperBPEOptions(superbpe, superbpe_pretokenize,
                                                               max_words),
        parity=parity_options(parity, dev, ratio, global_merges, window_size, alpha),
        ties=ties,
        checkpoint=None if checkpoint is None else CheckpointOptions(checkpoint, resume),
        max_memory=max_memory, progress=progress,
    )).fit(corpus)


def learn(counts: PieceCounts | Mapping[bytes, int], merges: int, *, min_frequency: int = 1,
          start: ByteModel | None = None, progress: bool | None = False,
          max_memory: int | str | None = None, ties: str | None = None) -> list[Merge]:
    """Rules from weighted pieces: up to ``merges`` in total, counting ``start``'s rules.

    The order of the pieces does not matter (counts are sums), so they go to
    the engine as the table holds them, laid end to end in one flat buffer
    (:meth:`PieceCounts.flat`). ``max_memory`` and ``ties`` as in :func:`train`.

    >>> [(m.left, m.right) for m in learn({b"aaab": 1, b"ab": 1}, 2)]
    [(97, 97), (97, 98)]
    """
    limit = parse_memory(max_memory) if max_memory is not None else None
    ties = check_ties(ties)
    check_limit_now(limit)
    return learn_counts(counts, merges, min_frequency=min_frequency, start=start, limit=limit,
                        hooks=[MemoryHook(limit), ProgressHook(progress)], ties=ties)
