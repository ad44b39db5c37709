"""What to train: :class:`TrainSpec`, every option of :func:`bytepair.train`, checked once.

A spec is frozen and validated when it is made: a bad option fails with one
line naming it before any file is opened. Options that travel together are
small groups of their own (:class:`ReadOptions`, :class:`CountOptions`,
:class:`SuperBPEOptions`, :class:`CheckpointOptions`). A spec also knows
what it shares with a run that can be resumed (:meth:`TrainSpec.identity`)
and what a model it continues implies (:meth:`TrainSpec.continuing`).

>>> spec = TrainSpec(vocab_size=300, special_tokens=("<|endoftext|>",))
>>> spec.merges, spec.pattern == PATTERNS["gpt2"]
(43, True)
>>> TrainSpec(merges=10, vocab_size=300)
Traceback (most recent call last):
ValueError: give exactly one of vocab_size and merges
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from bytepair._util.validate import (MAX_BYTE_MERGES, check_int, check_special_tokens,
                                     merges_for_vocab_size, parse_memory)
from bytepair.split.pretokenize import PATTERNS, resolve_pattern
from bytepair.counts.checkpoint import corpus_identity
from bytepair.counts.piece_counts import PieceCounts
from bytepair.learn.rules import BYTE_TOKENS
from bytepair.learn.superbpe import DEFAULT_MAX_WORDS, transition_too_large
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.formats.load import load
from bytepair.training.defaults import DEFAULT_PATTERN

if TYPE_CHECKING:
    from bytepair.training.trainer import Trainer


@dataclass(frozen=True)
class ReadOptions:
    """How files hold documents (see :class:`bytepair.Files`)."""

    per_line: bool = False
    jsonl_field: str | None = None
    text_column: str | None = None

    def as_keywords(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class CountOptions:
    """Who counts: ``workers`` threads or processes here (None: all cores), or a ``client``'s
    cluster; ``count_memory`` bounds the local tables in bytes (None: no bound)."""

    workers: int | None = None
    client: Any = None
    count_memory: int | None = None

    def __post_init__(self):
        if self.workers is not None:
            check_int(self.workers, "workers", minimum=1)
        if self.count_memory is not None:
            check_int(self.count_memory, "count_memory", minimum=1)
            if self.client is not None:
                raise ValueError("count_memory: the cluster's workers count, each its own parts; "
                                 "it bounds local counting only")

    @property
    def threads(self) -> int:
        """The workers to count (and encode) with here."""
        return self.workers or os.cpu_count() or 1


@dataclass(frozen=True)
class SuperBPEOptions:
    """SuperBPE (:mod:`bytepair.learn.superbpe`): stage 1 up to a vocabulary of ``transition``,
    then stage 2 over the pieces ``pretokenize`` cuts, no token over ``max_words`` words.

    ``pattern`` is ``pretokenize`` as a regex source, resolved when the options are made.
    """

    transition: int
    pretokenize: Any = "superbpe"
    max_words: int = DEFAULT_MAX_WORDS
    pattern: str = field(init=False, repr=False)

    def __post_init__(self):
        pattern = resolve_pattern(self.pretokenize, "superbpe_pretokenize")
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "transition",
                           check_int(self.transition, "superbpe", minimum=BYTE_TOKENS))
        object.__setattr__(self, "max_words", check_int(self.max_words, "max_words", minimum=1))


@dataclass(frozen=True)
class CheckpointOptions:
    """A directory that keeps a run's progress; ``resume`` continues the run it holds."""

    directory: str | os.PathLike
    resume: bool = False


