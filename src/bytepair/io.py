"""Reading model files back: the one module that knows every model type.

Layout (``docs/format.md`` has the full description)::

    {"format": "bytepair-model", "version": 1, "kind": "bytes",
     "merges": [
      [97, 97, 2, 1],
      ...
     ]}

Each merge is ``[left, right, count, replacements]`` in rank order; ranks and
token IDs follow from the position. Byte models carry their pre-tokenizer
``"pattern"`` (null: none); tokenizers (``"kind": "tokenizer"``) add
``"special_tokens"``. Word models have ``"kind": "words"``, string symbols
and an ``"end_of_word"`` entry.
"""

from __future__ import annotations

import json
import os

from .model import BYTE_TOKENS, ByteModel, WordModel
from .modelfile import FORMAT, VERSION
from .rules import Merge
from .tokenizer import Tokenizer


class ModelFormatError(ValueError):
    """A file that is not a bytepair model this version can read."""


def save_model(model, path: str | os.PathLike) -> None:
    """Save a :class:`ByteModel`, :class:`Tokenizer` or :class:`WordModel` to ``path``."""
    if not isinstance(model, (Tokenizer, ByteModel, WordModel)):
        raise TypeError(f"model must be a ByteModel, Tokenizer or WordModel, got {type(model).__name__}")
    model.save(path)


def load(path: str | os.PathLike):
    """Read a model written by the ``save`` method of a ByteModel, Tokenizer or WordModel."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model (no 'format': '{FORMAT}')")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFormatError(f"{os.fspath(path)!r} has an invalid format version {version!r}")
    if version > VERSION:
        raise ModelFormatError(
            f"{os.fspath(path)!r} has format version {version}; this bytepair reads up to {VERSION}"
        )
    kind = data.get("kind")
    rows = data.get("merges")
    if not isinstance(rows, list):
        raise ModelFormatError(f"{os.fspath(path)!r}: 'merges' must be a list")
    try:
        if kind in ("bytes", "tokenizer"):
            merges = []
            for rank, row in enumerate(rows):
                left, right, count, replacements = _row(row, int)
                merges.append(Merge(rank, left, right, BYTE_TOKENS + rank, count, replacements))
            pattern = data.get("pattern")
            if pattern is not None and not isinstance(pattern, str):
                raise ValueError("'pattern' must be a string or null")
            model = ByteModel(merges, pattern=pattern)
            if kind == "bytes":
                return model
            return Tokenizer(model, data.get("special_tokens", []))
        if kind == "words":
            merges = []
            for rank, row in enumerate(rows):
                left, right, count, replacements = _row(row, str)
                merges.append(Merge(rank, left, right, left + right, count, replacements))
            return WordModel(merges, end_of_word=data.get("end_of_word"))
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: {exc}") from None
    raise ModelFormatError(f"{os.fspath(path)!r} has an unknown model kind {kind!r}")


def _row(row, symbol_type) -> tuple:
    if (
        not isinstance(row, list) or len(row) != 4
        or not all(isinstance(s, symbol_type) and not isinstance(s, bool) for s in row[:2])
        or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in row[2:])
    ):
        raise ValueError(f"bad merge entry {row!r}")
    return tuple(row)
