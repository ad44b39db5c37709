"""The tokenizer viewer's answers: the page sends text, the library encodes it.

The page (``static/viewer.*``) only draws: every ID it shows comes from
:meth:`bytepair.Tokenizer.encode` here (special-token text is encoded as its
special token, ``allowed_special="all"``), every merge tree from
:mod:`bytepair.teach.provenance`.

Actions (``handle(action, payload)``):

``info``
    ``{}`` -> the models (name, vocabulary size, rules, special tokens,
    SuperBPE transition) and the ``--sizes`` curves, if given.
``encode``
    ``{"text": str, "models": [name, ...], "start": int, "limit": int}``
    (1 to :data:`MAX_MODELS` models; ``start`` 0 and ``limit``
    :data:`WINDOW` by default, at most :data:`MAX_WINDOW`) -> per model
    ``tokens`` (how many in all), and for the window of ``limit`` tokens
    from ``start`` only: ``ids`` and ``pieces`` (each ID of the window,
    once: ``[text, kind]`` with kind ``"text"``, ``"bytes"`` for tokens that
    are not whole UTF-8, written in hex, or ``"special"``); with two models
    or more ``differing`` (how many tokens' byte spans are not a token of
    every other model) and the window's ``differs`` (1 for such a token);
    and the text's ``bytes`` and ``characters``. The page asks for the next
    window as a list is scrolled: an answer is the few tokens drawn, not
    the text's millions.
``tree``
    ``{"model": name, "id": int}`` -> the merge tree of that token.

A sentencepiece BPE model is shown as sentencepiece encodes (:mod:`bytepair.teach.spm_view`):
alone, with no merge tree.

Bad input raises :class:`ViewerError` (a ValueError) with one line for the page.
"""

from __future__ import annotations

import json
import math
import os
import threading
from array import array
from itertools import accumulate
from typing import NamedTuple

from bytepair._util.errors import ArgumentError
from bytepair.formats.imports import looks_like_tiktoken
from bytepair.formats.load import load
from bytepair.model.models import ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.teach import spm_view
from bytepair.teach.provenance import Provenance, token_text

#: The most models compared on one text.
MAX_MODELS = 4
#: The longest text encoded, in characters.
MAX_TEXT = 1_000_000
#: The tokens sent by default in one answer (the page draws this many at a time).
WINDOW = 500
#: The most tokens one answer may send.
MAX_WINDOW = 5000


class ViewerError(ValueError):
    """A request the viewer refuses; the message is shown in the page."""


