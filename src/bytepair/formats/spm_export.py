"""A sentencepiece BPE model as a Hugging Face ``tokenizer.json`` (``tokenizers``, ``LlamaTokenizerFast``).

* **Normaliser:** sentencepiece's precompiled character map (``Precompiled``; none for
  ``identity``), then extra spaces removed when the model removes them.
  Then ``▁`` put first (the dummy prefix; last with ``treat_whitespace_as_suffix``) and
  written for each space, as ``Prepend`` (a ``Replace`` of the end) and ``Replace``
  (``Metaspace`` would not put a second ``▁`` before a leading space); no pre-tokenizer:
  sentencepiece encodes the whole sentence.
* **Model:** BPE with the pieces' IDs, byte fallback as the model has it, runs of unknown
  characters fused, and merges made from the pieces: each piece's splits into two pieces,
  ranked by the piece's ID (its score), so the highest-scoring piece is merged first.
* **Added tokens:** control and unknown pieces (special), user-defined symbols (matched in
  the raw text, as sentencepiece does).
"""

from __future__ import annotations

import base64
import json
import os

from bytepair._util.atomic import write_atomically
from bytepair.model.spm_model import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, SentencePieceModel


def _merges(model: SentencePieceModel) -> list[list[str]]:
    ids = model.ids
    ranked = []
    for at, (piece, _, kind) in enumerate(model.pieces):
        if kind != NORMAL or len(piece) < 2:
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in ids and right in ids:
                ranked.append((at, ids[left], ids[right], left, right))
    ranked.sort()
    return [[left, right] for *_, left, right in ranked]


def _normalizer(model: SentencePieceModel) -> dict:
    steps = []
    charsmap = model.normalizer.get("precompiled_charsmap", b"")
    if charsmap:
        steps.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    if model.flag("remove_extra_whitespaces"):
        steps.append({"type": "Replace", "pattern": {"Regex": "^ +| +$"}, "content": ""})
        steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    if model.flag("add_dummy_prefix") and model.whitespace_suffix:
        steps.append({"type": "Replace", "pattern": {"Regex": "$"}, "content": "\u2581"})
    elif model.flag("add_dummy_prefix"):
        steps.append({"type": "Prepend", "prepend": "\u2581"})
    steps.append({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"})
    return {"type": "Sequence", "normalizers": steps}


def tokenizer_json(model: SentencePieceModel) -> dict:
    """The ``tokenizer.json`` document of ``model`` (a dict, ready for ``json.dumps``)."""
    unk = model.pieces[model.unk_id][0] if model.unk_id >= 0 else None
    added = [{"id": at, "content": piece, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": kind != USER_DEFINED}
             for at, (piece, _, kind) in enumerate(model.pieces)
             if kind in (CONTROL, UNKNOWN, USER_DEFINED)]
    decoders = [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}]
    if any(kind == BYTE for _, _, kind in model.pieces):
        decoders.append({"type": "ByteFallback"})
    decoders.append({"type": "Fuse"})
    if model.flag("add_dummy_prefix"):
        decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": _normalizer(model),
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {"type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": model.byte_fallback,
                  "ignore_merges": False,
                  "vocab": {piece: at for at, (piece, _, _) in enumerate(model.pieces)},
                  "merges": _merges(model)},
    }


def sentencepiece_roles(model: SentencePieceModel, *, eos: str | None = None,
                        bos: str | None = None, pad: str | None = None,
                        unk: str | None = None) -> dict[str, str]:
    """Role (``"eos_token"``, ...) -> piece, for ``transformers``.

    By default the unknown piece is ``unk_token``, and the trainer spec's bos, eos and pad
    pieces (``<s>``, ``</s>``, ``<pad>`` unless trained otherwise) take their roles when the
    model has them as control pieces. A piece named for a role must be a control, unknown
    or user-defined piece (ValueError naming the role otherwise).
    """
    spec = model.trainer_spec
    named = {piece: kind for piece, _, kind in model.pieces
             if kind in (CONTROL, UNKNOWN, USER_DEFINED)}
    defaults = {"bos": spec.get("bos_piece", "<s>"), "eos": spec.get("eos_piece", "</s>"),
                "pad": spec.get("pad_piece", "<pad>"),
                "unk": model.pieces[model.unk_id][0] if model.unk_id >= 0 else None}
    given = {"bos": bos, "eos": eos, "unk": unk, "pad": pad}
    roles = {}
    for role in ("bos", "eos", "unk", "pad"):
        piece = given[role]
        if piece is None:
            piece = defaults[role]
            if named.get(piece) not in (CONTROL, UNKNOWN):
                continue
        elif piece not in named:
            known = ", ".join(map(repr, named)) or "none"
            raise ValueError(f"{role}: {piece!r} is not a control, unknown or user-defined piece "
                             f"of this model (they are: {known})")
        roles[f"{role}_token"] = piece
    return roles


def export_sentencepiece(model: SentencePieceModel, path: str | os.PathLike) -> None:
    """Write ``model`` as a ``tokenizer.json`` to ``path``, whole or not at all."""
    write_atomically(path, json.dumps(tokenizer_json(model), ensure_ascii=False, indent=1))
