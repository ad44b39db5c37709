"""Extending a sentencepiece BPE model, keeping every ID: :func:`extend_sentencepiece`.

It reads like training (:mod:`bytepair.training.sentencepiece`), with the base in charge:

1. the lines are normalised by the base's own normaliser (its character map and flags) and
   cut into words as its trainer spec says; its meta pieces (unknown, control, user-defined,
   byte pieces) found in the text become boundaries (:mod:`bytepair.counts.spm_words`);
2. the characters within ``character_coverage`` of the new text that the base lacks become
   new pieces, first (:func:`bytepair.learn.spm_chars.required_chars`); any other character
   the base lacks stays what the base makes of it (byte pieces, or unknown) and never merges;
3. each word starts as the base encodes it (:meth:`SentencePieceModel.segment_words`);
4. spm_train's merge loop goes on from there (:func:`bytepair.learn.spm_loop.learn_from_pieces`),
   under the base's own piece-validity rules, a pair that spells a base piece being dropped;
5. the new pieces are appended after the base's last ID, their scores going on below its
   lowest, so that sentencepiece's encoder applies every base piece before any new one.
"""

from __future__ import annotations

import os
import struct
from dataclasses import fields
from typing import Callable, Iterable, Mapping

from bytepair._util.validate import check_int
from bytepair.counts.spm_words import count_sentencepiece_words
from bytepair.learn.spm_chars import char_counts, required_chars
from bytepair.learn.spm_loop import learn_from_pieces
from bytepair.learn.spm_pieces import UNKNOWN_CHAR, PieceRules
from bytepair.model.spm_model import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, SentencePieceModel
from bytepair.split.spm_text import TextRules

#: spm_train's default character coverage, for a base whose trainer spec does not say.
DEFAULT_COVERAGE = 0.9995


def sentencepiece_base(base: str | os.PathLike | SentencePieceModel) -> SentencePieceModel:
    """The base as a model file holds it: a path is read (a unigram, word or char model is
    refused in one line), a model in memory goes through its file's bytes, so that its
    trainer and normaliser specs read the same either way."""
    from bytepair.formats.spm_file import load_sentencepiece, model_proto, read_sentencepiece

    if isinstance(base, SentencePieceModel):
        return read_sentencepiece(model_proto(base), "base")
    return load_sentencepiece(base)


def text_rules(model: SentencePieceModel) -> TextRules:
    """How the base turns a line into words: its normaliser, its trainer's word options."""
    spec, normalizer = model.trainer_spec, model.normalizer
    if not normalizer.get("escape_whitespaces", True):
        raise ValueError("base: its normaliser leaves spaces unescaped (escape_whitespaces false), "
                         "which sentencepiece's BPE trainer does not train with")
    charsmap = normalizer.get("precompiled_charsmap", b"")
    return TextRules(
        normalization_rule_name=normalizer.get("name", "identity") if charsmap else "identity",
        add_dummy_prefix=normalizer.get("add_dummy_prefix", True),
        remove_extra_whitespaces=normalizer.get("remove_extra_whitespaces", True),
        treat_whitespace_as_suffix=spec.get("treat_whitespace_as_suffix", False),
        allow_whitespace_only_pieces=spec.get("allow_whitespace_only_pieces", False),
        split_by_whitespace=spec.get("split_by_whitespace", True),
        max_sentence_length=spec.get("max_sentence_length", 4192),
        meta_pieces=tuple(piece for piece, _, kind in model.pieces
                          if kind in (UNKNOWN, CONTROL, USER_DEFINED, BYTE)),
        precompiled_charsmap=charsmap)


def piece_rules(model: SentencePieceModel) -> PieceRules:
    """The base's piece-validity rules, from its trainer spec (spm_train's defaults where unset)."""
    defaults = PieceRules()
    return PieceRules(**{f.name: model.trainer_spec.get(f.name, getattr(defaults, f.name))
                         for f in fields(PieceRules)})


def new_characters(words: Mapping[str, int], model: SentencePieceModel, coverage: float) -> list[str]:
    """The characters spm_train would keep from ``words`` under ``coverage`` (count desc, code
    point) that are not pieces of the base."""
    kept = required_chars(words, coverage, char_counts(words))
    return [char for char, _ in kept if char not in model.ids]


