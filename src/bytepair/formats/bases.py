"""A tokenizer to extend (``bytepair extend``), read with every ID it has.

:func:`read_base` reads a Hugging Face ``tokenizer.json`` (byte-level BPE), a ``transformers``
tokenizer directory, a tiktoken ranks file (with its pattern and special tokens) or a bytepair
model, as a :class:`Base`: each model token's bytes by ID, the merges as pairs of IDs in rank
order, the added tokens, and the pipeline as bytepair runs it (an NFC normalizer or none, a
pattern). Whatever bytepair cannot run byte for byte as the source does is refused in one
line naming it (:class:`~bytepair.formats.common.ImportRefused`): extending approximately
would give the model IDs for text its tokenizer never makes.

:meth:`Base.encode_spans` gives the base's own encoding of many pieces at once: merge by merge
in rank order (what ``tokenizers``' BPE does, lowest rank first, leftmost first), or lookup
first when the base sets ``ignore_merges`` (Llama-3; tiktoken). It runs on bytepair's compiled
encoder when the merges are ordinary BPE (each joins two tokens made before it and makes a
token no earlier merge made), else on :func:`merge_piece`, a plain statement of the same.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from bytepair.formats import foreign
from bytepair.formats.common import ImportRefused, bytes_to_unicode, read_pattern, steps_of
from bytepair.formats.imports import check_model, looks_like_tiktoken
from bytepair.learn.incremental import gc_paused
from bytepair.model.codec import new_encoder
from bytepair.model.models import BYTE_TOKENS
from bytepair.model.spans import encode_spans
from bytepair.model.tokenizer import Tokenizer

_CHAR_BYTE = {char: byte for byte, char in bytes_to_unicode().items()}
_BYTE_LEVEL = frozenset(_CHAR_BYTE)
#: Each byte-level character to the Latin-1 character of its byte (``str.translate``).
_AS_LATIN_1 = {ord(char): byte for char, byte in _CHAR_BYTE.items()}
#: The normalizers bytepair runs as ``tokenizers`` does.
NORMALIZERS = ("NFC",)


@dataclass
class Base:
    """A tokenizer to extend. IDs are the source's own.

    ``tokens``: every model token's bytes by ID; ``merges``: ``(left, right, token)`` IDs in
    rank order; ``added``: ``(content, ID)`` of each added token (split out of the text before
    it is cut into pieces, never merged); ``pattern``: the pre-tokenizer as a bytepair regex
    (None: no split), and ``then``: the regexes that cut each piece again, in turn (a
    ``Sequence`` of ``Split`` steps, as DeepSeek's); ``normalizer``: ``"NFC"`` or None. ``kind`` names the source format and
    ``source`` holds what writing it back needs (the parsed ``tokenizer.json``, the directory,
    the bytepair Tokenizer).
    """

    kind: str
    tokens: dict[int, bytes]
    merges: list[tuple[int, int, int]]
    added: list[tuple[str, int]]
    pattern: str | None
    normalizer: str | None = None
    ignore_merges: bool = False
    source: object = None
    directory: Path | None = None
    then: tuple[str, ...] = ()
    _inner: tuple | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self._lookup = {data: token_id for token_id, data in self.tokens.items()}
        if len(self._lookup) < len(self.tokens):  # bytes spelled twice: the smallest ID
            self._lookup = {data: token_id for token_id, data in sorted(self.tokens.items(),
                                                                        reverse=True)}
        self._inner = _inner_rules(self.tokens, self.merges)
        # IDs that are bytepair's own need no mapping (a base bytepair wrote, say).
        self._same_ids = self._inner is not None and self._inner[2] == list(
            range(len(self._inner[2])))

    @property
    def ids(self) -> set[int]:
        """Every ID the base uses: model tokens and added tokens."""
        return set(self.tokens) | {token_id for _, token_id in self.added}

    @property
    def size(self) -> int:
        """Distinct IDs: the vocabulary's size as ``vocab_size`` counts it."""
        return len(self.ids)

    def spellings(self) -> dict[int, bytes]:
        """Bytes by ID, the added tokens' text included (a model token's spelling wins)."""
        spelled = {token_id: content.encode() for content, token_id in self.added}
        spelled.update(self.tokens)
        return spelled

    def segments(self, text: str) -> list[str | int]:
        """``text`` through the base's pipeline up to its pre-tokenizer: the text between added
        tokens, normalized (a ``str``), and each added token as its ID (an ``int``). Added
        tokens are matched longest first at each place, as ``tokenizers`` matches them."""
        split = getattr(self, "_splitter", None)
        if split is None:
            contents = sorted({content for content, _ in self.added if content}, key=len,
                              reverse=True)
            split = self._splitter = (re.compile("(" + "|".join(map(re.escape, contents))
                                                 + ")").split if contents else None)
        parts = [text] if split is None else split(text)
        out: list[str | int] = []
        ids = dict(self.added)
        for k, part in enumerate(parts):
            if k % 2:
                out.append(ids[part])
            elif part:
                out.append(part if self.normalizer is None
                           else unicodedata.normalize(self.normalizer, part))
        return out

    def encode(self, text: str) -> list[int]:
        """``text`` encoded by the base (added tokens matched, no post-processor). O(n)."""
        cut = self.cutter()
        ids: list[int] = []
        for segment in self.segments(text):
            if isinstance(segment, int):
                ids.append(segment)
                continue
            pieces = [piece.encode() for piece in cut(segment)]
            starts = array("q", [0])
            for piece in pieces:
                starts.append(starts[-1] + len(piece))
            ids.extend(self.encode_spans(b"".join(pieces), starts)[0])
        return ids

    def cutter(self):
        """The pre-tokenizer: a function from text to its pieces (``str``), in order."""
        from bytepair.split.pretokenize import splitter  # at first use: regex is slow to import

        steps = [splitter(p) for p in (self.pattern, *self.then) if p is not None]

        def cut(text: str) -> list[str]:
            pieces = [text]
            for step in steps:
                pieces = [part for piece in pieces for part in step(piece)]
            return pieces

        return cut

    def encode_piece(self, piece: bytes) -> list[int]:
        """The base's IDs for one piece. O(len(piece)^2) on the plain path."""
        if self.ignore_merges and piece in self._lookup:
            return [self._lookup[piece]]
        if self._inner is None:
            return merge_piece(piece, self._lookup, self._ranks())
        outer = self._inner[2]
        return [outer[t] for t in self._encoder().encode(piece)] if piece else []

    def unreachable(self) -> list[int]:
        """IDs of the model's tokens (longer than a byte) whose bytes the merges do not encode
        as that one token; with ``ignore_merges`` such a token is still given for a piece that
        is exactly its bytes, and for no other. O(total bytes of the tokens x log)."""
        looked_up, self.ignore_merges = self.ignore_merges, False
        try:
            return sorted(token_id for token_id, data in self.tokens.items()
                          if len(data) > 1 and self.encode_piece(data) != [token_id])
        finally:
            self.ignore_merges = looked_up

    def encode_spans(self, data: bytes, starts: array, threads: int = 1) -> tuple[array, array]:
        """Each piece ``data[starts[k]:starts[k + 1]]`` encoded by the base, laid end to end,
        with where each piece's IDs begin (as :meth:`bytepair.ByteModel.encode_spans`), on
        ``threads`` threads when the compiled encoder serves (it runs without the GIL)."""
        if self._inner is None:
            ids, offsets = array("I"), array("q", [0])
            for start, end in zip(starts, starts[1:]):
                ids.extend(self.encode_piece(data[start:end]))
                offsets.append(len(ids))
            return ids, offsets
        inner, offsets = encode_spans(_Spans(self._encoder()), data, array("q", starts),
                                      threads)
        outer = self._inner[2]
        ids = inner if self._same_ids else array("I", map(outer.__getitem__, inner))
        if self.ignore_merges:
            ids, offsets = self._looked_up(data, starts, ids, offsets)
        return ids, offsets

    def _looked_up(self, data, starts, ids, offsets) -> tuple[array, array]:
        """Pieces that spell a token, as that token (``ignore_merges``). Only a piece that
        the merges leave in several tokens changes, so only the spellings of
        :meth:`_apart` are looked up, and with none (every tiktoken base) no piece is."""
        lookup, out, at = self._apart(), array("I"), array("q", [0])
        if not lookup:
            return ids, offsets
        for k in range(len(starts) - 1):
            lo, hi = offsets[k], offsets[k + 1]
            found = lookup.get(data[starts[k]:starts[k + 1]]) if hi - lo > 1 else None
            if found is None:
                out.extend(ids[lo:hi])
            else:
                out.append(found)
            at.append(len(out))
        return out, at

    def _apart(self) -> dict[bytes, int]:
        """Each spelling of a token that the merges encode as several tokens, with the ID
        that lookup first gives it. O(total bytes of the tokens x log), once."""
        apart = getattr(self, "_apart_spellings", None)
        if apart is None:
            spelled = [data for data in self._lookup if len(data) > 1]
            _, at = encode_spans(_Spans(self._encoder()), b"".join(spelled),
                                 array("q", [0, *accumulate(map(len, spelled))]), 1)
            apart = self._apart_spellings = {
                data: self._lookup[data] for k, data in enumerate(spelled)
                if at[k + 1] - at[k] > 1}
        return apart

    def _encoder(self):
        encoder = getattr(self, "_compiled", None)
        if encoder is None:
            encoder = self._compiled = new_encoder(array("I", self._inner[0]),
                                                   array("I", self._inner[1]))
        return encoder

    def _ranks(self) -> dict[tuple[int, int], tuple[int, int]]:
        ranks = getattr(self, "_rank_table", None)
        if ranks is None:
            ranks = self._rank_table = {}
            for rank, (left, right, token) in enumerate(self.merges):
                ranks[(left, right)] = (rank, token)  # a repeated pair: the last rank, as tokenizers
        return ranks


class _Spans:
    """An encoder as :func:`bytepair.model.spans.encode_spans` takes a model."""

    def __init__(self, encoder):
        self.encode_spans = encoder.encode_spans


def merge_piece(piece: bytes, lookup: dict[bytes, int], ranks: dict) -> list[int]:
    """``tokenizers``' BPE on one piece: start from its bytes' tokens, join the adjacent pair
    of the lowest rank (leftmost first) until no pair has one. O(len(piece)^2)."""
    ids = [lookup[piece[i:i + 1]] for i in range(len(piece))]
    while len(ids) > 1:
        best = None
        for i in range(len(ids) - 1):
            found = ranks.get((ids[i], ids[i + 1]))
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], i, found[1])
        if best is None:
            break
        _, i, token = best
        ids[i:i + 2] = [token]
    return ids


