"""The bytepair training options that reproduce a Hugging Face ``BpeTrainer`` run.

:func:`train_options` reads a ``tokenizers.Tokenizer`` (the untrained one that
``train``/``train_from_iterator`` would fill) and its ``BpeTrainer``, and
returns the keyword arguments of :func:`bytepair.train` that give the same
``tokenizer.json`` vocabulary and merges, or refuses, in one line
(:class:`ImportRefused`), the first setting that bytepair does not reproduce.
docs/from-tokenizers.md is the guide.
"""

from __future__ import annotations

import json

from bytepair.formats.export import bytes_to_unicode
from bytepair.formats.imports import ImportRefused, _check_normalizer, _pattern

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
    bytepair.formats.imports.ImportRefused: BpeTrainer initial_alphabet holds 0 of the 256 byte-level characters; BpeTrainer then numbers only the characters it sees, and bytepair always has all 256 bytes (give initial_alphabet=ByteLevel.alphabet())
    """
    _check_trainer(trainer)
    data = json.loads(tokenizer.to_str())
    _check_normalizer(data.get("normalizer"))
    model = data.get("model") or {}
    if model.get("type") != "BPE" or model.get("vocab") or model.get("merges"):
        raise ImportRefused("the tokenizer's model must be a fresh models.BPE() (no vocabulary, "
                            "no merges): BpeTrainer replaces it, bytepair learns from bytes")
    for feature in ("dropout", "continuing_subword_prefix", "end_of_word_suffix", "unk_token"):
        if model.get(feature) not in (None, ""):
            raise ImportRefused(f"models.BPE {feature}={model[feature]!r}: bytepair's tokenizer.json "
                                f"has none")
    if model.get("byte_fallback") or model.get("fuse_unk") or model.get("ignore_merges"):
        raise ImportRefused("models.BPE byte_fallback, fuse_unk or ignore_merges: bytepair's "
                            "tokenizer.json sets none")
    if data.get("added_tokens"):
        raise ImportRefused(f"the tokenizer already has {len(data['added_tokens'])} added "
                            f"token(s), which training cuts out of the text; give them to "
                            f"BpeTrainer(special_tokens=...) instead")
    pattern = _pattern(data.get("pre_tokenizer"), trust_pattern)
    specials = [token.content for token in trainer.special_tokens]
    return dict(vocab_size=trainer.vocab_size, pretokenize=pattern, special_tokens=specials,
                min_frequency=max(1, trainer.min_frequency), ties="tokenizers")


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
