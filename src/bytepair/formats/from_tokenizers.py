"""Moving from Hugging Face ``tokenizers``: its ``BpeTrainer`` settings in, its file spelling out.

:func:`train_options` reads a ``tokenizers.Tokenizer`` (the untrained one that
``train``/``train_from_iterator`` would fill) and its ``BpeTrainer``, and
returns the keyword arguments of :func:`bytepair.train` that give the same
``tokenizer.json`` vocabulary and merges, or refuses, in one line
(:class:`ImportRefused`), the first setting that bytepair does not reproduce.

:func:`like_pipeline` reads the same Tokenizer (or its ``tokenizer.json``,
trained or not) for the export: every key of the file but ``model`` and
``added_tokens``, as the user's pipeline spells it
(``to_tokenizers_json(..., like=...)``), and :func:`bpe_trainer_pipeline` the
keys that ``tokenizers`` writes for the documented pipeline (the export of a
model numbered as ``BpeTrainer`` numbers, without ``like``).
docs/from-tokenizers.md is the guide.
"""

from __future__ import annotations

import json
import os

from bytepair._util.errors import parts_of
from bytepair.formats.common import (ImportRefused, LikeRefused, as_tokenizer, bytes_to_unicode,
                                     check_decoder, check_normalizer, check_post_processor,
                                     read_pattern)
from bytepair.learn.ties import tokenizers_ids
from bytepair.split.dialects import hf_pattern
from bytepair.split.pretokenize import PATTERNS

#: The characters of ``pre_tokenizers.ByteLevel.alphabet()``: one per byte.
BYTE_LEVEL_ALPHABET = frozenset(bytes_to_unicode().values())


def train_options(tokenizer, trainer, *, trust_pattern: bool = False) -> dict:
    """``bytepair.train`` keywords that match ``trainer`` (a ``tokenizers.trainers.BpeTrainer``)
    training ``tokenizer`` (a ``tokenizers.Tokenizer``): ``vocab_size``, ``pretokenize``,
    ``special_tokens``, ``min_frequency`` and ``ties="tokenizers"``.

    Refused, each in one line naming it: a normalizer, a pre-tokenizer other
    than ``ByteLevel`` (``add_prefix_space=False``) or a ``Split`` (isolated)
    then ``ByteLevel(use_regex=False)``, a model that is not a fresh BPE, added
    tokens already in ``tokenizer`` (training would cut them out of the text),
    and the trainer's ``initial_alphabet`` other than all of
    ``ByteLevel.alphabet()``, ``limit_alphabet`` below 256,
    ``continuing_subword_prefix``, ``end_of_word_suffix``, ``max_token_length``
    and special tokens with ``lstrip``, ``rstrip``, ``single_word`` or
    ``normalized``. O(1).

    >>> from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    >>> tok = Tokenizer(models.BPE())
    >>> tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    >>> trainer = trainers.BpeTrainer(vocab_size=1000, special_tokens=["<s>"],
    ...                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    >>> from bytepair.split.pretokenize import PATTERNS
    >>> train_options(tok, trainer)["pretokenize"] == PATTERNS["gpt2"]
    True
    >>> train_options(tok, trainers.BpeTrainer(vocab_size=1000))
    Traceback (most recent call last):
    ...
    bytepair.formats.common.ImportRefused: BpeTrainer initial_alphabet holds 0 of the 256 byte-level characters; BpeTrainer then numbers only the characters it sees, and bytepair always has all 256 bytes (give initial_alphabet=ByteLevel.alphabet())
    """
    _check_trainer(trainer)
    data = json.loads(tokenizer.to_str())
    check_normalizer(data.get("normalizer"))
    model = data.get("model") or {}
    if model.get("type") != "BPE" or model.get("vocab") or model.get("merges"):
        raise ImportRefused("the tokenizer's model must be a fresh models.BPE() (no vocabulary, "
                            "no merges): BpeTrainer replaces it, bytepair learns from bytes")
    _check_bpe_settings(model)
    if data.get("added_tokens"):
        raise ImportRefused(f"the tokenizer already has {len(data['added_tokens'])} added "
                            f"token(s), which training cuts out of the text; give them to "
                            f"BpeTrainer(special_tokens=...) instead")
    pattern = read_pattern(data.get("pre_tokenizer"), trust_pattern)
    specials = [token.content for token in trainer.special_tokens]
    return dict(vocab_size=trainer.vocab_size, pretokenize=pattern, special_tokens=specials,
                min_frequency=max(1, trainer.min_frequency), ties="tokenizers")