class Viewer:
    """The models shown by the viewer, by name, and the curves of ``bytepair evaluate --json``."""

    def __init__(self, models: dict[str, Tokenizer], curves: dict | None = None):
        self.models = dict(models)
        self.curves = curves
        self._provenance = {name: Provenance(tok) for name, tok in self.models.items()
                            if not spm_view.is_sentencepiece(tok)}
        # How each token seen so far is shown, by model: a keystroke re-sends the same tokens.
        self._pieces: dict[str, dict[int, tuple]] = {name: {} for name in self.models}
        self._special_ids = {name: frozenset(tok.special_tokens.values())
                             for name, tok in self.models.items()
                             if not spm_view.is_sentencepiece(tok)}
        self._token_lengths: dict[str, array] = {}
        self._lock = threading.Lock()
        self._last: _Encoded | None = None
        for provenance in self._provenance.values():
            provenance.prepare()  # O(rules) once, before the first tree is asked for

    def handle(self, action: str, payload) -> dict:
        if not isinstance(payload, dict):
            raise ViewerError("the request must be a JSON object")
        if action == "info":
            return self.info()
        if action == "encode":
            return self.encode(_text(payload), _names(payload, self.models),
                               _whole(payload, "start", 0, 0, MAX_TEXT * 4),
                               _whole(payload, "limit", WINDOW, 1, MAX_WINDOW))
        if action == "tree":
            name = _model(payload.get("model"), self.models)
            if spm_view.is_sentencepiece(self.models[name]):
                raise ViewerError(f"tree: {spm_view.NO_TREE}")
            try:
                return {"model": name, "tree": self._provenance[name].tree(payload.get("id"))}
            except ValueError as exc:
                raise ViewerError(str(exc)) from None
        raise KeyError(action)

    def info(self) -> dict:
        models = []
        for name, tok in self.models.items():
            if spm_view.is_sentencepiece(tok):
                models.append(spm_view.info(name, tok))
                continue
            stages = tok.model.stages
            models.append({
                "name": name, "vocab_size": tok.vocab_size, "merges": len(tok.merges),
                "special_tokens": tok.special_tokens,
                "superbpe_transition": None if stages is None else stages.transition,
            })
        return {"models": models, "curves": self.curves}

    def encode(self, text: str, names: list[str], start: int = 0, limit: int = WINDOW) -> dict:
        """The tokens of ``text`` by each model: how many, how many differ, and the window of
        ``limit`` tokens from ``start`` (see the module).

        The last text's encodings are kept (its IDs, at 2 or 4 bytes a token, and one byte a
        text byte for the boundaries), so the next window costs no new encoding: the
        server's memory is a small multiple of the text, whatever the page asks.
        """
        encoded = self._encoded(text, names)
        results = []
        for name, ids in zip(names, encoded.ids):
            window = ids[start:start + limit]
            known = self._pieces[name]
            pieces = {}
            for token in set(window):
                piece = known.get(token)
                if piece is None:
                    tok = self.models[name]
                    piece = known[token] = spm_view.piece(tok, token) \
                        if spm_view.is_sentencepiece(tok) else \
                        _piece(tok, token, self._special_ids[name])
                pieces[token] = piece[:2]
            result = {"model": name, "tokens": len(ids), "start": start, "ids": window.tolist(),
                      "pieces": pieces}
            if encoded.boundaries is not None:
                lengths = self._lengths(name)
                result["differing"] = len(ids) - encoded.shared
                result["differs"] = _window_differs(encoded.boundaries, len(names), lengths,
                                                    ids, start, len(window))
            results.append(result)
        return {"bytes": encoded.size, "characters": len(text), "results": results}

    def _encoded(self, text: str, names: list[str]) -> _Encoded:
        with self._lock:
            last = self._last
            if last is not None and last.text == text and last.names == names:
                return last
            self._last = None  # the last text's arrays go before the next are made
        ids = []
        if len(names) > 1 and any(spm_view.is_sentencepiece(self.models[n]) for n in names):
            raise ViewerError(f"models: {spm_view.ALONE}")
        for name in names:
            tok = self.models[name]
            if spm_view.is_sentencepiece(tok):
                ids.append(spm_view.ids(tok, text))
                continue
            dtype = "uint16" if tok.vocab_size <= 1 << 16 else "uint32"
            ids.append(tok.encode_to_array([text], dtype=dtype, threads=1,
                                           allowed_special="all"))
        size = len(text.encode("utf-8"))
        boundaries, shared = None, 0
        if len(names) > 1:
            boundaries = bytearray(size + 1)
            for name, row in zip(names, ids):
                boundaries[0] += 1
                for end in accumulate(map(self._lengths(name).__getitem__, row)):
                    boundaries[end] += 1
            shared = shared_spans(boundaries, len(names))
        encoded = _Encoded(text, list(names), ids, size, boundaries, shared)
        with self._lock:
            self._last = encoded
        return encoded

    def _lengths(self, name: str) -> array:
        """Each token's length in bytes, by ID (made once per model)."""
        lengths = self._token_lengths.get(name)
        if lengths is None:
            tok = self.models[name]
            lengths = array("I", bytes(4 * tok.vocab_size))
            for token in range(tok.vocab_size):
                try:
                    lengths[token] = len(tok.token_bytes(token))
                except (KeyError, IndexError, ValueError):
                    pass  # an ID no token has (encode never returns it)
            self._token_lengths[name] = lengths
        return lengths


