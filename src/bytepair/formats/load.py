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
from typing import Sequence

from bytepair._util.errors import Advice, ArgumentError, InputError
from bytepair._util.validate import check_special_tokens, is_text
from bytepair.counts.piece_counts import FORMAT as COUNTS_FORMAT
from bytepair.counts.piece_counts import MAX_HEADER as COUNTS_MAX_HEADER
from bytepair.formats import foreign
from bytepair.formats.imports import (ImportRefused, from_tiktoken, from_tokenizers_json,
                                      looks_like_tiktoken, looks_like_tokenizers_json,
                                      read_special_tokens)
from bytepair.model.models import BYTE_TOKENS, ByteModel, Stages, WordModel
from bytepair.model.modelfile import FORMAT, VERSION, checksum
from bytepair.split.pretokenize import UntrustedPattern, stored_pattern
from bytepair.learn.rules import Merge
from bytepair.model.tokenizer import Tokenizer

#: Files larger than this are refused before they are read (``load(max_bytes=...)`` changes it).
MAX_FILE_BYTES = 1 << 31
#: Deepest nesting of arrays and objects accepted; a model file needs 3.
MAX_DEPTH = 32
#: Every byte but brackets (deleted by the depth scan).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: Objects count as arrays for depth: ``{`` -> ``[``, ``}`` -> ``]``.
_AS_ARRAYS = bytes.maketrans(b"{}", b"[]")


class ModelFormatError(InputError):
    """A file that is not a bytepair model this version can read."""


class _NotForThisFile(ArgumentError, ModelFormatError):
    """An argument of :func:`load` that the file does not take (``pattern`` for a model file)."""


def load(path: str | os.PathLike, *, trust_pattern: bool = False, max_bytes: int = MAX_FILE_BYTES,
         pattern: str | None = None,
         special_tokens: dict[str, int] | Sequence[str] | str | os.PathLike | None = None):
    """Read a model written by the ``save`` method of a ByteModel, Tokenizer or WordModel,
    or import a Hugging Face ``tokenizer.json`` (or a directory holding one, such as
    :func:`bytepair.to_transformers` writes) or a tiktoken ranks file.

    Returns a :class:`ByteModel`, :class:`Tokenizer` or :class:`WordModel`,
    as the file says. The file is parsed defensively: a file over
    ``max_bytes`` bytes, nesting deeper than :data:`MAX_DEPTH`, integers too
    long to read, strings that are not text (lone surrogates) and wrong types
    all raise :class:`ModelFormatError`, as does a piece-count table (read
    those with :meth:`bytepair.PieceCounts.load`). O(file size).

    A ``tokenizer.json`` (byte-level BPE) and a tiktoken ranks file become a
    :class:`Tokenizer` that encodes exactly as the library they come from,
    with its IDs (see :mod:`bytepair.formats.imports` and ``docs/format.md``);
    what bytepair cannot reproduce exactly is refused with one line naming the
    feature.

    Files of other tools (a sentencepiece ``.model``, ``merges.txt``,
    ``vocab.json``, ``tokenizer_config.json``, ...) are refused with one line
    saying what they are and what to pass instead.

    ``path``
        The model file, ``tokenizer.json`` (or its directory) or tiktoken ranks file.
    ``trust_pattern``
        Accept a custom regex as the byte model's ``pattern`` (or a
        ``tokenizer.json``'s Split). Without it the pattern must be a named
        pattern's source (:data:`bytepair.split.pretokenize.PATTERNS`) or
        ``null``: a regex from a file could take exponential time on some text
        (``(a|aa)+$``).
    ``max_bytes``
        Files larger than this are refused before they are read.
    ``pattern``
        For a tiktoken ranks file only, which holds no pattern: a pattern name
        (``"cl100k"``, or tiktoken's ``"cl100k_base"``), a regex, or ``"none"``.
    ``special_tokens``
        For a tiktoken ranks file only, which holds none: its special tokens,
        as ``tiktoken.Encoding`` takes them (a dict of token -> ID, the IDs
        following the ranks), a list of tokens (IDs after the ranks, in
        order), or the path of a JSON file holding that dict, as
        ``export --to tiktoken`` writes it beside the ranks
        (``<ranks file>.special_tokens.json``).
    """
    path = _model_file(path)
    if _sentencepiece_file(path):
        if pattern is not None or special_tokens is not None:
            argument, what = ("pattern", "a pattern") if pattern is not None else \
                ("special_tokens", "special tokens from outside")
            raise _NotForThisFile(argument, f": only a tiktoken ranks file takes {what}, and "
                                            f"{os.fspath(path)!r} is a sentencepiece model (its "
                                            "normaliser and pieces are in the file)")
        return _sentencepiece(path)
    text = _read_text(path, max_bytes)
    if pattern is not None or special_tokens is not None or looks_like_tiktoken(text):
        return _import(path, text, pattern, special_tokens)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        what = foreign.text_file(text)
        if what is not None:
            raise ModelFormatError(f"{os.fspath(path)!r} {what}") from None
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model: {exc}") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: {exc}") from None
    if looks_like_tokenizers_json(data):
        try:
            return from_tokenizers_json(data, trust_pattern=trust_pattern)
        except ImportRefused as exc:
            raise ModelFormatError(f"{os.fspath(path)!r}: cannot read this tokenizer.json "
                                   f"exactly: {exc}") from None
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a malformed file
            raise ModelFormatError(f"{os.fspath(path)!r} is not a valid tokenizer.json: "
                                   f"{type(exc).__name__}: {exc}") from None
    try:
        model = _model(data, path, trust_pattern)
    except RecursionError:
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: nested too deeply") from None
    # After the checks above, so that a file edited by hand hears what is wrong with it first.
    _check_checksum(data, path, required=False)
    return model


