"""The parity-aware trainer: one corpus per language, each rule the best pair of the language
that needs one most (:mod:`bytepair.learn.parity`, docs/parity.md).

A variant of :class:`~bytepair.training.trainer.Trainer` with the same verbs: :meth:`count`
counts each language (and its dev text) as the byte-mode trainer counts one corpus,
:meth:`ParityAwareTrainer.learn_languages` steps the parity engine with
:func:`bytepair.learn.loop.run` and the trainer's hooks (memory limit, bar, checkpoint), and
:meth:`~bytepair.training.trainer.Trainer.model` makes the tokenizer.

>>> from bytepair.training.spec import ParityOptions, TrainSpec
>>> spec = TrainSpec(merges=2, pretokenize=None, parity=ParityOptions("base", ratio={"a": 1, "b": 1}))
>>> [(m.left, m.right) for m in ParityAwareTrainer(spec).fit({"a": ["aaaa"], "b": ["bcbc"]}).merges]
[(97, 97), (98, 99)]
"""

from __future__ import annotations

import json
from typing import Mapping

from bytepair._util.atomic import write_atomically
from bytepair._util.errors import ArgumentError
from bytepair.counts.checkpoint import Checkpoint
from bytepair.counts.piece_counts import PieceCounts, describe_pattern
from bytepair.learn.budget import check_limit_now
from bytepair.learn.rules import Merge
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.training.counting import added, checkpoint_files, count_tables, read
from bytepair.training.trainer import CheckpointHook, Trainer



class LanguageWithoutText(ArgumentError):
    """A language whose text holds nothing to count (``corpus: l1 has no text``), refused with
    every variant: ``argument`` names what gave the texts (``corpus`` or ``dev``)."""

    def __init__(self, argument: str, language: str):
        self.language = language
        super().__init__(argument, f": {language} has no text")

    def __reduce__(self):
        return (type(self), (self.argument, self.language))