class _Encoded(NamedTuple):
    """The last text encoded, by each model of the request."""

    text: str
    names: list[str]
    ids: list[array]          # per model, its IDs
    size: int                 # the text's bytes
    boundaries: bytearray | None  # comparing: per byte offset, how many models cut there
    shared: int               # comparing: the spans that are a token of every model


def shared_spans(boundaries: bytearray, models: int) -> int:
    """How many spans are a token of every one of ``models`` tokenizations of one text, given
    ``boundaries[p]``, the number of tokenizations with a token boundary at byte offset ``p``
    (each counts offset 0). A span is such a token when both its ends are boundaries of every
    tokenization and no tokenization cuts inside it. O(bytes), in C.

    >>> shared_spans(bytearray([2, 1, 2, 2]), 2)  # [2, 1] and [1, 1, 1]: one span is shared
    1
    """
    full = bytes([models])
    others = bytes(b for b in range(256) if b not in (0, models))
    # Without the offsets no one cuts at, a shared span is two full offsets side by side.
    cuts = bytes(boundaries).translate(bytes.maketrans(others, b"\xff" * len(others)), b"\x00")
    fulls = cuts.count(full)
    runs = cuts.count(b"\xff" + full) + (cuts[:1] == full)
    return fulls - runs


def _window_differs(boundaries: bytearray, models: int, lengths: array, ids: array,
                    start: int, count: int) -> list[int]:
    """1 for each token of ``ids[start:start + count]`` whose span is not a token of every
    model (see :func:`shared_spans`), else 0."""
    offset = sum(map(lengths.__getitem__, ids[:start]))
    flags = []
    for token in ids[start:start + count]:
        end = offset + lengths[token]
        inside = boundaries[offset + 1:end]
        shared = (boundaries[offset] == models and boundaries[end] == models
                  and inside.count(0) == len(inside))
        flags.append(0 if shared else 1)
        offset = end
    return flags


def _piece(tok: Tokenizer, token: int, specials: frozenset) -> tuple[str, str, int]:
    """How a token is shown: its text (or hex), its kind, and its length in bytes."""
    data = tok.token_bytes(token)
    shown, whole = token_text(data)
    kind = "special" if token in specials else "text" if whole else "bytes"
    return shown, kind, len(data)


def differing_spans(lengths: list[list[int]]) -> list[list[int]]:
    """For each tokenization of one text (its tokens' byte lengths), 1 for each token whose byte
    span is not also a token of every other tokenization, else 0. O(tokens), in Python objects:
    the plain statement that :func:`shared_spans` and the viewer's windows are tested against.

    >>> differing_spans([[2, 1, 1], [2, 2]])
    [[0, 1, 1], [0, 1]]
    """
    spans = []
    for row in lengths:
        start, mine = 0, []
        for n in row:
            mine.append((start, start + n))
            start += n
        spans.append(mine)
    shared = set(spans[0]).intersection(*spans[1:]) if spans else set()
    return [[0 if span in shared else 1 for span in mine] for mine in spans]