def load_checked(path: str | os.PathLike, *, trust_pattern: bool = False):
    """:func:`load` of a bytepair model file that must carry its checksum (a checkpoint's rules:
    bytepair wrote them, so a file without one was damaged or replaced)."""
    text = _read_text(path, MAX_FILE_BYTES)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model: {exc}") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: {exc}") from None
    if isinstance(data, dict) and "checksum" not in data:
        raise ModelFormatError(f"{os.fspath(path)!r} carries no checksum (bytepair writes one), "
                               f"so it cannot be trusted to be what was written")
    try:
        model = _model(data, path, trust_pattern)
    except RecursionError:
        raise ModelFormatError(f"{os.fspath(path)!r} is corrupt: nested too deeply") from None
    _check_checksum(data, path, required=True)
    return model


def _check_checksum(data: dict, path, *, required: bool) -> None:
    """Refuse a model file whose content differs from its ``checksum`` field (see
    :func:`bytepair.model.modelfile.checksum`); a file without one (written by hand, or by an
    older bytepair) is read as it is."""
    stored = data.get("checksum")
    if stored is None and not required:
        return
    fields = {key: value for key, value in data.items()
              if key not in ("format", "version", "kind", "checksum", "merges")}
    if stored != checksum(data["kind"], fields, data["merges"]):
        raise ModelFormatError(
            f"{os.fspath(path)!r} is damaged: its content does not match its checksum (a file "
            f"edited on purpose loads once its 'checksum' field is removed)")


def _model_file(path: str | os.PathLike) -> str | os.PathLike:
    """``path``, or for a directory the ``tokenizer.json`` in it (a transformers tokenizer
    directory, as :func:`bytepair.to_transformers` writes)."""
    if not os.path.isdir(path):
        return path
    inside = os.path.join(path, "tokenizer.json")
    if os.path.isfile(inside):
        return inside
    name = os.fspath(path)
    if os.path.isfile(os.path.join(path, "checkpoint.json")):
        raise ModelFormatError(f"{name!r} is a training checkpoint, not a model: continue the "
                               f"run with 'bytepair train ... --checkpoint DIR --resume'")
    raise ModelFormatError(f"{name!r} is a directory without a tokenizer.json; pass a model "
                           f"file, a tokenizer.json, a tiktoken ranks file, or a directory "
                           f"holding a tokenizer.json")


