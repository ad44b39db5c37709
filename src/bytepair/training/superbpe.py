"""The SuperBPE trainer: stage 1 as ever, then the warm start over stage-2 pieces.

From documents, each stage counts them with its own pattern (stage 2's count
runs beside stage 1's learning when it can); from count tables, each stage
takes the tables cut with its pattern, added up. See
:mod:`bytepair.learn.superbpe` for the definition.
"""

from __future__ import annotations

from bytepair._util.errors import Advice, ArgumentError, InputError
from bytepair.read.corpus import Files
from bytepair.counts.counting import counted_in_blocks
from bytepair.counts.piece_counts import PieceCounts, describe_pattern
from bytepair._util.validate import MAX_COUNT
from bytepair.counts.sources import check_client
from bytepair.learn import incremental, loop, segments
from bytepair.learn import superbpe as superwords
from bytepair.learn.loop import ProgressHook, check_flat_total
from bytepair.learn.rules import BYTE_TOKENS, Merge, byte_token
from bytepair.model.models import ByteModel, Stages
from bytepair.model.spans import encode_spans
from bytepair.model.tokenizer import Tokenizer
from bytepair.training.counting import count_tables, read
from bytepair.training.defaults import EMPTY_CORPUS, too_many_merges
from bytepair.training.trainer import Trainer, check_counts


