"""The parity-aware trainer: one corpus per language, each rule the best pair of the language
that needs one most (:mod:`bytepair.learn.parity`, docs/parity.md).

A variant of :class:`~bytepair.training.trainer.Trainer` with the same verbs: :meth:`count`
counts each language (and its dev text) as the byte-mode trainer counts one corpus,
:meth:`ParityAwareTrainer.learn` runs the parity engine on those tables, and
:meth:`~bytepair.training.trainer.Trainer.model` makes the tokenizer.

>>> from bytepair.training.spec import ParityOptions, TrainSpec
>>> spec = TrainSpec(merges=2, pretokenize=None, parity=ParityOptions("base", ratio={"a": 1, "b": 1}))
>>> [(m.left, m.right) for m in ParityAwareTrainer(spec).fit({"a": ["aaaa"], "b": ["bcbc"]}).merges]
[(97, 97), (98, 99)]
"""

from __future__ import annotations

from typing import Mapping

from bytepair._util.progress import progress_bar
from bytepair.counts.piece_counts import PieceCounts, describe_pattern
from bytepair.learn.rules import Merge
from bytepair.model.tokenizer import Tokenizer
from bytepair.training.counting import added, count_tables
from bytepair.training.trainer import Trainer


class ParityAwareTrainer(Trainer):
    """Parity-aware training as :attr:`spec` says (its ``parity`` options): each language's
    text counted, then :func:`bytepair.learn.parity.learn`, then the model."""

    def fit(self, corpus: Mapping) -> Tokenizer:
        """The tokenizer trained on ``corpus``: a dict of languages to their text, each anything
        :func:`bytepair.train` takes as a corpus."""
        options = self.spec.parity
        languages = options.languages(corpus)
        pattern = self.languages_pattern(corpus, options.dev, languages)
        self.check_ties(pattern)
        tables = self.count_languages("corpus", corpus, languages, pattern)
        dev = (self.count_languages("dev", options.dev, languages, pattern)
               if options.dev is not None else None)
        return self.model(self.learn_languages(tables, dev, languages), pattern)

    def languages_pattern(self, corpus: Mapping, dev: Mapping | None,
                          languages: list[str]) -> str | None:
        """The pattern: the one given, else that of the count tables given for a language
        (all must agree), else gpt2. No ``init`` here (parity refuses it)."""
        given = [(what, language, table) for what, texts in (("corpus", corpus), ("dev", dev or {}))
                 for language in languages if language in texts
                 for table in count_tables(texts[language]) or ()]
        if not given:
            return self.spec.pattern
        pattern = self.spec.pattern if self.spec.pattern_given else given[0][2].pattern
        for what, language, table in given:
            if table.pattern != pattern:
                raise ValueError(f"{what}: {language}'s counts were cut with "
                                 f"{describe_pattern(table.pattern)}, not {describe_pattern(pattern)}")
        return pattern

    def count_languages(self, what: str, texts: Mapping, languages: list[str],
                        pattern: str | None) -> list[PieceCounts]:
        """Each language's piece counts (``what`` names the argument that gave the texts):
        its text counted, or the count tables given for it, added; a language with no
        text is refused."""
        tables = []
        for language in languages:
            given = count_tables(texts[language])
            table = added(given) if given is not None else self.count(texts[language], pattern)
            if not table:
                raise ValueError(f"{what}: {language} has no text")
            tables.append(table)
        return tables

    def learn_languages(self, tables: list[PieceCounts], dev: list[PieceCounts] | None,
                        languages: list[str]) -> list[Merge]:
        """The rules the parity engine learns from one table per language (and their dev
        tables, or the spec's ratios in the languages' order), with a bar of the merges."""
        from bytepair.learn import parity as parity_engine  # at first use: it imports sortedcontainers

        spec, options = self.spec, self.spec.parity
        targets = [options.ratio[language] for language in languages] if dev is None else None
        bar = progress_bar(spec.progress, desc="merging", unit="merge", total=spec.merges)
        try:
            learned = parity_engine.learn(
                tables, spec.merges, dev=dev, ratio=targets, variant=options.variant,
                global_merges=options.global_merges, window_size=options.window_size,
                alpha=options.alpha, min_frequency=spec.min_frequency, ties=spec.ties,
                progress_bar=bar)
        finally:
            if bar is not None:
                bar.close()
        return [Merge(*rule[:6]) for rule in learned]
