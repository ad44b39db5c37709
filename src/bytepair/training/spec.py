"""What to train: :class:`TrainSpec`, every option of :func:`bytepair.train`, checked once.

A spec is frozen and validated when it is made: a bad option fails with one
line naming it before any file is opened. Options that travel together are
small groups of their own (:class:`ReadOptions`, :class:`CountOptions`,
:class:`SuperBPEOptions`, :class:`ParityOptions`, :class:`CheckpointOptions`). A spec also knows
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
from typing import Any, Mapping, Sequence

from bytepair._util.errors import Advice, ArgumentError
from bytepair._util.validate import (MAX_BYTE_MERGES, check_int, check_size, check_special_tokens,
                                     merges_for_vocab_size, parse_memory)
from bytepair.read.corpus import Files
from bytepair.split.pretokenize import PATTERNS, resolve_pattern  # noqa: F401 (PATTERNS: doctests)
from bytepair.counts.checkpoint import corpus_identity
from bytepair.counts.piece_counts import PieceCounts
from bytepair.learn.rules import BYTE_TOKENS
from bytepair.learn.parity_rules import VARIANTS
from bytepair.learn.ties import check_ties
from bytepair.learn.superbpe import DEFAULT_MAX_WORDS, transition_too_large
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.training.defaults import DEFAULT_PATTERN

@dataclass(frozen=True)
class ReadOptions:
    """How files hold documents (see :class:`bytepair.Files`): ``per_line`` (each line of a
    text file is a document), ``jsonl_field`` (the field of JSON Lines records that holds the
    text) and ``text_column`` (the string column of Parquet files)."""

    per_line: bool = False
    jsonl_field: str | None = None
    text_column: str | None = None

    def as_keywords(self) -> dict:
        """The options as :class:`bytepair.Files` takes them, by name."""
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
                           check_size(self.transition, "superbpe", minimum=BYTE_TOKENS))
        object.__setattr__(self, "max_words", check_int(self.max_words, "max_words", minimum=1))


@dataclass(frozen=True)
class ParityOptions:
    """Parity-aware BPE (:mod:`bytepair.learn.parity`, docs/parity.md): ``variant`` ``"base"``
    or ``"window"``, and either ``dev`` (each language's parallel dev text, anything a corpus
    may be) or ``ratio`` (each language's target compression); ``global_merges`` rules first
    from all languages together; ``window``: no language wins more than ``alpha / languages``
    of the last ``window_size`` rules. The languages themselves are the corpus's keys, checked
    against ``dev`` or ``ratio`` by :meth:`languages`.

    >>> ParityOptions("base", ratio={"en": 1, "hi": 2.5}).ratio
    {'en': 1.0, 'hi': 2.5}
    >>> ParityOptions("base", ratio={"en": 0})
    Traceback (most recent call last):
    ValueError: ratio: en's target must be a positive finite number, got 0
    """

    variant: str
    dev: Any = None
    ratio: Any = None
    global_merges: int = 0
    window_size: int = 100
    alpha: float = 2.0

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"parity must be 'base' or 'window', got {self.variant!r}")
        if (self.dev is None) == (self.ratio is None):
            raise ValueError("parity: give dev (parallel text per language) or ratio (a target "
                             "per language), one of them")
        if self.dev is not None and not isinstance(self.dev, Mapping):
            raise ValueError("dev: a dict of languages to their dev text")
        if self.ratio is not None:
            if not isinstance(self.ratio, Mapping):
                raise ValueError("ratio: a dict of languages to their target")
            object.__setattr__(self, "ratio", {language: _positive("ratio", value, f"{language}'s target")
                                               for language, value in self.ratio.items()})
        check_int(self.global_merges, "global_merges", minimum=0)
        check_int(self.window_size, "window_size", minimum=1)
        object.__setattr__(self, "alpha", _positive("alpha", self.alpha))

    def languages(self, corpus: Any) -> list[str]:
        """The languages of ``corpus`` (a dict of languages to their text), each with its dev
        text or ratio; anything else is refused in one line."""
        if not isinstance(corpus, Mapping) or isinstance(corpus, PieceCounts) or not corpus:
            raise ValueError("corpus: with parity, a dict of languages to their text, "
                             "e.g. {'en': 'en.txt', 'hi': 'hi.txt'}")
        languages = list(corpus)
        for language in languages:
            if not isinstance(language, str) or not language:
                raise ValueError(f"corpus: a language is named by a non-empty string, got {language!r}")
        name, given = ("dev", self.dev) if self.dev is not None else ("ratio", self.ratio)
        missing = [language for language in languages if language not in given]
        if missing:
            raise ValueError(f"{name}: missing for {', '.join(map(str, missing))} (every training "
                             f"language needs one)")
        extra = [language for language in given if language not in languages]
        if extra:
            raise ValueError(f"{name}: {', '.join(map(str, extra))} is not a training language")
        return languages


def parity_options(variant: str | None, dev=None, ratio=None, global_merges: int = 0,
                   window_size: int = 100, alpha: float = 2.0) -> ParityOptions | None:
    """:class:`ParityOptions` from :func:`bytepair.train`'s keywords; None without ``variant``,
    when a parity option given alone is refused (naming it).

    >>> parity_options(None, window_size=50)
    Traceback (most recent call last):
    ValueError: window_size: a parity option; give parity='base' or 'window' with it
    """
    if variant is None:
        for name, value, default in (("dev", dev, None), ("ratio", ratio, None),
                                     ("global_merges", global_merges, 0),
                                     ("window_size", window_size, 100), ("alpha", alpha, 2.0)):
            if value is not default and value != default:
                raise ValueError(f"{name}: a parity option; give parity='base' or 'window' with it")
        return None
    return ParityOptions(variant, dev, ratio, global_merges, window_size, alpha)


def check_not_languages(corpus) -> None:
    """Refuse a dict of languages where no parity options say what to do with it."""
    if isinstance(corpus, Mapping) and not isinstance(corpus, PieceCounts):
        raise ValueError("corpus: a dict of languages is for parity-aware training; give "
                         "parity='base' or 'window'")


def _positive(name: str, value, what: str | None = None) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
            or value == float("inf")):
        raise ValueError(f"{name}: {what} must be a positive finite number, got {value!r}" if what
                         else f"{name} must be a positive finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class CheckpointOptions:
    """A ``directory`` that keeps a run's progress; ``resume`` continues the run it holds."""

    directory: str | os.PathLike
    resume: bool = False


@dataclass(frozen=True)
class TrainSpec:
    """Everything :func:`bytepair.train` takes, checked once (see there for each option).

    ``vocab_size``, ``merges``, ``pretokenize``, ``special_tokens``, ``min_frequency``,
    ``init``, ``ties``, ``max_memory`` and ``progress`` are :func:`bytepair.train`'s keywords
    of the same names; the groups hold the others: ``reading`` (:class:`ReadOptions`),
    ``counting`` (:class:`CountOptions`), ``superbpe`` (:class:`SuperBPEOptions` or None),
    ``parity`` (:class:`ParityOptions` or None), ``checkpoint`` (:class:`CheckpointOptions`
    or None).

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
    parity: ParityOptions | None = None
    ties: str | None = "bytepair"
    checkpoint: CheckpointOptions | None = None
    max_memory: int | str | None = None
    progress: bool | None = None
    pattern: str | None = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "ties", check_ties(self.ties))
        if self.parity is not None:
            _refuse_with_parity(self)
        if self.ties == "tokenizers" and self.superbpe is not None:
            raise ArgumentError("superbpe", ": ", Advice("ties='tokenizers'"), " reproduces "
                                "BpeTrainer, which has no SuperBPE stage")
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
        merges = check_size(merges, "merges", maximum=MAX_BYTE_MERGES)
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
    def continuing(cls, model: Tokenizer | ByteModel | str | os.PathLike, **options: Any) -> TrainSpec:
        """A spec that goes on from ``model``: its pattern, and for a SuperBPE model its stages
        (transition, stage-2 pattern, word cap), unless ``options`` (the spec's fields) say
        otherwise.

        >>> from bytepair.training.api import trainer_for
        >>> start = trainer_for(TrainSpec(merges=5)).fit(["abab cdcd"] * 3)
        >>> TrainSpec.continuing(start, merges=8).pattern == start.pattern
        True
        """
        model = init_model(model)
        if options.get("superbpe") is None:
            options["superbpe"] = superbpe_options(model)
        return cls(init=model, **options)

    def identity(self, corpus: PieceCounts | Files | Mapping, pattern: str | None = None,
                 dev: Mapping | None = None) -> dict:
        """What a checkpoint's run is, to compare with a resumed one: the ``pattern`` (default:
        the spec's), the options that shape the rules, and the ``corpus``
        (:class:`bytepair.Files`: the files and how they are read) or the count table that
        stands for it (a digest of its pieces); with ``parity``, ``corpus`` and ``dev`` are
        dicts of languages to those."""
        import hashlib  # at first use: its OpenSSL binding is slow to import

        pattern = self.pattern if pattern is None else pattern
        init_rules = [[m.left, m.right] for m in self.init.merges] if self.init is not None else []
        init = hashlib.sha256(repr(init_rules).encode()).hexdigest() if init_rules else None
        identity = {"pattern": pattern, "min_frequency": self.min_frequency, "init": init}
        if self.ties != "bytepair":  # the default is left out: older checkpoints stay valid
            identity["ties"] = self.ties
        if self.parity is None:
            return {**identity, **_source_identity(corpus)}
        options = {field.name: getattr(self.parity, field.name)
                   for field in dataclasses.fields(self.parity) if field.name != "dev"}
        identity.update(parity=options, languages={language: _source_identity(source)
                                                   for language, source in corpus.items()})
        if dev is not None:
            identity["dev"] = {language: _source_identity(source) for language, source in dev.items()}
        return identity


def _source_identity(corpus: PieceCounts | Files) -> dict:
    """The files of a corpus (:func:`corpus_identity`), or a digest of a count table's pieces."""
    if not isinstance(corpus, PieceCounts):
        return corpus_identity(corpus)
    import hashlib  # at first use: its OpenSSL binding is slow to import

    digest = hashlib.sha256()
    for piece, number in sorted(corpus.items()):
        digest.update(len(piece).to_bytes(8, "little") + piece + number.to_bytes(8, "little"))
    return {"counts": digest.hexdigest()}


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


def _refuse_with_parity(spec: TrainSpec) -> None:
    # Parity-aware training has no second stage yet.
    if spec.superbpe is not None:
        raise ArgumentError("superbpe", ": not available with parity")


def _refuse_with_superbpe(spec: TrainSpec) -> None:
    # A checkpoint holds one table and one run of rules; SuperBPE counts twice and learns
    # in two stages, which its layout and identity do not tell apart yet. The memory
    # limit's estimates are calibrated on stage-1 engines only (docs/design.md §4.5).
    # count_memory works: each stage's count keeps within it (the same tables).
    if spec.checkpoint is not None:
        raise ArgumentError("checkpoint", ": not available with superbpe (SuperBPE reads the "
                            "corpus twice)")
    if spec.max_memory is not None:
        parse_memory(spec.max_memory)
        raise ArgumentError("max_memory", ": not supported with superbpe yet")


def _check_transition(spec: TrainSpec) -> None:
    if spec.superbpe.transition - BYTE_TOKENS >= spec.merges:
        raise transition_too_large(spec.superbpe.transition, spec.merges, spec.vocab_size,
                                   len(spec.special_tokens))


def init_model(init) -> ByteModel | None:
    """The byte model that ``init`` gives (loaded when it is a path), or None."""
    if init is None or isinstance(init, ByteModel):
        return init
    if isinstance(init, (str, os.PathLike)):
        from bytepair.formats.load import load  # here: counting needs no formats

        init = load(init)
    model = init.model if isinstance(init, Tokenizer) else init
    if not isinstance(model, ByteModel):
        raise TypeError(f"init must be a Tokenizer, ByteModel or model path, got {type(init).__name__}")
    return model


__all__ = ["CheckpointOptions", "CountOptions", "DEFAULT_PATTERN", "ParityOptions",
           "ReadOptions", "SuperBPEOptions", "TrainSpec"]
