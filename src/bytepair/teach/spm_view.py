"""The viewer's answers for a sentencepiece BPE model: its IDs and pieces as sentencepiece
encodes the text.

Its pieces are pieces of the normalised text (``▁`` for a space, the dummy ``▁`` first),
not spans of the text's bytes, so such a model is shown alone: its tokens cannot be laid
beside another model's. It has no merge rules, so no merge tree.
"""

from __future__ import annotations

from array import array

from bytepair.model.spm_model import BYTE, CONTROL, UNKNOWN, SentencePieceModel

#: Why a sentencepiece model is not compared with other models.
ALONE = ("a sentencepiece model is shown alone: its pieces are of the normalised text "
         "('\u2581' for a space), not spans of the text's bytes")
#: Why it has no merge tree.
NO_TREE = "a sentencepiece model's pieces carry scores, not merge rules: it has no merge tree"


def is_sentencepiece(model) -> bool:
    return isinstance(model, SentencePieceModel)


def info(name: str, model: SentencePieceModel) -> dict:
    """The model's entry of the viewer's ``info``: its control and unknown pieces as its
    special tokens."""
    return {"name": name, "vocab_size": len(model), "merges": 0, "kind": "sentencepiece",
            "special_tokens": special_tokens(model), "superbpe_transition": None}


def special_tokens(model: SentencePieceModel) -> dict[str, int]:
    return {piece: at for at, (piece, _, kind) in enumerate(model.pieces)
            if kind in (CONTROL, UNKNOWN)}


def ids(model: SentencePieceModel, text: str) -> array:
    """The IDs of ``text``, as ``SentencePieceProcessor.encode`` gives them."""
    return array("H" if len(model) <= 1 << 16 else "I", model.encode(text))


def piece(model: SentencePieceModel, token: int) -> tuple[str, str, int]:
    """How a piece is shown: its text (a byte piece's byte in hex, ``41`` for ``<0x41>``, as
    the viewer shows bytes), its kind (``"bytes"`` for a byte piece, ``"special"`` for control
    and unknown pieces, else ``"text"``) and its length in UTF-8 bytes."""
    text, _, kind = model.pieces[token]
    if kind == BYTE:
        return text[3:5], "bytes", 1
    return text, "special" if kind in (CONTROL, UNKNOWN) else "text", len(text.encode("utf-8"))