def _inner_rules(tokens: dict[int, bytes], merges) -> tuple | None:
    """``(lefts, rights, outer)``: the merges as bytepair's rules (bytes 0..255, then
    ``256 + rank``) and each rule's token ID in the base, or None when they are not
    ordinary BPE (a merge joins a token no earlier merge made, or makes one again)."""
    outer = [None] * BYTE_TOKENS
    inner_of: dict[int, int] = {}
    for token_id, data in tokens.items():
        if len(data) == 1:
            outer[data[0]] = token_id
            inner_of[token_id] = data[0]
    if None in outer:
        return None
    lefts, rights = [], []
    for left, right, token in merges:
        if left not in inner_of or right not in inner_of or token in inner_of:
            return None
        inner_of[token] = BYTE_TOKENS + len(lefts)
        lefts.append(inner_of[left])
        rights.append(inner_of[right])
        outer.append(token)
    return lefts, rights, outer


# -- reading -----------------------------------------------------------------

def read_base(path: str | os.PathLike, *, pattern=None, special_tokens=None,
              trust_pattern: bool = False) -> Base:
    """The :class:`Base` in ``path``: a ``tokenizer.json``, a directory holding one (with
    ``tokenizer_config.json`` and the rest, carried over when written back), a tiktoken ranks
    file (``pattern`` and ``special_tokens`` as :func:`bytepair.load` takes them) or a
    bytepair model. Anything else is refused in one line naming what it is."""
    name = os.fspath(path)
    if os.path.isdir(path):
        inside = Path(path) / "tokenizer.json"
        if not inside.is_file():
            raise ImportRefused(f"{name!r} is a directory without a tokenizer.json (a "
                                f"transformers tokenizer directory holds one)")
        base = read_base(inside, trust_pattern=trust_pattern)
        base.kind, base.directory = "transformers", Path(path)
        return base
    with open(path, "rb") as handle:
        data = handle.read()
    what = foreign.binary_file(data[:1 << 16])
    if what is not None:
        raise ImportRefused(f"{name!r} {what}")
    text = data.decode("utf-8", "replace")
    if pattern is not None or special_tokens is not None or looks_like_tiktoken(text):
        from bytepair.formats.load import load  # at first use: load imports this module's peers

        return from_tokenizer(load(path, pattern=pattern, special_tokens=special_tokens,
                                   trust_pattern=trust_pattern), "tiktoken")
    try:
        document = json.loads(text)
    except RecursionError:
        raise ImportRefused(f"{name!r} is not a tokenizer: arrays or objects nested deeper than "
                            "Python's JSON reader goes") from None
    except ValueError:
        what = foreign.text_file(text)
        raise ImportRefused(f"{name!r} {what or 'is neither JSON nor a tiktoken ranks file'}") \
            from None
    if isinstance(document, dict) and isinstance(document.get("model"), dict):
        return from_tokenizers_document(document, trust_pattern=trust_pattern)
    if isinstance(document, dict) and document.get("format") == "bytepair-model":
        from bytepair.formats.load import load

        return from_tokenizer(load(path, trust_pattern=trust_pattern), "bytepair")
    what = foreign.json_file(document, os.path.basename(name))
    raise ImportRefused(f"{name!r} {what or 'is not a tokenizer bytepair can extend'}")


