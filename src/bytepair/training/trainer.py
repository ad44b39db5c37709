"""The byte-mode trainer: a :class:`TrainSpec` carried through read → count → learn → model.

Each verb is one stage and can be called alone: :meth:`Trainer.count` (a
corpus to its piece counts), :meth:`Trainer.learn` (counts to rules, from a
start) and :meth:`Trainer.model`; :meth:`Trainer.fit` runs them in turn.
Variants (SuperBPE: :class:`bytepair.training.superbpe.SuperBPETrainer`) are
trainers of their own that reuse these verbs.

>>> from bytepair.training.spec import TrainSpec
>>> trainer = Trainer(TrainSpec(merges=2, pretokenize=None))
>>> [(m.left, m.right) for m in trainer.learn(trainer.count(["aaab", "ab"]))]
[(97, 97), (97, 98)]
"""

from __future__ import annotations

import dataclasses
import time

from bytepair._util.errors import Advice, ArgumentError
from bytepair.read.corpus import Documents, Files
from bytepair.split.pretokenize import check_matches_something
from bytepair.counts.checkpoint import Checkpoint, CheckpointAhead
from bytepair.counts.piece_counts import PieceCounts, describe_pattern
from bytepair.learn.budget import check_limit_now, check_still_fits
from bytepair.learn.loop import Hook, MemoryHook, ProgressHook, learn_counts
from bytepair.learn.rules import Merge
from bytepair.learn import ties as tie_orders
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.formats.load import load_checked
from bytepair.training.counting import (added, checkpoint_files, count_corpus, count_tables,
                                        plan_counting, read)
from bytepair.training.defaults import EMPTY_CORPUS, too_many_merges
from bytepair.training.spec import TrainSpec, check_not_languages, init_model

#: With a checkpoint, the rules learned so far are written at most this often (seconds).
CHECKPOINT_SECONDS = 60.0


class CheckpointHook(Hook):
    """Write the rules so far to a checkpoint (atomically) at most every
    :data:`CHECKPOINT_SECONDS`, and at the end of the run."""

    def __init__(self, saved: Checkpoint, pattern: str | None):
        self.saved, self.pattern = saved, pattern
        self.last = time.monotonic()

    def after_chunk(self, rules, learned, merges):
        if time.monotonic() - self.last >= CHECKPOINT_SECONDS:
            self.write(rules)

    def finish(self, rules):
        self.write(rules)

    def write(self, rules: list[Merge]) -> None:
        ByteModel(rules, pattern=self.pattern).save(self.saved.rules_path)
        self.last = time.monotonic()


