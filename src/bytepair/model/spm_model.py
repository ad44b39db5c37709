"""A sentencepiece BPE model: its pieces (piece, score, type), its normaliser, encode and decode.

Encoding is sentencepiece's BPE (``bpe_model.cc``): the normalised text is cut into
characters (a user-defined symbol stays whole), then the adjacent pair whose joined
string is a piece with the highest score is merged, leftmost first on equal scores,
until none is left. A piece that is not in the vocabulary is written as its UTF-8 bytes
``<0xNN>`` with byte fallback, else as the unknown piece (a run of them as one).

>>> model = SentencePieceModel([("<unk>", 0.0, UNKNOWN), ("ab", -0.0, NORMAL), ("\u2581", -1.0, NORMAL),
...                              ("a", -2.0, NORMAL), ("b", -3.0, NORMAL)],
...                             normalizer={"name": "identity"})
>>> model.encode("ab ba")
[2, 1, 2, 4, 3]
>>> model.decode([2, 1, 2, 4, 3])
'ab ba'
"""

from __future__ import annotations

import heapq
import re
from array import array

from bytepair._util.backend import extensions_wanted

_compiled = None
if extensions_wanted():
    try:
        from bytepair.model import _spm_encode as _compiled
    except ImportError:  # pragma: no cover - depends on how the package was installed
        _compiled = None

#: sentencepiece's piece types.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE = "\u2581"
_BYTE = re.compile(r"<0x([0-9A-F]{2})>")