def _check_bpe_settings(model: dict, prefix: str = "") -> None:
    """Refuse the ``models.BPE`` settings that BpeTrainer keeps and bytepair's model lacks."""
    for feature in ("dropout", "continuing_subword_prefix", "end_of_word_suffix", "unk_token"):
        if model.get(feature) not in (None, ""):
            raise ImportRefused(f"{prefix}models.BPE {feature}={model[feature]!r}: bytepair's "
                                f"tokenizer.json has none")
    if model.get("byte_fallback") or model.get("fuse_unk") or model.get("ignore_merges"):
        raise ImportRefused(f"{prefix}models.BPE byte_fallback, fuse_unk or ignore_merges: "
                            f"bytepair's tokenizer.json sets none")


#: The keys of a ``tokenizer.json`` that :func:`like_pipeline` takes from the user's pipeline;
#: bytepair writes ``added_tokens`` and ``model``.
PIPELINE_KEYS = ("version", "truncation", "padding", "normalizer", "pre_tokenizer",
                 "post_processor", "decoder")


def like_pipeline(like, pattern: str | None) -> dict:
    """The keys of ``like``'s ``tokenizer.json`` other than ``model`` and ``added_tokens``
    (:data:`PIPELINE_KEYS`, as ``like`` spells them), checked to split text into the pieces of
    ``pattern`` (a bytepair model's pattern) and to encode as bytepair does.

    ``like`` is a ``tokenizers.Tokenizer`` (untrained or trained), the path of its
    ``tokenizer.json`` or that file parsed (a dict). Its model's vocabulary and merges and
    its added tokens are not read. Refused, in one line starting ``like:``
    (:class:`ImportRefused`): a pre-tokenizer that splits otherwise than ``pattern`` or
    that ``train_options`` refuses (only ``ByteLevel``, with or without its regex, or a
    ``Split`` then ``ByteLevel(use_regex=False)``), a normalizer, truncation or padding, a
    post-processor that adds tokens, a decoder other than ``ByteLevel``, a model other than
    BPE or with settings bytepair's has not (dropout, ...). O(size of ``like``).

    >>> from tokenizers import Tokenizer, models, pre_tokenizers
    >>> hf = Tokenizer(models.BPE())
    >>> hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    >>> like_pipeline(hf, PATTERNS["gpt2"])["pre_tokenizer"]["use_regex"]
    True
    >>> like_pipeline(hf, None)
    Traceback (most recent call last):
    ...
    bytepair.formats.common.LikeRefused: like: the pre_tokenizer splits with GPT-2's pattern (ByteLevel's regex), the model with none (its pieces are whole documents): the file would encode otherwise
    """
    data = _read_like(like)
    try:
        missing = [key for key in (*PIPELINE_KEYS, "model") if key not in data]
        if missing:
            raise ImportRefused(f"the tokenizer.json has no {missing[0]!r}")
        check_normalizer(data["normalizer"])
        for setting in ("truncation", "padding"):
            if data[setting] is not None:
                raise ImportRefused(f"{setting} is set: it changes the IDs that encoding returns")
        check_post_processor(data["post_processor"])
        check_decoder(data["decoder"])
        model = data["model"]
        if not isinstance(model, dict) or model.get("type") != "BPE":
            kind = model.get("type") if isinstance(model, dict) else model
            raise ImportRefused(f"the model is {kind!r}, not BPE")
        _check_bpe_settings(model)
        read = read_pattern(data["pre_tokenizer"], trust_pattern=True)
    except ImportRefused as exc:
        raise LikeRefused(": ", *parts_of(exc)) from None
    if read != pattern:
        raise LikeRefused(f": the pre_tokenizer splits with {_describe(read)}, the model "
                            f"with {_describe(pattern)}: the file would encode otherwise")
    return {key: data[key] for key in PIPELINE_KEYS}


def _read_like(like) -> dict:
    """``like`` as parsed ``tokenizer.json``: a Tokenizer's, a file's or the dict itself."""
    if isinstance(like, dict):
        data = like
    elif isinstance(like, (str, os.PathLike)):
        try:
            with open(like, encoding="utf-8") as file:
                data = json.load(file)
        except OSError as exc:
            raise LikeRefused(f": cannot read {os.fspath(like)!r}: "
                                f"{exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LikeRefused(f": {os.fspath(like)!r} is not a tokenizer.json (not JSON: "
                                f"{exc})") from None
    elif callable(getattr(like, "to_str", None)):
        data = json.loads(like.to_str())
    else:
        raise LikeRefused(f"must be a tokenizers.Tokenizer, the path of its tokenizer.json "
                            f"or that file parsed, got {type(like).__name__}")
    if not isinstance(data, dict):
        raise LikeRefused(f": the tokenizer.json is a JSON {type(data).__name__}, "
                            f"not an object")
    return data


def _describe(pattern: str | None) -> str:
    if pattern is None:
        return "none (its pieces are whole documents)"
    if pattern == PATTERNS["gpt2"]:
        return "GPT-2's pattern (ByteLevel's regex)"
    name = next((name for name, source in PATTERNS.items() if source == pattern), None)
    if name is not None:
        return f"the pattern {name!r}"
    return f"the regex {pattern[:60] + '...' if len(pattern) > 60 else pattern!r}"


def _hf_byte_level(use_regex: bool) -> dict:
    """``pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=...)`` as ``tokenizers`` saves it."""
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
            "use_regex": use_regex}