def from_tokenizer(tokenizer, kind: str = "bytepair") -> Base:
    """A bytepair Tokenizer (or ByteModel) as a base, with its outer IDs."""
    if not isinstance(tokenizer, Tokenizer):
        if not hasattr(tokenizer, "merges") or not hasattr(tokenizer, "pattern"):
            raise ImportRefused(f"a {type(tokenizer).__name__} is not a byte-level tokenizer; "
                                f"bytepair extends byte-level BPE only")
        tokenizer = Tokenizer(tokenizer)
    model = tokenizer.model
    outer = tokenizer.ids or list(range(tokenizer.vocab_size))
    with gc_paused():  # a tuple per merge: collections would walk them again and again
        tokens = dict(zip(outer, model.all_token_bytes()))
        merges = [(outer[m.left], outer[m.right], outer[m.token_id]) for m in model.merges]
        added = [(special, outer[model.vocab_size + k])
                 for k, special in enumerate(tokenizer.special_tokens)]
        return Base(kind, tokens, merges, added, model.pattern,
                    ignore_merges=kind == "tiktoken", source=tokenizer)


def from_tokenizers_document(document: dict, *, trust_pattern: bool = False) -> Base:
    """A parsed ``tokenizer.json`` as a base: byte-level BPE, an NFC normalizer or none, and a
    pre-tokenizer bytepair splits with byte for byte; else ImportRefused naming what it has."""
    model = document["model"]
    check_model(model)
    normalizer = _normalizer(document.get("normalizer"))
    pattern, *then = _patterns(document.get("pre_tokenizer"), trust_pattern)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise ImportRefused("model.vocab must be an object of token -> integer ID")
    added = []
    for index, token in enumerate(document.get("added_tokens") or []):
        if not isinstance(token, dict) or not isinstance(token.get("content"), str) \
                or not isinstance(token.get("id"), int):
            raise ImportRefused(f"added_tokens[{index}] needs a content and an id")
        for flag in ("lstrip", "rstrip", "single_word"):
            if token.get(flag):
                raise ImportRefused(f"added token {token['content']!r} has {flag}, which "
                                    f"bytepair does not reproduce when it splits them out")
        added.append((token["content"], token["id"]))
    added_ids = {token_id for _, token_id in added}
    tokens = {}
    for string, token_id in vocab.items():
        if token_id in added_ids:
            continue  # an added token folded into the vocabulary (BpeTrainer's special tokens)
        data = _token_bytes(string)
        if data is None:
            raise ImportRefused(f"vocab entry {string!r} is not spelled in the byte-level "
                                f"alphabet, so the model is not byte-level BPE")
        tokens[token_id] = data
    singles = {data for data in tokens.values() if len(data) == 1}
    missing = [b for b in range(BYTE_TOKENS) if bytes([b]) not in singles]
    if missing:
        raise ImportRefused(f"the vocabulary lacks {len(missing)} of the 256 bytes (first: byte "
                            f"{missing[0]}); tokenizers drops such bytes, and extending would "
                            f"count text the base cannot encode")
    merges = []
    for rank, item in enumerate(model.get("merges") or []):
        parts = item.split(" ") if isinstance(item, str) else item
        if not isinstance(parts, list) or len(parts) != 2 or parts[0] not in vocab \
                or parts[1] not in vocab or parts[0] + parts[1] not in vocab:
            raise ImportRefused(f"merges[{rank}] {item!r} does not join two vocabulary tokens "
                                f"into a third")
        merges.append((vocab[parts[0]], vocab[parts[1]], vocab[parts[0] + parts[1]]))
    return Base("tokenizers", tokens, merges, added, pattern, normalizer,
                bool(model.get("ignore_merges")), source=document, then=tuple(then))


