"""The tokenizer type: a byte model (pre-tokenizer and rules) plus special tokens.

IDs: 0-255 are the bytes, ``256 + rank`` the learned tokens, and the special
tokens follow, in the order given: the first special token has ID
``256 + len(merges)``. Training lives in :mod:`bytepair.trainers`, files in
:mod:`bytepair.io`, exports in :mod:`bytepair.export`.
"""

from __future__ import annotations

import os
from typing import Collection, Iterable, Sequence

import regex

from ._validate import check_int, check_special_tokens
from .model import BYTE_TOKENS, ByteModel
from .modelfile import write_model_file
from .rules import Merge


class Tokenizer:
    """A byte-level BPE tokenizer: pre-tokenizer, rules and special tokens.

    >>> import bytepair
    >>> tok = bytepair.train(["low lower lowest"] * 3, merges=4, pretokenize="gpt2",
    ...                      special_tokens=["<|end|>"], progress=False)
    >>> tok.vocab_size, tok.special_tokens
    (261, {'<|end|>': 260})
    >>> ids = tok.encode("lowest<|end|>", allowed_special="all")
    >>> ids[-1], tok.decode(ids)
    (260, 'lowest<|end|>')
    """

    def __init__(self, model: ByteModel, special_tokens: Sequence[str] = ()):
        self.model = model
        special_tokens = check_special_tokens(special_tokens)
        first = model.vocab_size
        self.special_tokens: dict[str, int] = {t: first + i for i, t in enumerate(special_tokens)}
        self._special_of_id = {i: t for t, i in self.special_tokens.items()}
        self._vocab: dict[bytes, int] | None = None  # built by token_to_id on first use

    def __repr__(self) -> str:
        return (f"<Tokenizer vocab_size={self.vocab_size} merges={len(self.merges)} "
                f"special_tokens={len(self.special_tokens)}>")

    def __eq__(self, other) -> bool:
        return (isinstance(other, Tokenizer) and self.model == other.model
                and self.special_tokens == other.special_tokens)

    @property
    def pattern(self) -> str | None:
        """The pre-tokenizer regex source (None: no split)."""
        return self.model.pattern

    @property
    def merges(self) -> list[Merge]:
        return self.model.merges

    @property
    def vocab_size(self) -> int:
        """256 bytes + learned tokens + special tokens."""
        return self.model.vocab_size + len(self.special_tokens)

    def truncate(self, vocab_size: int) -> "Tokenizer":
        """The tokenizer of vocabulary ``vocab_size``: the first rules, then the special tokens.

        Equal to training to ``vocab_size`` on the same data, since a smaller
        fit's rules are a prefix of a larger one's; the special tokens keep
        their order and move down to follow the learned tokens. O(merges).
        """
        least = BYTE_TOKENS + len(self.special_tokens)
        vocab_size = check_int(vocab_size, "vocab_size", minimum=least, maximum=self.vocab_size)
        return Tokenizer(self.model.truncate(vocab_size - least), list(self.special_tokens))

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of a token; a special token's bytes are its UTF-8 text."""
        token_id = check_int(token_id, "token_id", maximum=self.vocab_size - 1)
        special = self._special_of_id.get(token_id)
        return special.encode("utf-8") if special is not None else self.model.token_bytes(token_id)

    def id_to_token(self, token_id: int) -> bytes:
        """The bytes of a token (the same as :meth:`token_bytes`)."""
        return self.token_bytes(token_id)

    def vocab(self) -> dict[bytes, int]:
        """Every token's bytes -> its ID, special tokens (as UTF-8) included. O(V).

        When two IDs stand for the same bytes (a special token spelled like a
        learned token, or a hand-made rule table), the smaller ID is kept.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer(bytepair.train_bytes(["aaa"], 1), ["<s>"])
        >>> vocab = tok.vocab()
        >>> len(vocab), vocab[b"aa"], vocab[b"<s>"]
        (258, 256, 257)
        """
        table: dict[bytes, int] = {}
        for token_id in range(self.vocab_size):
            table.setdefault(self.token_bytes(token_id), token_id)
        return table

    def token_to_id(self, token: bytes | str) -> int | None:
        """The ID of a token given as bytes, or as text (a special token's, or UTF-8 bytes).

        ``None`` when no token has exactly these bytes. O(V) on the first
        call (it builds :meth:`vocab`), O(1) after.

        >>> import bytepair
        >>> tok = bytepair.Tokenizer(bytepair.train_bytes(["aaa"], 1), ["<s>"])
        >>> tok.token_to_id("aa"), tok.token_to_id(b"a"), tok.token_to_id("<s>"), tok.token_to_id("zz")
        (256, 97, 257, None)
        """
        special = self.special_tokens.get(token) if isinstance(token, str) else None
        if special is not None:
            return special
        if isinstance(token, str):
            token = token.encode("utf-8")
        elif not isinstance(token, (bytes, bytearray, memoryview)):
            raise TypeError(f"token must be bytes or str, got {type(token).__name__}")
        if self._vocab is None:
            self._vocab = self.vocab()
        return self._vocab.get(bytes(token))

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` treating special-token text as ordinary text."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self.model.encode(text)

    def encode(self, text: str, *, allowed_special: Collection[str] | str = frozenset(),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        """Encode ``text``; special tokens as tiktoken does.

        Special-token text in ``allowed_special`` (or ``"all"``) becomes its
        ID; text of a special token in ``disallowed_special`` (default: every
        one not allowed) raises ValueError; any other text is ordinary.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        allowed = set(self.special_tokens) if allowed_special == "all" else set(allowed_special)
        unknown = allowed - set(self.special_tokens)
        if unknown:
            raise ValueError(f"allowed_special: not special tokens of this tokenizer: {sorted(unknown)}")
        disallowed = (set(self.special_tokens) - allowed if disallowed_special == "all"
                      else set(disallowed_special))
        for token in disallowed:
            if token in text:
                raise ValueError(
                    f"text contains the special token {token!r} (ID {self.special_tokens[token]}); "
                    "pass allowed_special to encode it as its ID, or disallowed_special=() to "
                    "encode it as text"
                )
        if not allowed:
            return self.model.encode(text)
        # Longest first, so that a special token containing another wins.
        splitter = regex.compile("(" + "|".join(
            regex.escape(t) for t in sorted(allowed, key=len, reverse=True)) + ")")
        out: list[int] = []
        for i, part in enumerate(splitter.split(text)):
            if i % 2:
                out.append(self.special_tokens[part])
            elif part:
                out.extend(self.model.encode(part))
        return out

    def encode_batch(self, texts: Iterable[str], **options) -> list[list[int]]:
        """:meth:`encode` for each text."""
        return [self.encode(text, **options) for text in texts]

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The exact bytes of a token sequence, special tokens included."""
        ids = list(ids)
        out = []
        start = 0
        for position, token in enumerate(ids):
            if token in self._special_of_id and not isinstance(token, bool):
                out.append(self.model.decode(ids[start:position]))
                out.append(self._special_of_id[token].encode("utf-8"))
                start = position + 1
        try:
            out.append(self.model.decode(ids[start:]))
        except ValueError as exc:
            # Re-number the position and name the full vocabulary.
            raise ValueError(f"ids contain an ID outside the vocabulary (0..{self.vocab_size - 1}): {exc}") from None
        return b"".join(out)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode to text; bytes that are not UTF-8 follow ``errors`` (as ``bytes.decode``)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace") -> list[str]:
        """:meth:`decode` for each ID sequence."""
        return [self.decode(ids, errors=errors) for ids in batch]

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer to ``path`` atomically (see ``docs/format.md``); read it with :func:`bytepair.load`."""
        write_model_file(path, "tokenizer", {"pattern": self.pattern,
                                             "special_tokens": list(self.special_tokens)}, self.merges)