def _text(payload: dict) -> str:
    text = payload.get("text")
    if not isinstance(text, str):
        raise ViewerError("text: expected a string")
    if len(text) > MAX_TEXT:
        raise ViewerError(f"text: {len(text):,} characters is more than the limit of {MAX_TEXT:,}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ViewerError("text: contains a lone surrogate, which is not text") from None
    return text


def _whole(payload: dict, key: str, default: int, low: int, high: int) -> int:
    value = payload.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ViewerError(f"{key}: expected a whole number from {low:,} to {high:,}")
    return value


def _model(name, models: dict) -> str:
    if not isinstance(name, str) or name not in models:
        raise ViewerError(f"model: no model named {name!r} (the models are {', '.join(models)})")
    return name


def _names(payload: dict, models: dict) -> list[str]:
    names = payload.get("models")
    if not isinstance(names, list) or not 1 <= len(names) <= MAX_MODELS:
        raise ViewerError(f"models: expected a list of 1 to {MAX_MODELS} model names")
    if len(set(map(repr, names))) != len(names):
        raise ViewerError("models: a model is named twice")
    return [_model(name, models) for name in names]


#: The ranks of tiktoken's own files, and the pattern each was made with (a ranks file holds none).
TIKTOKEN_SIZES = {50256: ("r50k_base", "gpt2"), 50280: ("p50k_base", "gpt2"),
                  100256: ("cl100k_base", "cl100k"), 199998: ("o200k_base", "o200k")}


def pattern_hint(path: str) -> str:
    """The pattern to suggest for a tiktoken ranks file given without one: the pattern of the
    tiktoken file with as many ranks, else the names to choose from. O(file).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tiktoken", delete=False) as f:
    ...     _ = f.write("YQ== 0\\n")
    >>> pattern_hint(f.name)
    "one of gpt2, cl100k, o200k (or a regex); its 1 rank matches none of tiktoken's files"
    >>> os.remove(f.name)
    """
    with open(path, "rb") as handle:
        ranks = sum(1 for line in handle if line.strip())
    known = TIKTOKEN_SIZES.get(ranks)
    if known is not None:
        return f"{known[1]} (its {ranks:,} ranks are {known[0]}'s)"
    counted = "1 rank matches" if ranks == 1 else f"{ranks:,} ranks match"
    return f"one of gpt2, cl100k, o200k (or a regex); its {counted} none of tiktoken's files"


def _is_tiktoken(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return looks_like_tiktoken(handle.read(4096).split("\n", 1)[0])
    except OSError:
        return False


def _names_tiktoken(spec: str) -> bool:
    """Whether a ``MODEL`` argument is a tiktoken ranks file (``FILE:PATTERN``, or the file)."""
    if not os.path.exists(spec):
        return ":" in spec
    return os.path.isfile(spec) and _is_tiktoken(spec)


def load_viewer_model(spec: str, *, pattern: str | None = None, special_tokens=None,
                      trust_pattern: bool = False) -> tuple[str, Tokenizer]:
    """The name and tokenizer of a ``MODEL`` argument.

    ``MODEL`` is what :func:`bytepair.load` reads (a bytepair model, a
    ``tokenizer.json``, a tiktoken ranks file), a ``transformers`` directory
    (its ``tokenizer.json``), or a tiktoken ranks file with its pattern after
    a colon, ``FILE:PATTERN`` (``cl100k.tiktoken:cl100k``); ``pattern`` is
    the pattern of any tiktoken file given without one, and ``special_tokens``
    the special tokens of every tiktoken file (which holds none; as
    :func:`bytepair.load` takes them). A path that exists is taken whole, colon
    or not. Raises ValueError (one line, naming the model) for anything that
    cannot be shown.
    """
    path, own = spec, None
    if not os.path.exists(spec) and ":" in spec:
        path, own = spec.rsplit(":", 1)
        if not path or not own:
            raise ValueError(f"MODEL: expected FILE or FILE:PATTERN, got {spec!r}")
    if not os.path.exists(path):
        raise ValueError(f"MODEL: {path!r} does not exist")
    name = os.path.basename(os.path.normpath(path))
    if os.path.isdir(path):
        inner = os.path.join(path, "tokenizer.json")
        if not os.path.isfile(inner):
            raise ValueError(f"MODEL: the directory {path!r} has no tokenizer.json "
                             "(a transformers directory of a fast tokenizer has one)")
        path = inner
    # What a ranks file does not hold goes to ranks files only: other MODELs load as they are.
    tiktoken = own is not None or _is_tiktoken(path)
    extra = {"pattern": own or pattern, "special_tokens": special_tokens} if tiktoken else {}
    try:
        model = load(path, trust_pattern=trust_pattern, **extra)
    except OSError as exc:
        raise ValueError(f"MODEL: cannot read {path!r}: {exc.strerror or exc}") from None
    except ValueError as exc:
        if own is None and pattern is None and "holds no pattern" in str(exc):
            hint = pattern_hint(path)
            first = hint.split(" ", 1)[0] if not hint.startswith("one of") else "PATTERN"
            raise ValueError(f"MODEL: {path!r} is a tiktoken ranks file, which holds no pattern: "
                             f"name it as {spec + ':' + first!r} or with --pattern; the pattern: "
                             f"{hint}") from None
        raise ValueError(f"MODEL: {exc}") from None
    if isinstance(model, ByteModel):
        model = Tokenizer(model)
    if not isinstance(model, Tokenizer) and not spm_view.is_sentencepiece(model):
        raise ValueError(f"MODEL: {path!r} is a word-mode model, which has no token IDs to show")
    return name, model


def load_viewer_models(specs, *, pattern: str | None = None, special_tokens=None,
                       trust_pattern: bool = False) -> dict[str, Tokenizer]:
    """:func:`load_viewer_model` of each spec, by name; a name seen twice gets ``#2``, ``#3``.
    ``special_tokens`` with no tiktoken ranks file among the specs is refused: nothing would
    take them."""
    if special_tokens and not any(_names_tiktoken(spec) for spec in specs):
        raise ArgumentError("special_tokens", ": only a tiktoken ranks file takes special "
                            "tokens, and no MODEL is one (the others hold their own)")
    models: dict[str, Tokenizer] = {}
    for spec in specs:
        name, tok = load_viewer_model(spec, pattern=pattern, special_tokens=special_tokens,
                                      trust_pattern=trust_pattern)
        unique, n = name, 1
        while unique in models:
            n += 1
            unique = f"{name}#{n}"
        models[unique] = tok
    return models


def curves_of_evaluation(data, source: str = "--curves") -> list[dict]:
    """The bytes-per-token curves in ``bytepair evaluate --json`` output (a dict, as parsed):
    one per model and sample, ``{"model", "sample", "sizes", "bytes_per_token"}``, sizes
    ascending. These are the numbers ``evaluate --plot`` draws; a row whose
    ``bytes_per_token`` is null is left out. ValueError names ``source``, the row and the
    field that is missing or not a number (NaN and infinities are not).

    >>> curves_of_evaluation({"rows": [
    ...     {"model": "m", "sample": "en", "vocab_size": 512, "bytes_per_token": 3.5},
    ...     {"model": "m", "sample": "en", "vocab_size": 256, "bytes_per_token": 1.0}]})
    [{'model': 'm', 'sample': 'en', 'sizes': [256, 512], 'bytes_per_token': [1.0, 3.5]}]
    """
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{source}: expected the output of 'bytepair evaluate --json' with "
                         "--sample (an object whose \"rows\" are not empty)")
    lines: dict[tuple, list] = {}
    for n, row in enumerate(rows):
        try:
            key = (str(row["model"]), str(row["sample"]))
            size, value = row["vocab_size"], row["bytes_per_token"]
        except (KeyError, TypeError):
            raise ValueError(f"{source}: rows[{n}] lacks model, sample, vocab_size or "
                             "bytes_per_token") from None
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"{source}: rows[{n}].vocab_size must be a whole number, "
                             f"got {json.dumps(size)[:40]}")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ValueError(f"{source}: rows[{n}].bytes_per_token must be a finite number, "
                             f"got {json.dumps(value)[:40]}")
        lines.setdefault(key, []).append((size, float(value)))
    return [{"model": model, "sample": sample, "sizes": [s for s, _ in sorted(points)],
             "bytes_per_token": [v for _, v in sorted(points)]}
            for (model, sample), points in lines.items()]
