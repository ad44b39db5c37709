"""The sentencepiece ``.model`` file: the ``ModelProto`` protobuf that ``SentencePieceProcessor`` loads.

Written with sentencepiece's own message definition (``sentencepiece_model_pb2``, the
optional ``sentencepiece`` extra): the pieces with their scores and types, the trainer
spec (model type BPE, the vocabulary size and the options given, as spm_train writes
them) and the normaliser spec (rule name, precompiled character map, flags set).
Reading accepts BPE models only; a unigram, word or char model is refused in one line.
"""

from __future__ import annotations

import os

from bytepair._util.atomic import write_atomically
from bytepair.model.spm_model import SentencePieceModel


def _pb2():
    from bytepair.split.spm_text import sentencepiece_module

    sentencepiece_module()
    from sentencepiece import sentencepiece_model_pb2

    return sentencepiece_model_pb2


#: TrainerSpec fields written as given; every other option's name is the field's name.
_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}


def model_proto(model: SentencePieceModel) -> bytes:
    """The serialised ``ModelProto`` of ``model``."""
    pb2 = _pb2()
    proto = pb2.ModelProto()
    for piece, score, kind in model.pieces:
        proto.pieces.add(piece=piece, score=score, type=kind)
    spec = proto.trainer_spec
    spec.model_type = pb2.TrainerSpec.BPE
    spec.vocab_size = len(model.pieces)
    options = model.options
    if options is not None:
        for name in options.given:
            if name in ("normalization_rule_name", "add_dummy_prefix", "remove_extra_whitespaces"):
                continue
            value = getattr(options, name)
            if isinstance(value, tuple):
                getattr(spec, name).extend(value)
            else:
                setattr(spec, name, value)
    else:
        for name, value in model.trainer_spec.items():
            if isinstance(value, tuple):
                getattr(spec, name).extend(value)
            elif name not in ("model_type", "vocab_size"):
                setattr(spec, name, value)
    normalizer = proto.normalizer_spec
    for name, value in model.normalizer.items():
        setattr(normalizer, name, value)
    return proto.SerializeToString()


def save_sentencepiece(model: SentencePieceModel, path: str | os.PathLike) -> None:
    """Write ``model`` to ``path`` as a ``.model`` file, whole or not at all."""
    write_atomically(path, model_proto(model))


def read_sentencepiece(data: bytes, where: str = "model") -> SentencePieceModel:
    """A :class:`SentencePieceModel` from a ``.model`` file's bytes; other model types refused."""
    pb2 = _pb2()
    proto = pb2.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError and friends
        raise ValueError(f"{where!r} is not a sentencepiece model: {error}") from None
    kind = _TYPES.get(proto.trainer_spec.model_type, "UNIGRAM")
    if kind != "BPE":
        raise ValueError(f"{where!r} is a sentencepiece model of type {kind.lower()}, which bytepair "
                         f"does not read (it reads sentencepiece BPE models)")
    if not proto.pieces:
        raise ValueError(f"{where!r} is a sentencepiece model with no pieces")
    pieces = [(p.piece, p.score, p.type) for p in proto.pieces]
    normalizer = {field.name: value for field, value in proto.normalizer_spec.ListFields()}
    trainer = {field.name: value if isinstance(value, (str, bytes, int, float)) else tuple(value)
               for field, value in proto.trainer_spec.ListFields()}
    return SentencePieceModel(pieces, normalizer=normalizer, trainer_spec=trainer)


def load_sentencepiece(path: str | os.PathLike) -> SentencePieceModel:
    """The :class:`SentencePieceModel` in a ``.model`` file."""
    with open(path, "rb") as handle:
        return read_sentencepiece(handle.read(), os.fspath(path))