class Trainer:
    """Byte-mode training as :attr:`spec` says: :meth:`fit` reads, counts, learns, makes the model."""

    def __init__(self, spec: TrainSpec):
        self.spec = spec

    def fit(self, corpus) -> Tokenizer:
        """The tokenizer trained on ``corpus`` (anything :func:`bytepair.train` takes)."""
        check_limit_now(self.spec.max_memory)  # a process past the limit stops before any work
        check_not_languages(corpus)  # a dict of languages is for ParityAwareTrainer
        tables = count_tables(corpus)  # counts made by count(), or None: documents to count
        counts = added(tables)
        pattern = self.pattern(counts)  # the one given, else the tables', init's, or gpt2
        self.check_ties(pattern)  # what BpeTrainer would read otherwise, before any work
        sources = read(corpus, self.spec.reading) if counts is None else None  # files found once
        saved = self.checkpoint(counts if counts is not None else sources, pattern)
        start = self.start(pattern, saved)  # init, or the rules a checkpoint holds
        if counts is None:
            counts = self.count(sources, pattern, checkpoint=saved, start=start)
        check_counts(counts, pattern, "pretokenize" if tables is None else "counts")
        # A table counted or summed here is nobody else's: learning may empty it.
        made_here = tables is None or all(counts is not table for table in tables)
        rules = self.learn(counts, start, hooks=self.hooks(saved, pattern), release=made_here)
        model = self.model(rules, pattern)
        check_still_fits(self.spec.max_memory, len(rules))  # the model is made once the engine is freed
        return model

    # -- the stages, in the order fit calls them ------------------------------------------------

    def pattern(self, counts: PieceCounts | None) -> str | None:
        """The pattern to train with: the one given, else that of ``counts`` (tables made by
        :func:`bytepair.count`), else ``init``'s, else gpt2. What was given must agree with
        the tables and ``init``; a conflict names both patterns."""
        spec = self.spec
        pattern = counts.pattern if counts is not None and not spec.pattern_given else spec.pattern
        if counts is not None and counts.pattern != pattern:
            raise ArgumentError("pretokenize", f": the counts were cut with "
                                f"{describe_pattern(counts.pattern)}, not {describe_pattern(pattern)}")
        self.check_init_pattern(pattern, "pretokenize" if spec.pattern_given else "the counts")
        return pattern

    def check_init_pattern(self, pattern: str | None, chosen_by: str) -> None:
        """Refuse an ``init`` trained with another pattern than ``pattern``, which
        ``chosen_by`` (``"pretokenize"`` or ``"the counts"``) chose."""
        init = self.spec.init
        if init is not None and init.pattern != pattern:
            by_option = chosen_by == "pretokenize"
            raise ArgumentError(
                "init", f"was trained with a different pretokenize pattern: "
                f"{describe_pattern(init.pattern)}, where ", Advice(chosen_by) if by_option else chosen_by,
                f" {'names' if by_option else 'were cut with'} {describe_pattern(pattern)}")

    def check_ties(self, pattern: str | None) -> None:
        """With ``ties="tokenizers"``, refuse a pattern or special token that ``BpeTrainer``
        would read otherwise (:mod:`bytepair.learn.ties`)."""
        if self.spec.ties == "tokenizers":
            tie_orders.check_pattern(pattern)
            tie_orders.check_special_tokens(self.spec.special_tokens)

    def checkpoint(self, corpus: PieceCounts | Files | Documents, pattern: str | None) -> Checkpoint | None:
        """The checkpoint of this run (None without one): opened, or checked against a resumed
        run's identity (:meth:`TrainSpec.identity`); it keeps given count tables at once."""
        options = self.spec.checkpoint
        if options is None:
            return None
        if not isinstance(corpus, PieceCounts):
            corpus = checkpoint_files(corpus, self.spec.counting.client)
        saved = Checkpoint(options.directory, self.spec.identity(corpus, pattern),
                           resume=options.resume)
        if isinstance(corpus, PieceCounts) and saved.counts() is None:
            saved.save_counts(corpus)
        return saved

    def start(self, pattern: str | None, saved: Checkpoint | None = None) -> ByteModel:
        """The model training goes on from: the rules a checkpoint holds, else ``init``, else none."""
        start = self.spec.init if self.spec.init is not None else ByteModel([], pattern=pattern)
        if len(start.merges) > self.spec.merges:
            raise too_many_merges("init", len(start.merges), self.spec.merges)
        held = saved.rules(lambda path: load_checked(path, trust_pattern=True)) if saved else None
        if held is not None:
            start = init_model(held)
            if len(start.merges) > self.spec.merges:
                raise CheckpointAhead(len(start.merges), self.spec.merges,
                                      len(self.spec.special_tokens))
        return start

    def count(self, corpus, pattern=..., *, checkpoint: Checkpoint | None = None,
              start: ByteModel | None = None, workers: int | None = None,
              progress: bool | None = ...) -> PieceCounts:
        """The piece counts of ``corpus`` cut with ``pattern`` (default: the spec's), by
        ``workers`` (default: the spec's); the table a ``checkpoint`` holds when it has one.
        With a memory limit the count keeps within it (the forecast counts the merges left
        after ``start``)."""
        spec = self.spec
        pattern = spec.pattern if pattern is ... else pattern
        progress = spec.progress if progress is ... else progress
        counting = spec.counting if workers is None else \
            dataclasses.replace(spec.counting, workers=workers)
        if checkpoint is not None and (table := checkpoint.counts()) is not None:
            return table  # a resumed run: nothing to read
        sources = read(corpus, spec.reading)
        if spec.max_memory is not None:
            merges = spec.merges - (len(start.merges) if start is not None else 0)
            counting = plan_counting(spec.max_memory, sources, pattern, merges, counting)
        return count_corpus(sources, pattern, counting, progress, checkpoint)

    def hooks(self, saved: Checkpoint | None = None, pattern: str | None = None) -> list[Hook]:
        """What runs between chunks of merges: the memory limit, the bar, the checkpoint."""
        hooks = [MemoryHook(self.spec.max_memory), ProgressHook(self.spec.progress)]
        if saved is not None:
            hooks.append(CheckpointHook(saved, pattern))
        return hooks

    def learn(self, counts: PieceCounts, start: ByteModel | None = None, *,
              hooks: list[Hook] | None = None, release: bool = False,
              merges: int | None = None) -> list[Merge]:
        """Rules learned from ``counts``: up to ``merges`` (default: the spec's) in all,
        ``start``'s first; ``release`` empties ``counts`` once the engine holds them."""
        return learn_counts(counts, self.spec.merges if merges is None else merges,
                            min_frequency=self.spec.min_frequency, start=start, release=release,
                            limit=self.spec.max_memory,
                            hooks=self.hooks() if hooks is None else hooks, ties=self.spec.ties)

    def model(self, rules: list[Merge], pattern=..., stages=None) -> Tokenizer:
        """The tokenizer of ``rules`` split with ``pattern`` (default: the spec's), with the
        spec's special tokens after the learned ones; with ``ties="tokenizers"``, numbered as
        ``BpeTrainer`` numbers them (special tokens first, then the bytes in its order)."""
        pattern = self.spec.pattern if pattern is ... else pattern
        special = list(self.spec.special_tokens)
        ids = None
        if self.spec.ties == "tokenizers":
            tie_orders.check_special_tokens(special, rules)
            ids = tie_orders.tokenizers_ids(len(rules), len(special))
        return Tokenizer(ByteModel.trusted(rules, pattern=pattern, stages=stages), special, ids=ids)


def check_counts(counts: PieceCounts, pattern: str | None, name: str) -> None:
    """Refuse an empty table, and one cut by a custom pattern that matched nothing (``name``
    is who chose it: a table's pattern is the table's, whoever named it)."""
    if not counts:
        raise ValueError(EMPTY_CORPUS)
    check_matches_something(pattern, counts, name)
