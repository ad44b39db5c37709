"""``encode``, ``decode`` and ``export`` of a sentencepiece BPE ``.model``
(:class:`bytepair.model.spm_model.SentencePieceModel`).

The IDs are sentencepiece's: ``encode`` prints what ``SentencePieceProcessor.encode``
gives for the text (byte fallback included), ``decode`` what its ``decode`` writes. An
option that means nothing for such a model is refused in one line naming it.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bytepair.model.spm_model import SentencePieceModel

#: Options of ``encode`` a sentencepiece model cannot take, and why.
ENCODE_REFUSED = {
    "--allow-special": "a sentencepiece model reads no control pieces from text (text such as "
                       "'<s>' is encoded as ordinary text; use --append for IDs after documents)",
    "--threads": "a sentencepiece model is encoded on one thread",
}
#: Options of ``decode`` a sentencepiece model cannot take, and why.
DECODE_REFUSED = {
    "--bytes": "a sentencepiece model decodes to text, as SentencePieceProcessor.decode does "
               "(byte pieces that are not UTF-8 become U+FFFD)",
}


def is_sentencepiece(model) -> bool:
    from bytepair.model.spm_model import SentencePieceModel

    return isinstance(model, SentencePieceModel)


def refuse(args, reasons: dict[str, str]) -> None:
    """One line naming the first option of ``reasons`` that ``args`` gives."""
    for option, why in reasons.items():
        if getattr(args, option.lstrip("-").replace("-", "_"), None) not in (None, False, []):
            raise ValueError(f"{option}: {why}")


def text_of(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{where}: invalid UTF-8 at byte offset {exc.start} (a sentencepiece "
                         "model encodes text)") from None


def append_id(model: SentencePieceModel, token: str | None, name: str = "--append") -> int | None:
    """``--append``: a piece (``</s>``) or an ID of ``model``; None when not given."""
    if token is None:
        return None
    if token in model.ids:
        return model.ids[token]
    if token.isascii() and token.isdigit():
        if int(token) >= len(model):
            raise ValueError(f"{name}: ID {token} is outside the vocabulary (0..{len(model) - 1})")
        return int(token)
    from bytepair.model.spm_model import CONTROL

    control = ", ".join(repr(piece) for piece, _, kind in model.pieces if kind == CONTROL) or "none"
    raise ValueError(f"{name}: {token!r} is neither a piece of this sentencepiece model "
                     f"(control pieces: {control}) nor an ID")


def array_encoder(model: SentencePieceModel, dtype: str, append: int | None):
    """``encode_array`` for :func:`bytepair.formats.tokenfile.write_token_file`: each text's
    IDs, then ``append`` (when not None)."""
    from bytepair.formats.tokenfile import DTYPES

    def encode_array(batch: list[str]) -> array:
        ids = array(DTYPES[dtype][0])
        for text in batch:
            ids.extend(model.encode(text))
            if append is not None:
                ids.append(append)
        return ids

    return encode_array


def decoded(model: SentencePieceModel, ids, where: str) -> bytes:
    """The UTF-8 text of ``ids``, as ``SentencePieceProcessor.decode`` writes it."""
    for token in ids:
        if not 0 <= token < len(model):
            raise ValueError(f"{where}: {token} is outside the vocabulary (0..{len(model) - 1})")
    return model.decode(list(ids)).encode("utf-8")