class SuperBPETrainer(Trainer):
    """SuperBPE training as :attr:`spec` says (its ``superbpe`` options): the verbs of
    :class:`Trainer` for stage 1, :meth:`learn_stage2` for stage 2."""

    def fit(self, corpus) -> Tokenizer:
        """The SuperBPE tokenizer trained on ``corpus`` (documents or count tables)."""
        options = self.spec.superbpe
        tables = count_tables(corpus)
        pattern = self.pattern(tables)  # stage 1's
        if tables is not None:
            stage1_tables, stage2_tables = stage_tables(tables, pattern, options.pattern)
        else:
            corpus = self.read_twice(corpus)
        start = self.start(pattern)
        rules, stages, pieces = list(start.merges), start.stages, None
        if stages is None and len(rules) < options.transition - BYTE_TOKENS:
            rules, pieces = self.stage1(start, corpus, None if tables is None else stage1_tables)
        elif stages is not None and stages.transition < options.transition:
            self.check_stage1_ran_out(start, corpus, tables and stage1_tables)
        # Stage 2 starts where stage 1 ended (early, when pairs ran out).
        stages = stages or Stages(BYTE_TOKENS + len(rules), pattern, options.max_words)
        made_here = True
        if tables is not None:
            pieces, made_here = stage_table(stage2_tables, options.pattern, "stage-2")
        elif pieces is None:
            pieces = self.count(corpus, options.pattern)
        if not pieces:
            raise ValueError(EMPTY_CORPUS)
        rules = self.learn_stage2(pieces, rules, release=made_here)
        return self.model(rules, options.pattern, stages)

    def pattern(self, tables: list[PieceCounts] | None) -> str:
        """Stage 1's pattern: the one given, else that of the count tables not cut with the
        stage-2 pattern, else ``init``'s (its stage 1's), else gpt2."""
        spec, stage2 = self.spec, self.spec.superbpe.pattern
        pattern = spec.pattern
        others = {table.pattern for table in tables or ()} - {stage2}
        if not spec.pattern_given and len(others) > 1:
            names = sorted(map(describe_pattern, others))
            raise InputError(f"corpus: the count tables were cut with {', '.join(names[:-1])} and "
                             f"{names[-1]} besides the stage-2 pattern {describe_pattern(stage2)}; "
                             f"SuperBPE's stage 1 has one (", Advice("pretokenize"), " names which)")
        if not spec.pattern_given and others:
            pattern = others.pop()
        if pattern is None:
            raise ArgumentError("superbpe", ": SuperBPE needs a stage-1 pretokenize pattern; with "
                                "none (byte mode) every document is one piece and there is no "
                                "stage 1 to go beyond")
        if stage2 is None:
            raise ArgumentError("superbpe_pretokenize", ": stage 2 needs a pattern (none would "
                                "make every document one piece)")
        return pattern

    def read_twice(self, corpus):
        """The corpus as files, or its documents held in memory: each stage reads it."""
        sources = read(corpus, self.spec.reading)
        if isinstance(sources, Files):
            return sources
        check_client(sources, self.spec.counting.client)
        return list(sources.documents(text=False))

    def start(self, pattern: str, saved=None) -> ByteModel:
        """The model training starts from: none, a stage-1 model, or a SuperBPE model
        trained with the same settings (continued in stage 2)."""
        model, options = self.spec.init, self.spec.superbpe
        if model is None:
            model = ByteModel([], pattern=pattern)
        elif model.stages is None:
            if model.pattern != pattern:
                raise ArgumentError("init", "was trained with a different pretokenize pattern")
            if model.vocab_size > options.transition:
                raise ValueError(f"init has {model.vocab_size} tokens, more than the transition "
                                 f"superbpe={options.transition}; give superbpe={model.vocab_size} "
                                 f"to add superwords to it")
        elif model.stages.pretokenize != pattern or model.stages.max_words != options.max_words:
            raise ValueError("init is a SuperBPE model trained with another pretokenize or max_words")
        elif model.stages.transition > options.transition:
            raise ValueError(_other_transition(model.stages.transition, options.transition))
        # A lower transition is where stage 1 ran out of pairs (trained with superbpe=T, it
        # stops early and records where): fit checks that it does so on this corpus.
        if len(model.merges) > self.spec.merges:
            raise too_many_merges("init", len(model.merges), self.spec.merges)
        return model

    def stage1(self, start: ByteModel, corpus, tables: list[PieceCounts] | None = None,
               ) -> tuple[list[Merge], PieceCounts | None]:
        """Stage 1's rules, up to the transition, from stage 1's count ``tables`` or else from
        ``corpus`` (files or documents held in memory); and, from documents, the stage-2
        counts (made while stage 1 learns when they can be)."""
        pattern, stage2 = start.pattern, self.spec.superbpe.pattern
        documents = tables is None
        if documents:
            counts, made_here, name = self.count(corpus, pattern), True, "pretokenize"
        else:
            counts, made_here = stage_table(tables, pattern, "stage-1")
            made_here, name = made_here and pattern != stage2, "counts"  # one table, two stages
        check_counts(counts, pattern, name)

        def learn() -> list[Merge]:
            nonlocal counts
            learned = self.learn(counts, start, release=made_here,
                                 merges=self.spec.superbpe.transition - BYTE_TOKENS)
            del counts
            return learned

        if documents:
            return self.learn_while_counting(learn, corpus)
        return learn(), None

    def check_stage1_ran_out(self, model: ByteModel, corpus, tables) -> None:
        """A SuperBPE ``model`` whose stage 1 ended below the transition continues in stage 2
        only if stage 1 runs out of pairs at the same rule on this corpus, as a fit from
        scratch with this transition would; otherwise it was trained with another one."""
        held, pattern = model.stages.transition, model.stages.pretokenize
        if tables:
            counts, made_here = stage_table(tables, pattern, "stage-1")
        else:
            counts, made_here = self.count(corpus, pattern), True
        stage1 = ByteModel(model.merges[:held - BYTE_TOKENS], pattern=pattern)
        learned = self.learn(counts, stage1, hooks=[], release=made_here,
                             merges=held - BYTE_TOKENS + 1)
        if len(learned) > held - BYTE_TOKENS:
            raise ValueError(_other_transition(held, self.spec.superbpe.transition)
                             + f" (its stage 1 ended at {held}, and on this corpus it goes on)")

    def learn_while_counting(self, learn, corpus) -> tuple[list[Merge], PieceCounts]:
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
        stage2, workers = self.spec.superbpe.pattern, self.spec.counting.threads
        if workers == 1 or not (isinstance(corpus, Files) and self.spec.counting.client is None
                                and counted_in_blocks(corpus, stage2)):
            rules = learn()
            return rules, self.count(corpus, stage2)
        from concurrent.futures import ThreadPoolExecutor  # at first use, not at import (~5 ms)

        with ThreadPoolExecutor(1, thread_name_prefix="bytepair-stage2") as pool:
            counting = pool.submit(self.count, corpus, stage2, workers=workers - 1, progress=False)
            rules = learn()
            return rules, counting.result()

    def learn_stage2(self, pieces: PieceCounts, rules: list[Merge], *,
                     release: bool = False) -> list[Merge]:
        """SuperBPE's stage 2: ``rules`` go on over the distinct stage-2 pieces, each encoded
        by them, up to the spec's merges, under the word cap.

        The pieces never become Python objects: the table's flat buffer is encoded
        into one flat array of IDs (:meth:`ByteModel.encode_spans`), which the
        engine reads in C. Most of the pieces' windows hold pairs too rare ever to
        be learned: the engine gets only the stretches between them
        (:mod:`bytepair.learn.segments`).
        """
        merges, max_words = self.spec.merges, self.spec.superbpe.max_words
        threads = self.spec.counting.threads
        data, starts, weights = pieces.flat()
        if release:
            pieces.release()
        check_flat_total(data, starts, weights)

        def sequences(learned: list[Merge]) -> tuple[list, tuple]:
            # The pieces encoded by every rule so far: where training stands (encoding
            # with the rules in rank order is how training replaces), and the word cap.
            model = ByteModel(rules + learned)
            tokens, offsets = encode_spans(model, data, starts, threads)
            shapes = superwords.shapes([model.token_bytes(t) for t in range(model.vocab_size)])
            return [tokens, offsets, weights], (shapes, max_words)

        def build(tokens, starts, weights, learned: list[Merge], word_limit: tuple):
            return incremental.IncrementalEngine.from_arrays(
                tokens, starts, weights, byte_token, first_rank=len(rules) + len(learned),
                word_limit=word_limit)

        def learn(engine: incremental.IncrementalEngine, learned: list[Merge],
                  min_frequency: int) -> list[Merge]:
            done = rules + learned
            new = loop.run(engine, list(done), merges, min_frequency,
                           [ProgressHook(self.spec.progress)])[len(done):]
            incremental.release_meanwhile(engine)
            return new

        return rules + segments.fit(sequences, merges - len(rules), build, learn,
                                    min_frequency=self.spec.min_frequency, threads=threads)