@dataclass(frozen=True)
class TrainSpec:
    """Everything :func:`bytepair.train` takes, checked once (see there for each option).

    After checking, ``merges`` is the number of rules (from ``vocab_size`` when that was
    given), ``special_tokens`` a tuple, ``max_memory`` bytes or None, ``init`` the
    :class:`ByteModel` to continue (loaded when it was a path) or None, and ``pattern``
    the regex source of ``pretokenize`` (SuperBPE: of stage 1) as far as the spec alone
    decides it: the count tables a run is given may still supply theirs
    (:meth:`bytepair.training.trainer.Trainer.pattern`).
    """

    vocab_size: int | None = None
    merges: int | None = None
    pretokenize: Any = DEFAULT_PATTERN
    special_tokens: Sequence[str] = ()
    min_frequency: int = 1
    init: Any = None
    reading: ReadOptions = ReadOptions()
    counting: CountOptions = CountOptions()
    superbpe: SuperBPEOptions | None = None
    checkpoint: CheckpointOptions | None = None
    max_memory: int | str | None = None
    progress: bool | None = None
    pattern: str | None = field(init=False, repr=False)

    def __post_init__(self):
        if self.superbpe is not None:
            _refuse_with_superbpe(self)
        limit = parse_memory(self.max_memory) if self.max_memory is not None else None
        special = tuple(check_special_tokens(self.special_tokens))
        min_frequency = check_int(self.min_frequency, "min_frequency", minimum=1)
        if (self.vocab_size is None) == (self.merges is None):
            raise ValueError("give exactly one of vocab_size and merges")
        merges = self.merges
        if self.vocab_size is not None:
            merges = merges_for_vocab_size(self.vocab_size, len(special))
        merges = check_int(merges, "merges", maximum=MAX_BYTE_MERGES)
        for name, value in (("max_memory", limit), ("special_tokens", special), ("merges", merges), ("min_frequency", min_frequency),
                            ("init", init_model(self.init))):
            object.__setattr__(self, name, value)
        if self.superbpe is not None:
            _check_transition(self)
        elif self.init is not None and self.init.stages is not None:
            raise ValueError(f"init is a SuperBPE model; give superbpe={self.init.stages.transition} "
                             f"(with its superbpe_pretokenize and max_words) to continue it")
        object.__setattr__(self, "pattern", self._default_pattern())

    @property
    def pattern_given(self) -> bool:
        """Whether ``pretokenize`` was given (else the tables' or ``init``'s pattern wins)."""
        return self.pretokenize is not DEFAULT_PATTERN

    def _default_pattern(self) -> str | None:
        if self.pattern_given or self.init is None:
            return resolve_pattern(self.pretokenize)
        stages = self.init.stages
        return stages.pretokenize if stages is not None else self.init.pattern

    @classmethod
    def continuing(cls, model: Tokenizer | ByteModel | str | os.PathLike, **options) -> TrainSpec:
        """A spec that goes on from ``model``: its pattern, and for a SuperBPE model its stages
        (transition, stage-2 pattern, word cap), unless ``options`` say otherwise.

        >>> start = TrainSpec(merges=5).trainer().fit(["abab cdcd"] * 3)
        >>> TrainSpec.continuing(start, merges=8).pattern == start.pattern
        True
        """
        model = init_model(model)
        if options.get("superbpe") is None:
            options["superbpe"] = superbpe_options(model)
        return cls(init=model, **options)

    def trainer(self) -> Trainer:
        """The trainer of this spec: :class:`~bytepair.training.superbpe.SuperBPETrainer` with
        ``superbpe``, else :class:`~bytepair.training.trainer.Trainer`."""
        if self.superbpe is not None:
            from bytepair.training.superbpe import SuperBPETrainer

            return SuperBPETrainer(self)
        from bytepair.training.trainer import Trainer

        return Trainer(self)

    def identity(self, corpus, pattern: str | None = None) -> dict:
        """What a checkpoint's run is, to compare with a resumed one: the pattern, the options
        that shape the rules, and the corpus (:class:`bytepair.Files`: the files and how they
        are read) or the count table that stands for it (a digest of its pieces)."""
        import hashlib  # at first use: its OpenSSL binding is slow to import

        pattern = self.pattern if pattern is None else pattern
        init_rules = [[m.left, m.right] for m in self.init.merges] if self.init is not None else []
        init = hashlib.sha256(repr(init_rules).encode()).hexdigest() if init_rules else None
        identity = {"pattern": pattern, "min_frequency": self.min_frequency, "init": init}
        if isinstance(corpus, PieceCounts):
            digest = hashlib.sha256()
            for piece, number in sorted(corpus.items()):
                digest.update(len(piece).to_bytes(8, "little") + piece + number.to_bytes(8, "little"))
            identity["counts"] = digest.hexdigest()
        else:
            identity.update(corpus_identity(corpus))
        return identity


def superbpe_options(init: ByteModel | None, transition: int | None = None, pretokenize=None,
                     max_words: int | None = None) -> SuperBPEOptions | None:
    """A run's SuperBPE options: those given, else (continuing a SuperBPE model ``init``)
    its transition, stage-2 pattern and word cap, else the defaults; None when neither
    ``transition`` nor ``init`` asks for SuperBPE.

    >>> superbpe_options(None) is None, superbpe_options(None, 300).max_words
    (True, 4)
    """
    stages = init.stages if init is not None else None
    if transition is None and stages is None:
        return None
    return SuperBPEOptions(
        transition if transition is not None else stages.transition,
        pretokenize if pretokenize is not None else (init.pattern if stages else "superbpe"),
        max_words if max_words is not None else (stages.max_words if stages else DEFAULT_MAX_WORDS))


def count_identity(files, pattern: str | None) -> dict:
    """What a checkpointed count is: its pattern and its files (as :meth:`TrainSpec.identity`)."""
    return {"pattern": pattern, **corpus_identity(files)}


def _refuse_with_superbpe(spec: TrainSpec) -> None:
    # A checkpoint holds one table and one run of rules; SuperBPE counts twice and learns
    # in two stages, which its layout and identity do not tell apart yet. The memory
    # limit's estimates are calibrated on stage-1 engines only (docs/design.md §4.5).
    # count_memory works: each stage's count keeps within it (the same tables).
    if spec.checkpoint is not None:
        raise ValueError("checkpoint: not available with superbpe (SuperBPE reads the corpus twice)")
    if spec.max_memory is not None:
        parse_memory(spec.max_memory)
        raise ValueError("max_memory: not supported with superbpe yet")


def _check_transition(spec: TrainSpec) -> None:
    if spec.superbpe.transition - BYTE_TOKENS >= spec.merges:
        raise ValueError(transition_too_large(spec.superbpe.transition, spec.merges,
                                              spec.vocab_size, len(spec.special_tokens)))


def init_model(init) -> ByteModel | None:
    """The byte model that ``init`` gives (loaded when it is a path), or None."""
    if init is None or isinstance(init, ByteModel):
        return init
    if isinstance(init, (str, os.PathLike)):
        init = load(init)
    model = init.model if isinstance(init, Tokenizer) else init
    if not isinstance(model, ByteModel):
        raise TypeError(f"init must be a Tokenizer, ByteModel or model path, got {type(init).__name__}")
    return model


__all__ = ["CheckpointOptions", "CountOptions", "DEFAULT_PATTERN", "ReadOptions",
           "SuperBPEOptions", "TrainSpec"]