class ParityAwareTrainer(Trainer):
    """Parity-aware training as :attr:`spec` says (its ``parity`` options): each language's
    text counted, then the parity engine stepped by the merge loop, then the model.

    ``init`` goes on from a model: its rules come first, every text is encoded by them,
    and the choice of language starts afresh from there (no choice in the window yet; with
    ``ratio``, compression is still measured from the text's bytes). A checkpoint keeps the
    rules and what the choice remembers, so a resumed run equals an uninterrupted one; it
    counts the texts again.
    """

    def fit(self, corpus: Mapping) -> Tokenizer:
        """The tokenizer trained on ``corpus``: a dict of languages to their text, each anything
        :func:`bytepair.train` takes as a corpus."""
        check_limit_now(self.spec.max_memory)  # a process past the limit stops before any work
        options = self.spec.parity
        languages = options.languages(corpus)
        pattern = self.languages_pattern(corpus, options.dev, languages)
        self.check_ties(pattern)
        texts = self.sources(corpus, languages)  # tables added, or files found once
        dev = self.sources(options.dev, languages) if options.dev is not None else None
        saved = self.parity_checkpoint(texts, dev, pattern)
        start = self.start(pattern, saved)  # init, or the rules a checkpoint holds
        tables = self.count_languages("corpus", texts, languages, pattern)
        dev_tables = (self.count_languages("dev", dev, languages, pattern)
                      if dev is not None else None)
        return self.model(self.learn_languages(tables, dev_tables, languages, start, saved, pattern),
                          pattern)

    def languages_pattern(self, corpus: Mapping, dev: Mapping | None,
                          languages: list[str]) -> str | None:
        """The pattern: the one given, else that of the count tables given for a language
        (all must agree), else ``init``'s, else gpt2; ``init`` must agree with it."""
        given = [(what, language, table) for what, texts in (("corpus", corpus), ("dev", dev or {}))
                 for language in languages if language in texts
                 for table in count_tables(texts[language]) or ()]
        pattern = self.spec.pattern
        if given and not self.spec.pattern_given:
            pattern = given[0][2].pattern
        for what, language, table in given:
            if table.pattern != pattern:
                raise ValueError(f"{what}: {language}'s counts were cut with "
                                 f"{describe_pattern(table.pattern)}, not {describe_pattern(pattern)}")
        self.check_init_pattern(pattern, "pretokenize" if self.spec.pattern_given or not given
                                else "the counts")
        return pattern

    def sources(self, texts: Mapping, languages: list[str]) -> dict:
        """Each language's text as the count stage takes it: the count tables given for it,
        added, or its files (found now, once) or documents."""
        return {language: added(count_tables(texts[language]))
                or read(texts[language], self.spec.reading) for language in languages}

    def parity_checkpoint(self, texts: dict, dev: dict | None,
                          pattern: str | None) -> Checkpoint | None:
        """The checkpoint of this run (None without one), opened or checked against a resumed
        run's identity: the options that shape the rules and every language's files or
        count tables (and its dev text's)."""
        options = self.spec.checkpoint
        if options is None:
            return None
        client = self.spec.counting.client

        def kept(sources: dict) -> dict:
            return {language: source if isinstance(source, PieceCounts)
                    else checkpoint_files(source, client) for language, source in sources.items()}

        identity = self.spec.identity(kept(texts), pattern,
                                      dev=kept(dev) if dev is not None else None)
        return Checkpoint(options.directory, identity, resume=options.resume)

    def count_languages(self, what: str, texts: dict, languages: list[str],
                        pattern: str | None) -> list[PieceCounts]:
        """Each language's piece counts (``what`` names the argument that gave the texts):
        the tables given, or its text counted; a language with no text is refused."""
        tables = []
        for language in languages:
            source = texts[language]
            table = source if isinstance(source, PieceCounts) else self.count(source, pattern)
            if not table:
                raise LanguageWithoutText(what, language)
            tables.append(table)
        return tables

    def learn_languages(self, tables: list[PieceCounts], dev: list[PieceCounts] | None,
                        languages: list[str], start: ByteModel | None = None,
                        saved: Checkpoint | None = None, pattern: str | None = None) -> list[Merge]:
        """The rules the parity engine learns from one table per language (and their dev
        tables, or the spec's ratios in the languages' order), after ``start``'s, stepped by
        :func:`bytepair.learn.loop.run` with :meth:`hooks`."""
        from bytepair.learn import parity as parity_engine  # at first use: it imports sortedcontainers

        spec, options = self.spec, self.spec.parity
        first = list(start.merges) if start is not None else []
        engine = parity_engine.engine(
            tables, spec.merges, dev=dev,
            ratio=[options.ratio[language] for language in languages] if dev is None else None,
            variant=options.variant, global_merges=options.global_merges,
            window_size=options.window_size, alpha=options.alpha, ties=spec.ties,
            start=start if first else None, history=held_history(saved, len(first)),
            limit=spec.max_memory)
        hooks = self.hooks()
        if saved is not None:
            hooks.append(ParityCheckpointHook(saved, pattern, engine, len(first)))
        learned = parity_engine.run(engine, first, spec.merges, spec.min_frequency, hooks)
        return [Merge(*rule[:6]) for rule in learned]


#: The file of a parity checkpoint that holds what the choice of language remembers.
HISTORY = "parity.json"


class ParityCheckpointHook(CheckpointHook):
    """:class:`CheckpointHook` for the parity engine: the rules, and before them what the
    choice of language remembers (:meth:`bytepair.learn.parity.ParityEngine.history`),
    for the rules written last time and for these. A run stopped between the two writes
    finds the history of the rules it holds either way."""

    def __init__(self, saved: Checkpoint, pattern: str | None, engine, held: int):
        super().__init__(saved, pattern)
        self.engine = engine
        # The rules file as it stands (``held`` rules) and its history, if any.
        state = _histories(saved).get(str(held)) if saved.rules_path.exists() else None
        self.held = {str(held): state} if state is not None else {}

    def write(self, rules) -> None:
        recent, exhausted = self.engine.history()
        now = {str(len(rules)): {"recent": recent, "exhausted": exhausted}}
        write_atomically(self.saved.directory / HISTORY, json.dumps({**self.held, **now}) + "\n")
        super().write([Merge(*rule[:6]) for rule in rules])
        self.held = now


def _histories(saved: Checkpoint) -> dict:
    path = saved.directory / HISTORY
    try:
        return json.loads(path.read_text("utf-8")) if path.exists() else {}
    except ValueError:
        return {}


def held_history(saved: Checkpoint | None, held: int) -> tuple | None:
    """What the choice of language remembered after the ``held`` rules a checkpoint holds
    (None without a checkpoint or rules: the choice starts afresh)."""
    if saved is None or not saved.rules_path.exists():
        return None
    state = _histories(saved).get(str(held))
    if state is None:
        raise ValueError(f"checkpoint {str(saved.directory)!r}: its {HISTORY} does not go with "
                         f"its rules; delete {str(saved.rules_path)!r} to learn them again")
    return state["recent"], state["exhausted"]
