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
import re

from bytepair._util.validate import check_special_tokens, is_text
from bytepair.counts.piece_counts import FORMAT as COUNTS_FORMAT
from bytepair.counts.piece_counts import MAX_HEADER as COUNTS_MAX_HEADER
from bytepair.model.models import BYTE_TOKENS, ByteModel, Stages, WordModel
from bytepair.model.modelfile import FORMAT, VERSION
from bytepair.split.pretokenize import PATTERNS, check_custom_pattern
from bytepair.learn.rules import Merge
from bytepair.model.tokenizer import Tokenizer

#: Files larger than this are refused before they are read (``load(max_bytes=...)`` changes it).
MAX_FILE_BYTES = 1 << 31
#: Deepest nesting of arrays and objects accepted; a model file needs 3.
MAX_DEPTH = 32
#: JSON strings, and runs of characters that are not brackets, for the depth scan.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: Objects count as arrays for depth: ``{`` -> ``[``, ``}`` -> ``]``.
_AS_ARRAYS = bytes.maketrans(b"{}", b"[]")
#: A ``pattern`` that is a bare word: a pattern name or a literal regex? Refused.
_BARE_WORD = re.compile(r"[\w-]+")


class ModelFormatError(ValueError):
    """A file that is not a bytepair model this version can read."""


def save_model(model, path: str | os.PathLike) -> None:
    """Save a :class:`ByteModel`, :class:`Tokenizer` or :class:`WordModel` to ``path``."""
    if not isinstance(model, (Tokenizer, ByteModel, WordModel)):
        raise TypeError(f"model must be a ByteModel, Tokenizer or WordModel, got {type(model).__name__}")
    model.save(path)


def load(path: str | os.PathLike, *, trust_pattern: bool = False, max_bytes: int = MAX_FILE_BYTES):
    """Read a model written by the ``save`` method of a ByteModel, Tokenizer or WordModel.

    Returns a :class:`ByteModel`, :class:`Tokenizer` or :class:`WordModel`,
    as the file says. The file is parsed defensively: a file over
    ``max_bytes`` bytes, nesting deeper than :data:`MAX_DEPTH`, integers too
    long to read, strings that are not text (lone surrogates) and wrong types
    all raise :class:`ModelFormatError`, as does a piece-count table (read
    those with :meth:`bytepair.PieceCounts.load`). O(file size).

    ``path``
        The model file.
    ``trust_pattern``
        Accept a custom regex as the byte model's ``pattern``. Without it the
        pattern must be a named pattern's source
        (:data:`bytepair.split.pretokenize.PATTERNS`) or ``null``: a regex from
        a file could take exponential time on some text (``(a|aa)+$``).
    ``max_bytes``
        Files larger than this are refused before they are read.
    """
    text = _read_text(path, max_bytes)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model: {exc}") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: {exc}") from None
    try:
        return _model(data, path, trust_pattern)
    except RecursionError:
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: nested too deeply") from None