def _patterns(pre_tokenizer, trust_pattern: bool) -> list[str | None]:
    """The pre-tokenizer's regexes in turn: one (ByteLevel alone, or a Split then ByteLevel),
    or several for a Sequence of Isolated Splits before a ByteLevel without a regex, each
    checked as bytepair checks one (:func:`bytepair.formats.common.read_pattern`)."""
    steps = steps_of(pre_tokenizer, "pretokenizers")
    if len(steps) < 3 or any(step.get("type") != "Split" for step in steps[:-1]):
        return [read_pattern(pre_tokenizer, trust_pattern)]
    byte_level = steps[-1]
    return [read_pattern({"type": "Sequence", "pretokenizers": [split, byte_level]}, trust_pattern)
            for split in steps[:-1]]


def _token_bytes(string: str) -> bytes | None:
    """A byte-level vocabulary string's bytes; None when a character is not in the alphabet."""
    if not _BYTE_LEVEL.issuperset(string):
        return None
    return string.translate(_AS_LATIN_1).encode("latin-1")


def _normalizer(normalizer) -> str | None:
    """``"NFC"`` or None for what bytepair runs as ``tokenizers`` does; else refused."""
    if normalizer is None:
        return None
    steps = normalizer.get("normalizers", []) if normalizer.get("type") == "Sequence" \
        else [normalizer]
    kinds = [step.get("type") for step in steps]
    if not kinds:
        return None
    if len(kinds) == 1 and kinds[0] in NORMALIZERS:
        return kinds[0]
    raise ImportRefused(f"the normalizer ({', '.join(map(str, kinds))}) is not one bytepair runs "
                        f"byte for byte as tokenizers does (it runs {', '.join(NORMALIZERS)}); "
                        f"extending approximately would give IDs the tokenizer never makes")
