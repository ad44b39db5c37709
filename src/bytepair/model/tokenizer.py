"""The tokenizer type: a byte model (pre-tokenizer and rules) plus special tokens.

IDs: 0-255 are the bytes, ``256 + rank`` the learned tokens, and the special
tokens follow, in the order given: the first special token has ID
``256 + len(merges)``. A tokenizer imported from another library keeps that
library's numbering through an ID map (``Tokenizer(..., ids=...)``): the
encoder works in the scheme above, and IDs are mapped on the way out and
back. Training lives in :mod:`bytepair.training`, files in
:mod:`bytepair.formats.load`, exports in :mod:`bytepair.formats.export`.
"""

from __future__ import annotations

import os
from array import array
from typing import Collection, Iterable, Sequence


from bytepair.model import codec, parts
from bytepair._util.errors import Advice, ArgumentError
from bytepair._util.validate import check_int, check_size, check_special_tokens
from bytepair.model.models import BYTE_TOKENS, ByteModel, model_fields
from bytepair.model.modelfile import write_model_file
from bytepair.learn.rules import Merge

#: Special-token matchers kept per tokenizer (one per distinct set of tokens).
MATCHER_CACHE = 32
#: Up to this many special tokens are looked for one by one, not with a regex.
FEW_SPECIAL = 16
#: encode_to_array's dtypes: array typecode and bytes per ID.
ARRAY_TYPES = {"uint16": ("H", 2), "uint32": ("I", 4)}


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

    def __init__(self, model: ByteModel, special_tokens: Sequence[str] = (), *,
                 ids: Sequence[int] | None = None):
        """A tokenizer of ``model`` and ``special_tokens``. O(special tokens + len(ids)).

        ``model``
            The :class:`ByteModel`: pre-tokenizer pattern and rules.
        ``special_tokens``
            Texts (non-empty, none repeated) that get the IDs after the
            learned tokens, in this order.
        ``ids``
            Optional: number the tokens another way. ``ids[i]`` is the ID
            given out for the token that bytepair's scheme numbers ``i``
            (bytes, then ``256 + rank``, then the special tokens); a
            permutation of ``range(vocab_size)``. Imports use it to keep the
            IDs of the library a tokenizer came from; the identity is stored
            as no map.
        """
        if not isinstance(model, ByteModel):
            # A Tokenizer here would nest: its vocabulary and truncate would be wrong.
            raise TypeError(f"model must be a ByteModel, got {type(model).__name__}"
                            + ("; use tok.model" if isinstance(model, Tokenizer) else ""))
        self.model = model
        special_tokens = check_special_tokens(special_tokens)
        first = model.vocab_size
        self._out, self._in = _id_maps(ids, first + len(special_tokens))
        # The encoder's own IDs of the special tokens; special_tokens gives them mapped.
        self._inner_special = {t: first + i for i, t in enumerate(special_tokens)}
        self.special_tokens: dict[str, int] = {t: self._outer_id(i)
                                               for t, i in self._inner_special.items()}
        self._special_of_id = {i: t for t, i in self._inner_special.items()}
        self._vocab: dict[bytes, int] | None = None  # built by token_to_id on first use
        self._all_special = frozenset(self.special_tokens)
        # Special tokens that are not text are refused elsewhere; never fail here.
        self._special_bytes = tuple(t.encode("utf-8", "surrogatepass") for t in special_tokens)
        self._matchers: dict = {}  # frozenset of tokens -> compiled regex

    def __repr__(self) -> str:
        return (f"<Tokenizer vocab_size={self.vocab_size} merges={len(self.merges)} "
                f"special_tokens={len(self.special_tokens)}>")

    def __eq__(self, other) -> bool:
        return (isinstance(other, Tokenizer) and self.model == other.model
                and self.special_tokens == other.special_tokens and self.ids == other.ids)

    @property
    def ids(self) -> list[int] | None:
        """The ID map (``ids[i]``: the ID of the token bytepair numbers ``i``), None when IDs
        follow bytepair's scheme."""
        return None if self._out is None else list(self._out)

    def _outer_id(self, token_id: int) -> int:
        return token_id if self._out is None else self._out[token_id]

    def _outer(self, ids: list[int]) -> list[int]:
        """The encoder's IDs as this tokenizer gives them out (through the ID map)."""
        return ids if self._out is None else list(map(self._out.__getitem__, ids))

    def _inner(self, ids):
        """IDs given to decode in the encoder's scheme; IDs outside the vocabulary pass
        unchanged, for the decoder to name."""
        if self._in is None:
            return ids
        table, n = self._in, len(self._in)
        if isinstance(ids, array) and ids.typecode in "HI":
            return array("I", [table[i] if i < n else i for i in ids])
        return [table[i] if isinstance(i, int) and 0 <= i < n else i for i in ids]

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

        A tokenizer imported with its source's IDs (:attr:`ids`) keeps their
        order: the tokens kept are numbered ``0 .. vocab_size - 1`` in the
        order of their old IDs. A file whose IDs follow the rules (as a
        ``tokenizers`` BpeTrainer numbers them: special tokens, bytes, then the
        merges) keeps every ID, as cutting its last merges out by hand does.
        """
        least = BYTE_TOKENS + len(self.special_tokens)
        vocab_size = check_size(vocab_size, "vocab_size", minimum=least, maximum=self.vocab_size)
        model = self.model.truncate(vocab_size - least)
        if self._out is None:
            return Tokenizer(model, list(self.special_tokens))
        # The source's IDs of the tokens kept, in bytepair's order, then closed up.
        first = self.model.vocab_size
        kept = [*self._out[:model.vocab_size],
                *self._out[first:first + len(self.special_tokens)]]
        rank = {old: new for new, old in enumerate(sorted(kept))}
        return Tokenizer(model, list(self.special_tokens), ids=[rank[old] for old in kept])

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of the token ``token_id``; a special token's bytes are its UTF-8 text."""
        token_id = check_int(token_id, "token_id", maximum=self.vocab_size - 1)
        if self._in is not None:
            token_id = self._in[token_id]
        special = self._special_of_id.get(token_id)
        return special.encode("utf-8") if special is not None else self.model.token_bytes(token_id)

    def id_to_token(self, token_id: int) -> bytes:
        """The bytes of the token ``token_id`` (the same as :meth:`token_bytes`)."""
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
        """The ID of ``token``, given as bytes or as text (a special token's, or UTF-8 bytes).

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
        return self._outer(self.model.encode(text))

    def encode_bytes(self, data: bytes) -> list[int]:
        """Encode the raw bytes ``data``, special-token text as ordinary text: any bytes for a
        tokenizer without a pattern, UTF-8 with one (see :meth:`ByteModel.encode`)."""
        return self._outer(self.model.encode(data))

    def _matcher(self, tokens: frozenset):
        """A regex finding any of ``tokens``, longest first; built once per set of tokens."""
        matcher = self._matchers.get(tokens)
        if matcher is None:
            if len(self._matchers) >= MATCHER_CACHE:
                self._matchers.clear()
            import regex  # at first use: importing regex costs more than bytepair's own modules

            # Longest first, so that a special token containing another wins.
            matcher = regex.compile("(" + "|".join(
                regex.escape(t) for t in sorted(tokens, key=len, reverse=True)) + ")")
            self._matchers[tokens] = matcher
        return matcher

    def _special_sets(self, allowed_special, disallowed_special) -> tuple[frozenset, frozenset]:
        if allowed_special == "all":
            allowed = self._all_special
        else:
            allowed = frozenset(allowed_special)
            unknown = allowed - self._all_special
            if unknown:
                raise ValueError(
                    f"allowed_special: not special tokens of this tokenizer: {sorted(unknown)}")
        disallowed = (self._all_special - allowed if disallowed_special == "all"
                      else frozenset(disallowed_special))
        return allowed, disallowed

    def encode(self, text: str, *, allowed_special: Collection[str] | str = frozenset(),
               disallowed_special: Collection[str] | str = "all") -> list[int]:
        """Encode ``text``; special tokens as tiktoken does.

        Special-token text in ``allowed_special`` (or ``"all"``) becomes its
        ID; text of a special token in ``disallowed_special`` (default: every
        one not allowed) raises ValueError; any other text is ordinary. The
        special-token matchers are built once per set of tokens and kept.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        self._refuse_disallowed(text, disallowed)
        return self._outer(self._encode_allowing(text, allowed))

    def _refuse_disallowed(self, text: str, disallowed: frozenset, name: str = "text",
                           index: int | None = None) -> None:
        found = self._find_special(disallowed, text) if disallowed else None
        if found is not None:
            known = f" (ID {self.special_tokens[found]})" if found in self.special_tokens else ""
            raise ArgumentError(
                name, f"contains the special token {found!r}{known}; pass ",
                Advice("allowed_special"), " to encode it as its ID, or ",
                Advice("disallowed_special=()"), " to encode it as text", index=index)

    def _encode_allowing(self, text: str, allowed: frozenset) -> list[int]:
        """The encoder's IDs of ``text`` (not mapped), whose disallowed special tokens were
        looked for already."""
        if not allowed or self._find_special(allowed, text) is None:
            return self.model.encode(text)
        out: list[int] = []
        for i, part in enumerate(self._matcher(allowed).split(text)):
            if i % 2:
                out.append(self._inner_special[part])
            elif part:
                out.extend(self.model.encode(part))
        return out

    def encode_batch(self, texts: Iterable[str], *, threads: int | None = None,
                     allowed_special: Collection[str] | str = frozenset(),
                     disallowed_special: Collection[str] | str = "all") -> list[list[int]]:
        """:meth:`encode` of each of ``texts``, on ``threads`` threads (default: one per core).

        ``allowed_special`` and ``disallowed_special`` are as in :meth:`encode`.

        The compiled encoder holds the GIL only to take each text's buffer and
        to build the lists: UTF-8, the special-token search, splitting and
        merging run without it, so threads run in parallel. The result is the
        same for any number of threads. The texts are cut in contiguous parts
        of about equal size; each thread releases the GIL once and takes the
        next part until none is left (``bytepair.model.parts``). The threads read
        one piece cache of 24 MiB at most (``codec.CACHE_BYTES``), kept across
        calls; each learns new pieces in a cache of its own (up to as much
        again, during the call) that joins it when the call ends. The lists of IDs are left out of the
        cyclic garbage collector (they hold only ints; a million of them would
        slow every collection): a reference cycle that a caller builds through
        one of them is not collected.
        """
        texts = texts if isinstance(texts, list) else list(texts)
        threads = self._threads(threads)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        bounds = parts.cut(texts, threads)

        def finished(job, part: int) -> list[list[int]]:
            # The lists a thread built, and the texts that hold special-token text
            # encoded one by one (in order, so errors come as encode gives them).
            lists, skipped = job.lists(part)
            for index in skipped:
                lists[index] = self._encode_checked(texts, bounds[part] + index, allowed, disallowed)
            return lists

        def encode_chunk(start: int, stop: int):
            # In a worker: the IDs, and the texts that hold special-token text
            # encoded one by one. The lists are built by finish, in this thread.
            skip = self._skip(allowed | disallowed, texts, start, stop)
            if skip is None:  # some of many special tokens: text by text
                ids = [self._encode_checked(texts, index, allowed, disallowed)
                       for index in range(start, stop)]
                return lambda: ids
            batch = self.model.encode_batch_ids(texts, skip=skip, start=start, stop=stop)
            fixed = [(index, self._encode_checked(texts, start + index, allowed, disallowed))
                     for index in batch.skipped()]

            def finish() -> list[list[int]]:
                lists = batch.lists(track=False)  # a part: join_lists makes the result
                for index, ids in fixed:
                    lists[index] = ids
                return lists

            return finish

        # The parts stay out of the cyclic collector's sight until they are joined:
        # the collections that a million new lists set off would read them all.
        with self._encode_parts(texts, bounds, threads, allowed | disallowed, lists=True) as job:
            lists = codec.join_lists(
                [finished(job, part) for part in range(len(job))] if job is not None else
                [finish() for finish in parts.map_parts(encode_chunk, bounds, threads)])
        if self._out is not None:
            lookup = self._out.__getitem__
            for ids in lists:
                ids[:] = map(lookup, ids)  # in place: the lists stay out of the collector's sight
        return lists

    def encode_to_array(self, texts: Iterable[str], *, dtype: str = "uint32",
                        append: int | None = None, threads: int | None = None,
                        allowed_special: Collection[str] | str = frozenset(),
                        disallowed_special: Collection[str] | str = "all") -> array:
        """The IDs of all ``texts`` one after the other, ``append`` (an ID) after each.

        Returns ``array("H")`` for ``dtype="uint16"`` (refused when the
        vocabulary does not fit) or ``array("I")`` for ``"uint32"``: the
        concatenation of :meth:`encode_batch`'s lists, without a Python int
        per ID (for the named patterns). ``threads``, ``allowed_special`` and
        ``disallowed_special`` as in :meth:`encode_batch`.
        """
        if dtype not in ARRAY_TYPES:
            raise ValueError(f"dtype must be one of {', '.join(ARRAY_TYPES)}, got {dtype!r}")
        typecode, itemsize = ARRAY_TYPES[dtype]
        if self.vocab_size > 1 << (8 * itemsize):
            raise ValueError(f"dtype {dtype}: the vocabulary has {self.vocab_size} tokens, but "
                             f"{dtype} holds IDs up to {(1 << (8 * itemsize)) - 1} only")
        if append is not None:
            append = check_int(append, "append", maximum=self.vocab_size - 1)
            append = append if self._in is None else self._in[append]
        texts = texts if isinstance(texts, list) else list(texts)
        threads = self._threads(threads)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        bounds = parts.cut(texts, threads)

        def one_by_one(start: int, stop: int) -> bytes:
            ids = array(typecode)
            for index in range(start, stop):
                ids.extend(self._encode_checked(texts, index, allowed, disallowed))
                if append is not None:
                    ids.append(append)
            return ids.tobytes()

        def encode_chunk(start: int, stop: int) -> bytes:
            skip = self._skip(allowed | disallowed, texts, start, stop)
            if skip is not None:
                data = self.model.encode_batch_array(texts, itemsize, append, skip=skip,
                                                     start=start, stop=stop, accept_bytes=False)
                if data is not None:
                    return data
            return one_by_one(start, stop)

        def finished(job, part: int) -> bytes:
            data = job.array_bytes(part, itemsize)  # None: a text in it is not encoded
            return one_by_one(bounds[part], bounds[part + 1]) if data is None else data

        out = array(typecode)
        with self._encode_parts(texts, bounds, threads, allowed | disallowed, lists=False,
                                append=append, itemsize=itemsize) as job:
            for data in ((finished(job, part) for part in range(len(job))) if job is not None else
                         parts.map_parts(encode_chunk, bounds, threads)):
                out.frombytes(data)
        return out if self._out is None else array(typecode, map(self._out.__getitem__, out))

    def _encode_parts(self, texts: list, bounds: list[int], threads: int, specials: frozenset,
                      **options):
        """:func:`parts.encoding` of ``texts`` at ``bounds`` on ``threads`` threads; it gives
        None on one part, for many special tokens of which the texts hold some, or when
        only Python can encode them."""
        skip = self._skip(specials, texts, 0, len(texts)) if len(bounds) > 2 else None
        return parts.encoding(self.model, texts, bounds, threads, skip=skip, **options)

    def _threads(self, threads: int | None) -> int:
        return (check_int(threads, "threads", minimum=1) if threads is not None
                else os.cpu_count() or 1)

    def _skip(self, specials: frozenset, texts: list, start: int,
              stop: int) -> tuple[str, ...] | None:
        """The special tokens the compiled batch encoder must look for in ``texts[start:stop]``
        itself: all of them when they are few; none when a regex finds that those texts
        hold none; None when they hold some of many (they are then encoded one by one)."""
        if len(specials) <= FEW_SPECIAL:
            return tuple(sorted(specials))
        joined = "\0".join(t for t in texts[start:stop] if isinstance(t, str))
        return () if self._find_special(specials, joined) is None else None

    def _encode_checked(self, texts: list, index: int, allowed: frozenset,
                        disallowed: frozenset) -> list[int]:
        """:meth:`encode` of ``texts[index]``, its errors naming it by that index: a
        disallowed special token first, then text that UTF-8 cannot hold, as encode."""
        text = texts[index]
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] must be a str, got {type(text).__name__}")
        self._refuse_disallowed(text, disallowed, "texts", index)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"texts[{index}] is not encodable as UTF-8: {exc.reason} "
                                 f"at index {exc.start}") from None
        return self._encode_allowing(text, allowed)

    def _find_special(self, tokens: frozenset, text: str) -> str | None:
        """One of ``tokens`` that occurs in ``text``, or None.

        A few tokens are looked for with ``str.__contains__`` (fast); many
        with one regex, built once per set of tokens.
        """
        if len(tokens) <= FEW_SPECIAL:
            for token in sorted(tokens):
                if token in text:
                    return token
            return None
        found = self._matcher(tokens).search(text)
        return found.group() if found else None

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The exact bytes of the token sequence ``ids``, special tokens included; O(IDs + bytes).

        ``array("H")`` and ``array("I")`` of IDs are read without a list.
        """
        ids = self._inner(ids)
        if isinstance(ids, array) and ids.typecode in "HI":
            return self.model._codec.decode_array(ids, self._special_bytes)
        return self.model._codec.decode(ids, self._special_bytes)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ``ids``; bytes that are not UTF-8 follow ``errors`` (as ``bytes.decode``)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_batch(self, batch: Iterable[Iterable[int]], errors: str = "replace") -> list[str]:
        """:meth:`decode` of each sequence of IDs in ``batch``, with ``errors`` as there."""
        return [self.decode(ids, errors) for ids in batch]

    def decode_bytes_batch(self, batch: Iterable[Iterable[int]]) -> list[bytes]:
        """:meth:`decode_bytes` of each sequence of IDs in ``batch``."""
        return [self.decode_bytes(ids) for ids in batch]

    def save(self, path: str | os.PathLike) -> None:
        """Write the tokenizer to ``path`` atomically (see ``docs/format.md``); read it with :func:`bytepair.load`."""
        fields = {**model_fields(self.model), "special_tokens": list(self.special_tokens)}
        if self._out is not None:
            fields["ids"] = list(self._out)
        write_model_file(path, "tokenizer", fields, self.merges)


def _id_maps(ids, vocab_size: int) -> tuple[array | None, array | None]:
    """The ID map and its inverse, checked to be a permutation of ``range(vocab_size)``;
    (None, None) for no map or the identity. O(vocab_size)."""
    if ids is None:
        return None, None
    ids = list(ids)
    if len(ids) != vocab_size:
        raise ValueError(f"ids must hold one ID per token ({vocab_size}), got {len(ids)}")
    inverse = [-1] * vocab_size
    for inner, outer in enumerate(ids):
        if not isinstance(outer, int) or isinstance(outer, bool) or not 0 <= outer < vocab_size:
            raise ValueError(f"ids[{inner}] must be an int in 0..{vocab_size - 1}, got {outer!r}")
        if inverse[outer] >= 0:
            raise ValueError(f"ids[{inverse[outer]}] and ids[{inner}] are both {outer}")
        inverse[outer] = inner
    if ids == list(range(vocab_size)):
        return None, None
    return array("I", ids), array("I", inverse)