def _read_text(path: str | os.PathLike, max_bytes: int) -> str:
    """The file's text, after the size and nesting limits, before any JSON parsing."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        # read(n) reserves n bytes up front, so ask only for what the file
        # holds (plus one, to see a file that grew past the limit).
        data = handle.read(min(size, max_bytes) + 1) if size <= max_bytes else b""
    if max(size, len(data)) > max_bytes:
        raise ModelFormatError(
            f"{os.fspath(path)!r} is larger than the limit of {max_bytes} bytes (load(max_bytes=...))"
        )
    if _is_count_table(data):
        raise ModelFormatError(
            f"{os.fspath(path)!r} is a piece-count table, not a model: read it with "
            f"bytepair.PieceCounts.load, or train a model from it (bytepair.train(table, ...))"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model: {exc}") from None
    if _depth_exceeds(data, MAX_DEPTH):
        raise ModelFormatError(
            f"{os.fspath(path)!r} is not a bytepair model: arrays or objects nested deeper than {MAX_DEPTH}"
        )
    return text


def _is_count_table(data: bytes) -> bool:
    """Whether ``data`` starts with the header line of a piece-count table (``PieceCounts.save``)."""
    if COUNTS_FORMAT.encode("ascii") not in data[:256]:
        return False  # the usual case, decided without parsing anything
    line = data[:COUNTS_MAX_HEADER].split(b"\n", 1)[0]
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(header, dict) and header.get("format") == COUNTS_FORMAT


def _depth_exceeds(data: bytes, limit: int) -> bool:
    """Whether the UTF-8 JSON ``data`` nests arrays and objects deeper than ``limit``.

    Strings are dropped, then everything but brackets, then each pass removes
    the innermost pairs: O(size + limit * brackets), all in C, no recursion.
    Unbalanced brackets are left for the JSON parser.
    """
    brackets = _JSON_STRING.sub(b"", data).translate(_AS_ARRAYS, _NOT_BRACKETS)
    for _ in range(limit):
        shorter = brackets.replace(b"[]", b"")  # one level: the innermost pairs
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return b"[]" in brackets


def _model(data, path: str | os.PathLike, trust_pattern: bool):
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
            pattern = _pattern(data.get("pattern"), trust_pattern, path)
            stages = _stages(data.get("superbpe"), trust_pattern, path)
            model = ByteModel(merges, pattern=pattern, stages=stages)
            if kind == "bytes":
                return model
            special_tokens = data.get("special_tokens", [])
            if not isinstance(special_tokens, list):
                raise ValueError("'special_tokens' must be a list of strings")
            # Checked here, so that a message names the file's field, not an argument.
            return Tokenizer(model, check_special_tokens(special_tokens, "'special_tokens'"))
        if kind == "words":
            merges = []
            for rank, row in enumerate(rows):
                left, right, count, replacements = _row(row, str)
                merges.append(Merge(rank, left, right, left + right, count, replacements))
            end_of_word = data.get("end_of_word")
            if isinstance(end_of_word, str) and not is_text(end_of_word):
                raise ValueError(f"end_of_word {end_of_word!r} is not text (a lone surrogate)")
            return WordModel(merges, end_of_word=end_of_word)
    except ModelFormatError:
        raise
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: {exc}") from None
    raise ModelFormatError(f"{os.fspath(path)!r} has an unknown model kind {kind!r}")


def _row(row, symbol_type) -> tuple:
    if (
        not isinstance(row, list) or len(row) != 4
        or not all(isinstance(s, symbol_type) and not isinstance(s, bool) for s in row[:2])
        or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in row[2:])
    ):
        raise ValueError(f"bad merge entry {_short(row)}")
    if symbol_type is str and not (is_text(row[0]) and is_text(row[1])):
        raise ValueError(f"merge entry {_short(row)} holds a symbol that is not text (a lone surrogate)")
    return tuple(row)


def _stages(stages, trust_pattern: bool, path) -> Stages | None:
    """A SuperBPE model's ``superbpe`` field: transition, stage-1 pattern and word cap."""
    if stages is None:
        return None
    if not isinstance(stages, dict) or set(stages) != set(Stages._fields):
        raise ValueError(f"'superbpe' must be an object with the keys {', '.join(Stages._fields)}")
    for key in ("transition", "max_words"):
        value = stages[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"'superbpe': {key!r} must be a positive integer, got {_short(value)}")
    return Stages(stages["transition"], _pattern(stages["pretokenize"], trust_pattern, path),
                  stages["max_words"])


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def _pattern(pattern, trust_pattern: bool, path: str | os.PathLike) -> str | None:
    """The stored pre-tokenizer: ``null``, a named pattern's source, or (trusted) a custom regex."""
    if pattern is None or (isinstance(pattern, str) and pattern in PATTERNS.values()):
        return pattern
    if not isinstance(pattern, str):
        raise ValueError("'pattern' must be a string or null")
    if not is_text(pattern):
        raise ValueError("'pattern' is not text (a lone surrogate)")
    if _BARE_WORD.fullmatch(pattern):
        # bytepair writes a named pattern as its full source, never its name.
        raise ValueError(
            f"'pattern' {pattern!r} is ambiguous: a pattern name or a regex matching that literal "
            f"word? A model file holds the regex source (for a named pattern, its source)"
        )
    if not trust_pattern:
        # Not corrupt: a valid model that needs the caller's word that its source is trusted.
        raise ModelFormatError(
            f"{os.fspath(path)!r} holds a custom regex pattern {_short(pattern)}; a regex from a "
            f"file can take exponential time on some text, so pass trust_pattern=True if the file "
            f"comes from a trusted source"
        )
    return check_custom_pattern(pattern, "'pattern'")