class SentencePieceModel:
    """The pieces of a sentencepiece BPE model and what it needs to encode and decode.

    ``pieces``: ``(piece, score, type)`` in ID order, the type one of :data:`NORMAL`,
    :data:`UNKNOWN`, :data:`CONTROL`, :data:`USER_DEFINED`, :data:`UNUSED`, :data:`BYTE`.
    ``options``: the training options (a
    :class:`~bytepair.training.sentencepiece.SentencePieceOptions`), when trained here.
    ``normalizer``: the normaliser spec (``name``, ``precompiled_charsmap`` and the flags
    set); default: the one ``options`` gives, else identity. ``trainer_spec``: the trainer
    spec's fields as a model file holds them (informational). ``skipped_lines``: lines left
    out of training for being longer than ``max_sentence_length``.
    """

    def __init__(self, pieces: list[tuple[str, float, int]], *,
                 options: object | None = None,
                 normalizer: dict | None = None, trainer_spec: dict | None = None,
                 skipped_lines: int = 0):
        self.pieces = list(pieces)
        #: The training options (:class:`bytepair.training.sentencepiece.SentencePieceOptions`), if trained here.
        self.options = options
        #: The normaliser spec: ``name``, ``precompiled_charsmap`` and the flags set.
        self.normalizer = dict(normalizer) if normalizer is not None else _normalizer_of(options)
        #: The trainer spec's fields as a model file holds them (informational).
        self.trainer_spec = dict(trainer_spec or {})
        #: Lines left out of training for being longer than max_sentence_length.
        self.skipped_lines = skipped_lines
        self.ids = {}
        for i, (piece, _, kind) in enumerate(self.pieces):
            self.ids.setdefault(piece, i)
        self.unk_id = next((i for i, p in enumerate(self.pieces) if p[2] == UNKNOWN), -1)
        self.byte_fallback = any(kind == BYTE for _, _, kind in self.pieces)
        self._user = sorted((p for p, _, k in self.pieces if k == USER_DEFINED), key=len, reverse=True)
        self._user_pattern = re.compile("|".join(map(re.escape, self._user)) + "|.", re.S) if self._user else None
        self._normalize = None
        self._encoder = None

    def __len__(self) -> int:
        return len(self.pieces)

    def __repr__(self) -> str:
        return f"SentencePieceModel({len(self.pieces)} pieces, normalizer {self.normalizer.get('name')!r})"

    @property
    def vocab_size(self) -> int:
        return len(self.pieces)

    def flag(self, name: str) -> bool:
        """Whether the normaliser flag ``name`` is set (``add_dummy_prefix``,
        ``remove_extra_whitespaces``, ``escape_whitespaces``); a flag not in the spec is set."""
        return bool(self.normalizer.get(name, True))

    def normalize(self, text: str) -> str:
        """``text`` as the model's normaliser writes it (``▁`` for spaces)."""
        if self._normalize is None:
            self._normalize = _normalizer(self.normalizer, self.whitespace_suffix)
        return self._normalize(text)

    @property
    def whitespace_suffix(self) -> bool:
        """Whether the model treats whitespace as a suffix: the dummy ``▁`` goes last."""
        suffix = self.trainer_spec.get("treat_whitespace_as_suffix")
        if suffix is None and self.options is not None:
            suffix = self.options.treat_whitespace_as_suffix
        return bool(suffix)

    def encoder(self):
        """The compiled encoder of this model (``bytepair.model._spm_encode.SpmEncoder``, built
        on first use), or None when the compiled module is not in use."""
        if self._encoder is None and _compiled is not None and "" not in self._user:
            byte_ids = [self.ids.get(f"<0x{b:02X}>", -1) for b in range(256)]
            self._encoder = _compiled.SpmEncoder(self.pieces, byte_ids, self.unk_id, self.byte_fallback)
        return self._encoder

    def encode(self, text: str, *, compiled: bool | None = None) -> list[int]:
        """The IDs of ``text``, equal to ``SentencePieceProcessor.encode``'s. O(n log n) in its
        length. ``compiled``: the compiled encoder (default: when built); False runs the
        Python reference."""
        encoder = self.encoder() if compiled is not False else None
        if encoder is not None:
            return encoder.encode(self.normalize(text))
        ids: list[int] = []
        previous_unknown = False
        for piece in self.encode_pieces(self.normalize(text)):
            at = self.ids.get(piece, -1)
            if at < 0 or self.pieces[at][2] in (UNKNOWN, CONTROL, UNUSED, BYTE):
                if self.byte_fallback:
                    ids.extend(self.ids[f"<0x{b:02X}>"] for b in piece.encode())
                elif not previous_unknown:
                    ids.append(self.unk_id)
                previous_unknown = True
                continue
            previous_unknown = False
            ids.append(at)
        return ids

    def segment_words(self, words: list[str], *, compiled: bool | None = None) -> tuple[array, array]:
        """The BPE pieces of each of ``words`` (strings already normalised) as IDs, all in one
        ``array("i")``, and an ``array("q")`` of offsets: word ``k`` is
        ``ids[offsets[k]:offsets[k + 1]]``. A piece is the first ID of its string, or ``-1 - c``
        for a character of code point ``c`` that is no piece (no byte fallback, no unknown).
        ``compiled``: the compiled encoder (default: when built). O(characters x log).

        >>> model = SentencePieceModel([("<unk>", 0.0, UNKNOWN), ("ab", -1.0, NORMAL),
        ...                             ("a", -2.0, NORMAL), ("b", -3.0, NORMAL)])
        >>> ids, offsets = model.segment_words(["abab", "bz"])
        >>> list(ids), list(offsets)
        ([1, 1, 3, -123], [0, 2, 4])
        """
        encoder = self.encoder() if compiled is not False else None
        if encoder is not None:
            return encoder.segment_words(words)
        ids, offsets = array("i"), array("q", [0])
        for word in words:
            ids.extend(self.ids.get(piece, -1 - ord(piece[0])) for piece in self.encode_pieces(word))
            offsets.append(len(ids))
        return ids, offsets

    def encode_pieces(self, normalized: str) -> list[str]:
        """The BPE pieces of ``normalized``, a string already normalised (see :meth:`normalize`);
        pieces may be outside the vocabulary."""
        if self._user_pattern is not None:
            symbols = self._user_pattern.findall(normalized)
        else:
            symbols = list(normalized)
        frozen = [s in self._user for s in symbols] if self._user else [False] * len(symbols)
        nxt = list(range(1, len(symbols))) + [-1]
        prv = list(range(-1, len(symbols) - 1))
        agenda: list[tuple[float, int, str]] = []

        def offer(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            joined = symbols[left] + symbols[right]
            at = self.ids.get(joined, -1)
            if at >= 0 and self.pieces[at][2] in (NORMAL, USER_DEFINED):
                heapq.heappush(agenda, (-self.pieces[at][1], left, joined))

        for i in range(len(symbols) - 1):
            offer(i, i + 1)
        while agenda:
            _, left, joined = heapq.heappop(agenda)
            right = nxt[left]
            if right < 0 or not symbols[left] or symbols[left] + symbols[right] != joined:
                continue
            symbols[left], symbols[right] = joined, ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prv[nxt[right]] = left
            offer(prv[left], left)
            offer(left, nxt[left])
        return [s for s in symbols if s]

    def decode(self, ids: list[int]) -> str:
        """The text of ``ids``, as ``SentencePieceProcessor.decode`` writes it. O(len(ids)).

        A run of byte pieces is decoded a character at a time, each byte that starts no
        valid character as U+FFFD; their text is not unescaped (a ``▁`` made of bytes stays).
        Control pieces write nothing, the unknown piece `` ⁇ ``. Until some text is written,
        a piece's leading ``▁`` is the dummy prefix and is dropped (with ``add_dummy_prefix``
        or ``remove_extra_whitespaces``; without the latter, only once).
        """
        out: list[str] = []
        pending = bytearray()
        strip = self.flag("add_dummy_prefix") or self.flag("remove_extra_whitespaces")
        at_start, stripped = True, False
        for at in ids:
            piece, _, kind = self.pieces[at]
            if kind == BYTE:
                pending.append(int(_BYTE.fullmatch(piece).group(1), 16))
                continue
            if pending:
                out.append(_bytes_text(pending))
                pending.clear()
            if stripped or any(out):
                at_start = False
            stripped = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                out.append(self.trainer_spec.get("unk_surface", " \u2047 "))
                continue
            if at_start and strip and piece.startswith(SPACE):
                piece = piece[1:]
                stripped = not self.flag("remove_extra_whitespaces")
            out.append(piece.replace(SPACE, " "))
        if pending:
            out.append(_bytes_text(pending))
        return "".join(out)


def _bytes_text(data: bytearray) -> str:
    """``data`` decoded a character at a time, each byte that starts no valid UTF-8 character
    as U+FFFD (sentencepiece's decoding of byte pieces; Python's ``"replace"`` would write one
    U+FFFD for a cut character of several bytes)."""
    out, at = [], 0
    while at < len(data):
        lead = data[at]
        size = 1 if lead < 0x80 else 2 if 0xC2 <= lead <= 0xDF else 3 if 0xE0 <= lead <= 0xEF \
            else 4 if 0xF0 <= lead <= 0xF4 else 0
        try:
            out.append(bytes(data[at:at + size]).decode("utf-8") if size else "\ufffd")
        except UnicodeDecodeError:
            size = 0
            out.append("\ufffd")
        at += size or 1
    return "".join(out)


def _normalizer_of(options) -> dict:
    """The normaliser spec a model trained with ``options`` carries."""
    if options is None:
        return {"name": "identity", "precompiled_charsmap": b""}
    spec = {"name": options.normalization_rule_name,
            "precompiled_charsmap": charsmap(options.normalization_rule_name)}
    for name in ("add_dummy_prefix", "remove_extra_whitespaces"):
        if name in options.given:
            spec[name] = getattr(options, name)
    return spec


def charsmap(rule: str) -> bytes:
    """sentencepiece's precompiled character map of a normalisation rule (empty for identity)."""
    if rule == "identity":
        return b""
    from bytepair.split.spm_text import sentencepiece_module

    spm = sentencepiece_module()
    from sentencepiece import sentencepiece_model_pb2

    spec = sentencepiece_model_pb2.NormalizerSpec()
    spec.ParseFromString(spm.SentencePieceNormalizer(rule_name=rule).serialized_normalizer_spec())
    return spec.precompiled_charsmap


def _normalizer(spec: dict, suffix: bool = False):
    """A function normalising text as a model with normaliser ``spec`` does (``suffix``: the
    model treats whitespace as a suffix, so the dummy ``▁`` goes last)."""
    if suffix and spec.get("add_dummy_prefix", True):
        inner = _normalizer(dict(spec, add_dummy_prefix=False))
        space = SPACE if spec.get("escape_whitespaces", True) else " "

        def with_suffix(text: str) -> str:
            text = inner(text)
            return text + space if text else text
        return with_suffix
    prefix = spec.get("add_dummy_prefix", True)
    extra = spec.get("remove_extra_whitespaces", True)
    escape = spec.get("escape_whitespaces", True)
    space = SPACE if escape else " "
    if not spec.get("precompiled_charsmap"):
        def identity(text: str) -> str:
            if extra:
                text = " ".join(filter(None, text.split(" ")))
            if not text:
                return ""
            return (" " + text if prefix else text).replace(" ", space)
        return identity
    from bytepair.split.spm_text import sentencepiece_module
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.NormalizerSpec(
        name=spec.get("name", ""), precompiled_charsmap=spec["precompiled_charsmap"],
        add_dummy_prefix=prefix, remove_extra_whitespaces=extra, escape_whitespaces=escape)
    normalizer = sentencepiece_module().SentencePieceNormalizer(normalizer_spec=proto)
    return normalizer.normalize