def as_base_pieces(words: Mapping[str, int], model: SentencePieceModel,
                   usable: set[str], compiled: bool | None = None) -> dict[tuple[str, ...], int]:
    """Each word as the base encodes it, a piece outside ``usable`` (the base's normal pieces
    and the new characters) written U+2585: a position that never merges. O(characters x log).
    ``compiled``: the compiled encoder segments the words (default: when built)."""
    names = [piece if piece in usable else UNKNOWN_CHAR for piece, _, _ in model.pieces]

    def outside(at: int) -> str:
        char = chr(-1 - at)
        return char if char in usable else UNKNOWN_CHAR

    ids, offsets = model.segment_words(list(words), compiled=compiled)
    out: dict[tuple[str, ...], int] = {}
    for k, count in enumerate(words.values()):
        pieces = tuple([names[at] if at >= 0 else outside(at) for at in ids[offsets[k]:offsets[k + 1]]])
        out[pieces] = out.get(pieces, 0) + count
    return out


def scores_below(lowest: float, count: int) -> list[float]:
    """``count`` scores going down by 1 from below ``lowest``, each distinct as a 32-bit float
    (the ``.model`` file's precision)."""
    scores = [lowest - 1.0 - i for i in range(count)]
    stored = [struct.unpack("f", struct.pack("f", score))[0] for score in scores]
    if any(a <= b for a, b in zip([lowest] + stored, stored)):
        raise ValueError(f"base: its lowest score ({lowest}) leaves no room for {count} distinct "
                         f"lower scores in a 32-bit float")
    return stored


def extend_sentencepiece(base: str | os.PathLike | SentencePieceModel,
                         corpus: str | os.PathLike | Iterable[str | os.PathLike], *, vocab_size: int,
                         character_coverage: float | None = None, workers: int = 1,
                         report: Callable[[str], object] | None = None,
                         compiled: bool | None = None) -> SentencePieceModel:
    """A sentencepiece BPE ``base`` extended to ``vocab_size`` pieces on ``corpus``, keeping
    every piece of the base at its ID, with its score and type.

    ``base``: a ``.model`` file (BPE; other model types are refused) or a
    :class:`SentencePieceModel`. ``corpus``: a text file or a list of them, one sentence a
    line. ``vocab_size``: the whole vocabulary afterwards. ``character_coverage``: which
    characters of the corpus the base lacks become pieces (default: the base's own, as its
    trainer spec says; 0 adds none). ``workers``: processes counting the lines. ``report``:
    called with a message (a ``str``) when lines were skipped as too long or the loop ran out
    of pairs before ``vocab_size``. ``compiled``: the compiled encoder and loop (default: when
    built).
    """
    model = sentencepiece_base(base)
    check_int(vocab_size, "vocab_size", minimum=1)
    if vocab_size <= len(model):
        raise ValueError(f"vocab_size: {vocab_size} must be larger than the {len(model)} pieces "
                         f"the base has")
    coverage = (model.trainer_spec.get("character_coverage", DEFAULT_COVERAGE)
                if character_coverage is None else character_coverage)
    if not 0.0 <= coverage <= 1.0:
        raise ValueError(f"character_coverage: {coverage} is outside [0, 1]")
    paths = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    rules = text_rules(model)
    words, skipped = count_sentencepiece_words(paths, rules, workers=workers)
    say = report or (lambda message: None)
    if skipped:
        say(f"skipped {skipped} lines longer than max_sentence_length "
            f"({rules.max_sentence_length} bytes), as spm_train does")
    chars = new_characters(words, model, coverage)
    room = vocab_size - len(model) - len(chars)
    if room < 0:
        raise ValueError(f"vocab_size: {vocab_size} leaves room for {vocab_size - len(model)} new "
                         f"pieces, and the corpus has {len(chars)} characters within "
                         f"character_coverage {coverage:g} that the base lacks; raise it or lower "
                         f"character_coverage")
    usable = {piece for piece, _, kind in model.pieces if kind == NORMAL} | set(chars)
    segmented = as_base_pieces(words, model, usable, compiled)
    words.clear()
    merged = learn_from_pieces(segmented, room, piece_rules(model), taken=model.ids, compiled=compiled)
    new = chars + merged
    if len(new) < vocab_size - len(model):
        say(f"stopped at {len(model) + len(new):,} of {vocab_size:,} pieces: no pair is left to merge")
    scores = scores_below(min(score for _, score, _ in model.pieces), len(new))
    pieces = model.pieces + [(piece, score, NORMAL) for piece, score in zip(new, scores)]
    trainer = dict(model.trainer_spec, vocab_size=len(pieces))
    return SentencePieceModel(pieces, normalizer=model.normalizer, trainer_spec=trainer,
                              skipped_lines=skipped)