def bpe_trainer_pipeline(pattern: str | None) -> dict:
    """The keys other than ``model`` and ``added_tokens`` of the file that ``tokenizers`` saves
    after ``BpeTrainer`` training with the pipeline docs/from-tokenizers.md gives for ``pattern``
    and ``tok.decoder = decoders.ByteLevel()``: what :func:`bytepair.formats.export.tokenizers_json` writes for a
    tokenizer numbered as ``BpeTrainer`` numbers (``ties="tokenizers"``).

    GPT-2's pattern is ``ByteLevel(add_prefix_space=False)`` (its own regex), no pattern
    is ``ByteLevel`` without regex, any other a ``Split`` (isolated) then ``ByteLevel``
    without regex. The decoder is the one choice not made by training: no decoder would
    make ``decode`` return the byte-level characters (``"Ġthe"``), so it is
    ``decoders.ByteLevel()``, whose flags do not change decoding.

    >>> bpe_trainer_pipeline(None)["pre_tokenizer"]
    {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': False}
    """
    if pattern == PATTERNS["gpt2"]:
        pre_tokenizer = _hf_byte_level(True)
    elif pattern is None:
        pre_tokenizer = _hf_byte_level(False)
    else:
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": hf_pattern(pattern)}, "behavior": "Isolated",
             "invert": False},
            _hf_byte_level(False)]}
    return {"version": "1.0", "truncation": None, "padding": None, "normalizer": None,
            "pre_tokenizer": pre_tokenizer, "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True}}


def numbered_as_bpe_trainer(tokenizer) -> bool:
    """Whether ``tokenizer``'s IDs are ``BpeTrainer``'s: special tokens, the byte-level
    alphabet by character, then merged tokens (trained with ``ties="tokenizers"``, or read
    from such a file). O(V).
    """
    tokenizer = as_tokenizer(tokenizer)
    return tokenizer.ids == tokenizers_ids(len(tokenizer.model.merges),
                                           len(tokenizer.special_tokens))


def _check_trainer(trainer) -> None:
    if type(trainer).__name__ != "BpeTrainer":
        raise ImportRefused(f"the trainer is a {type(trainer).__name__}, not a BpeTrainer")
    alphabet = set(trainer.initial_alphabet)
    if alphabet != BYTE_LEVEL_ALPHABET:
        raise ImportRefused(
            f"BpeTrainer initial_alphabet holds {len(alphabet & BYTE_LEVEL_ALPHABET)} of the 256 "
            f"byte-level characters{' and others' if alphabet - BYTE_LEVEL_ALPHABET else ''}; "
            f"BpeTrainer then numbers only the characters it sees, and bytepair always has all "
            f"256 bytes (give initial_alphabet=ByteLevel.alphabet())")
    if trainer.limit_alphabet is not None and trainer.limit_alphabet < len(BYTE_LEVEL_ALPHABET):
        raise ImportRefused(f"BpeTrainer limit_alphabet={trainer.limit_alphabet}: it drops rare "
                            f"bytes, and bytepair keeps all 256")
    for setting in ("continuing_subword_prefix", "end_of_word_suffix"):
        if getattr(trainer, setting) not in (None, ""):
            raise ImportRefused(f"BpeTrainer {setting}={getattr(trainer, setting)!r}: bytepair's "
                                f"tokens are bytes, with no markers inside words")
    if trainer.max_token_length is not None:
        raise ImportRefused(f"BpeTrainer max_token_length={trainer.max_token_length}: bytepair "
                            f"does not cap the length of tokens")
    for index, token in enumerate(trainer.special_tokens):
        for flag in ("lstrip", "rstrip", "single_word", "normalized"):
            if getattr(token, flag):
                raise ImportRefused(f"BpeTrainer special_tokens[{index}] ({token.content!r}) has "
                                    f"{flag}=True; bytepair's special tokens are matched as "
                                    f"written")