def stage_tables(tables: list[PieceCounts], pattern: str,
                 stage2: str) -> tuple[list[PieceCounts], list[PieceCounts]]:
    """The count tables of each SuperBPE stage: those cut with its pattern (a table serves both
    when the patterns are equal). A table cut with neither, or no table for stage 2, is an
    error; stage 1's tables are checked when stage 1 runs (``init`` may stand for it)."""
    for table in tables:
        if table.pattern not in (pattern, stage2):
            raise ValueError(
                f"corpus: a count table was cut with {describe_pattern(table.pattern)}, neither "
                f"the stage-1 pattern {describe_pattern(pattern)} nor the stage-2 pattern "
                f"{describe_pattern(stage2)}")
    stage1 = [table for table in tables if table.pattern == pattern]
    stage2_tables = [table for table in tables if table.pattern == stage2]
    if not stage2_tables:
        raise ValueError(_missing_stage("stage-2", stage2))
    for group in (stage1, stage2_tables):
        if sum(table.total() for table in group) > MAX_COUNT:
            raise ValueError(f"corpus: the tables cut with {describe_pattern(group[0].pattern)} "
                             "count more than 2**63 - 1 pieces together (counts are 64-bit)")
    return stage1, stage2_tables


def stage_table(tables: list[PieceCounts], pattern: str, stage: str) -> tuple[PieceCounts, bool]:
    """The tables of one stage as one table, and whether it was made here (a sum) rather
    than being the caller's own."""
    if not tables:
        raise ValueError(_missing_stage(stage, pattern))
    if len(tables) == 1:
        return tables[0], False
    return sum(tables), True


def _other_transition(held: int, asked: int) -> str:
    return f"init is a SuperBPE model with transition {held}, not superbpe={asked}"


def _missing_stage(stage: str, pattern: str) -> str:
    return (f"corpus: no count table was cut with the {stage} pattern {describe_pattern(pattern)}; "
            f"SuperBPE needs the documents counted with each stage's pattern")