def _import(path, text: str, pattern, special_tokens=None):
    """A tiktoken ranks file, which needs ``pattern`` and may take ``special_tokens``; either for
    any other file is refused."""
    name = os.fspath(path)
    if not looks_like_tiktoken(text):
        argument, what = ("pattern", "a pattern") if pattern is not None else \
            ("special_tokens", "special tokens from outside")
        raise _NotForThisFile(argument, f": only a tiktoken ranks file takes {what}, and "
                                        f"{name!r} is not one (its first line is not "
                                        f"'base64-token rank')")
    if pattern is None:
        raise ModelFormatError(
            f"{name!r} is a tiktoken ranks file, which holds no pattern: name one, e.g. "
            f"load(path, pattern='cl100k') (command line: --pattern cl100k)")
    try:
        if isinstance(special_tokens, (str, os.PathLike)):
            special_tokens = read_special_tokens(special_tokens)
        return from_tiktoken(text, pattern, special_tokens)
    except ImportRefused as exc:
        raise ModelFormatError(f"{name!r}: cannot read this tiktoken file exactly: {exc}") from None


def _sentencepiece_file(path: str | os.PathLike) -> bool:
    with open(path, "rb") as handle:
        return foreign.is_sentencepiece(handle.read(1 << 16))


def _sentencepiece(path: str | os.PathLike):
    """A sentencepiece BPE ``.model`` (:mod:`bytepair.formats.spm_file`); other types refused."""
    from bytepair.formats.spm_file import load_sentencepiece

    try:
        return load_sentencepiece(path)
    except (ValueError, ImportError) as exc:
        raise ModelFormatError(str(exc)) from None


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
            f"{os.fspath(path)!r} is a piece-count table, not a model: ",
            Advice("count table", "read it with bytepair.PieceCounts.load, or train a model "
                   "from it (bytepair.train(table, ...))"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        what = foreign.binary_file(data)
        if what is not None:
            raise ModelFormatError(f"{os.fspath(path)!r} {what}") from None
        raise ModelFormatError(f"{os.fspath(path)!r} is not a bytepair model: {exc}") from None
    if depth_exceeds(data, MAX_DEPTH):
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


def depth_exceeds(data: bytes, limit: int) -> bool:
    """Whether the UTF-8 JSON ``data`` nests arrays and objects deeper than ``limit``.

    Escapes are dropped (pairs of backslashes, then escaped quotes), then
    strings (every other stretch between quotes), then everything but
    brackets; then each pass removes the innermost pairs. Every step is a
    ``bytes`` method, one left-to-right pass in C: O(size + limit * brackets),
    no recursion and no regex, whatever the file holds (a regex for strings
    with escapes tried each quote of an unterminated string of ``\\"`` pairs
    to the end: quadratic). Unbalanced brackets, stray backslashes and an
    unterminated string are left for the JSON parser to refuse.
    """
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])  # the odd stretches are strings
    brackets = outside.translate(_AS_ARRAYS, _NOT_BRACKETS)
    for _ in range(limit):
        shorter = brackets.replace(b"[]", b"")  # one level: the innermost pairs
        if len(shorter) == len(brackets):
            return False
        brackets = shorter
    return b"[]" in brackets


def _model(data, path: str | os.PathLike, trust_pattern: bool):
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        what = foreign.json_file(data, os.fspath(path))
        if what is not None:
            raise ModelFormatError(f"{os.fspath(path)!r} {what}")
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
            ids = data.get("ids")
            if ids is not None and not isinstance(ids, list):
                raise ValueError("'ids' must be a list of token IDs")
            # Checked here, so that a message names the file's field, not an argument.
            return Tokenizer(model, check_special_tokens(special_tokens, "'special_tokens'"), ids=ids)
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
    try:
        return stored_pattern(pattern, trusted=trust_pattern)
    except UntrustedPattern as exc:
        # Not corrupt: a valid model that needs the caller's word that its source is trusted.
        raise ModelFormatError(f"{os.fspath(path)!r} ", *exc.parts) from None
