"""Trained models: the frozen rules, the vocabulary, encoding and decoding."""

from __future__ import annotations

import operator
import os
from array import array
from itertools import repeat
from typing import Iterable, NamedTuple, Sequence

from bytepair.model import codec
from bytepair._util.validate import check_end_of_word, check_int
from bytepair.model.modelfile import write_model_file
from bytepair.split.pretokenize import PATTERNS, file_pattern, splitter
from bytepair.learn.rules import BYTE_TOKENS, Merge, replace_pair


class Stages(NamedTuple):
    """How a SuperBPE model was trained (see :mod:`bytepair.learn.superbpe`).

    ``transition`` is the vocabulary at the end of stage 1 (256 bytes plus
    the stage-1 rules), ``pretokenize`` the stage-1 pattern's regex source
    (None: no split), ``max_words`` the word cap of stage 2. The model's own
    ``pattern`` is the stage-2 pattern, with which it encodes.
    """

    transition: int
    pretokenize: str | None
    max_words: int


class ByteModel:
    """A byte-mode BPE model: 256 byte tokens plus one token per learned rule.

    Token ``256 + rank`` stands for the bytes of its rule's two tokens joined.
    ``sequences`` holds the transformed training documents when the model
    comes from training (``None`` when loaded from a file).

    Encoding and decoding run in the compiled encoder (``bytepair.model._encode``)
    when it is installed, else in its pure-Python twin; both give the same
    IDs. Memory is linear in the number of rules: token bytes are not all
    built (a chain of rules each extending the last token would make them
    quadratic), long tokens are expanded from their halves when needed.

    >>> import bytepair
    >>> model = bytepair.train_bytes([b"aaa", b"aba"], 2)
    >>> model.vocab_size, model.token_bytes(256), model.sequences
    (258, b'aa', [[256, 97], [257, 97]])
    >>> model.encode("abaaa"), model.decode([257, 256, 97])
    ([257, 256, 97], b'abaaa')
    """

    def __init__(self, merges: Iterable[Merge], sequences: list[list[int]] | None = None,
                 pattern: str | None = None, stages: Stages | None = None):
        """A model from its rules; they are checked (ValueError names the first bad one). O(rules).

        ``merges``
            The rules in rank order: rule ``r`` has rank ``r`` and token ID
            ``256 + r``, and joins two tokens made before it.
        ``sequences``
            The transformed training documents, when there are any to keep.
        ``pattern``
            The pre-tokenizer's regex source (None: each input is one piece).
        ``stages``
            For a SuperBPE model, how its two stages were trained (:class:`Stages`); then
            ``pattern`` is the stage-2 pattern.
        """
        self._set_up(merges, sequences, pattern, stages, checked=True)

    @classmethod
    def trusted(cls, merges: list[Merge], pattern: str | None,
                 stages: Stages | None = None) -> "ByteModel":
        """The model of the ``merges`` a trainer has just made (``Merge`` records in rank
        order), split with ``pattern`` (a regex source, or None), with SuperBPE's ``stages``
        (or None).

        They hold by construction (the tests hold every trainer to the naive
        one), so the constructor's checks, 20 ms at 32,768 rules, are left out.
        """
        model = cls.__new__(cls)
        model._set_up(merges, None, pattern, stages, checked=False)
        return model

    def _set_up(self, merges, sequences, pattern, stages, *, checked: bool) -> None:
        #: Pre-tokenizer regex source (None: each input is one piece).
        self.pattern = pattern
        #: For a SuperBPE model, how its two stages were trained (None otherwise).
        self.stages = Stages(*stages) if stages is not None else None
        self._split = None if pattern is None else (
            _SplitterAtFirstUse(pattern) if pattern in PATTERNS.values() else splitter(pattern))
        self.merges: list[Merge] = [m if type(m) is Merge else Merge(*m) for m in merges]
        if checked:
            lefts, rights = _checked_sides(self.merges)
        else:
            lefts = array("I", [m.left for m in self.merges])
            rights = array("I", [m.right for m in self.merges])
        # A Merge holds ints only: the cyclic collector need not visit one per rule.
        codec.untrack_int_records(self.merges)
        self._codec = codec.new_encoder(lefts, rights, None if self.stages is None
                                        else self.stages.transition - BYTE_TOKENS)
        self._pattern_code = codec.pattern_code(pattern)
        self._caches = codec.CachePool()
        self.sequences = sequences
        if self.stages is not None and not BYTE_TOKENS <= self.stages.transition <= self.vocab_size:
            raise ValueError(f"stages: transition {self.stages.transition} is not between "
                             f"{BYTE_TOKENS} and the vocabulary size {self.vocab_size}")

    def __repr__(self) -> str:
        split = "" if self.pattern is None else " pretokenized"
        superbpe = "" if self.stages is None else f" superbpe={self.stages.transition}"
        return f"<ByteModel vocab_size={self.vocab_size}{split}{superbpe}>"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, ByteModel)
            and self.merges == other.merges
            and self.pattern == other.pattern
            and self.stages == other.stages
        )

    @property
    def vocab_size(self) -> int:
        """256 byte tokens plus one per learned rule."""
        return BYTE_TOKENS + len(self.merges)

    def truncate(self, merges: int) -> "ByteModel":
        """The model of the first ``merges`` rules: what training to ``merges`` gives.

        A fit picks each rule from the counts left by the rules before it,
        so a smaller fit's rules are a prefix of a larger one's. The result
        has no ``sequences`` (they would need the training data). A SuperBPE
        model cut back to its transition or below is the stage-1 model, with
        the stage-1 pattern. O(merges).

        >>> import bytepair
        >>> big = bytepair.train_bytes(["abab abab", "aaa"], 5)
        >>> big.truncate(2) == bytepair.train_bytes(["abab abab", "aaa"], 2)
        True
        """
        merges = check_int(merges, "merges", maximum=len(self.merges))
        if self.stages is not None and BYTE_TOKENS + merges <= self.stages.transition:
            return ByteModel(self.merges[:merges], pattern=self.stages.pretokenize)
        return ByteModel(self.merges[:merges], pattern=self.pattern, stages=self.stages)

    def token_bytes(self, token_id: int) -> bytes:
        """The exact bytes the token ``token_id`` stands for (may be partial UTF-8); O(their length)."""
        token_id = check_int(token_id, "token_id", maximum=self.vocab_size - 1)
        return self._codec.token_bytes(token_id)

    def all_token_bytes(self) -> list[bytes]:
        """Every token's bytes, by ID: ``token_bytes`` of each, without a check per ID. O(their
        total length)."""
        return list(map(self._codec.token_bytes, range(self.vocab_size)))

    def token_length(self, token_id: int) -> int:
        """The number of bytes the token ``token_id`` stands for, O(1)."""
        token_id = check_int(token_id, "token_id", maximum=self.vocab_size - 1)
        return self._codec.token_length(token_id)

    def encode(self, data: bytes | str) -> list[int]:
        """The IDs of ``data`` (bytes, or str as UTF-8): the frozen rules in rank order, each in one
        left-to-right pass.

        With a pre-tokenizer ``pattern`` the input is split first (``bytes``
        must then be UTF-8) and each piece is encoded on its own. Pieces of at
        most 256 bytes go through a piece cache kept across calls and bounded in
        bytes: 24 MiB (``codec.CACHE_BYTES``) per call encoding at the same
        time (a batch on threads is one call; its threads each learn up to as
        much again until it ends), so memory does not grow with the calls. O(n log n)
        for n input bytes in the worst case, whatever the pieces.
        """
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        elif not isinstance(data, (bytes, str)):
            raise TypeError(f"data must be bytes or str, got {type(data).__name__}")
        if self._split is not None and self._pattern_code is None and isinstance(data, bytes):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"data: invalid UTF-8 at byte offset {exc.start}") from None
            data = text
        cache = self._caches.take()
        try:
            if self._split is None or self._pattern_code is not None:
                code = codec.PATTERN_NONE if self._split is None else self._pattern_code
                return self._codec.encode(data, code, cache)
            return self._codec.encode_pieces(self._split(data), cache)
        finally:
            self._caches.give(cache)

    def encode_batch(self, texts: list[str], *, skip: tuple[str, ...] = (), start: int = 0,
                     stop: int | None = None) -> list[list[int] | None]:
        """:meth:`encode` of each str of ``texts[start:stop]`` (``stop`` None: to the end), None
        for a text that contains one of ``skip`` (str); a text that UTF-8 cannot hold raises
        ValueError."""
        batch = self.encode_batch_ids(texts, skip=skip, start=start, stop=stop)
        batch.check()
        return batch.lists()

    def encode_batch_ids(self, texts: list[str], *, skip: tuple[str, ...] = (), start: int = 0,
                         stop: int | None = None):
        """:meth:`encode_batch` of ``texts[start:stop]`` in two steps, for threads: the IDs now,
        the lists later (``skip`` as there).

        Returns an object with ``lists()`` (the lists of :meth:`encode_batch`, None
        for every text not encoded; ``lists(track=False)`` leaves the outer
        list out of the cyclic collector, for :func:`bytepair.model.codec.join_lists`),
        ``skipped()`` (the positions in the range of the texts not encoded:
        those holding a ``skip`` string, and str that UTF-8 cannot hold) and
        ``check()`` (raises ValueError for the first of the latter). The
        compiled encoder holds the GIL only to take each text's buffer, so
        threads encoding batches run in parallel; ``lists()`` needs the GIL,
        and a pool does best to call it in one thread while its workers go
        on. A range rather than a slice: no copy of the list is made for the
        cyclic collector to walk.
        """
        stop = len(texts) if stop is None else stop
        if not 0 <= start <= stop <= len(texts):
            raise ValueError(f"texts[{start}:{stop}] is not a range of the {len(texts)} texts")
        if self._pattern_code is None or not codec.compiled():
            out, error = [], None
            for index in range(start, stop):
                text = texts[index]
                if not isinstance(text, str):
                    raise TypeError(f"texts[{index}] must be a str, got {type(text).__name__}")
                if any(s in text for s in skip):
                    out.append(None)
                    continue
                # As the compiled batch: a str that UTF-8 cannot hold is not encoded, and
                # check() names the first one by its index in texts.
                if not text.isascii():
                    try:
                        text.encode("utf-8")
                    except UnicodeEncodeError as exc:
                        out.append(None)
                        error = error or (f"texts[{index}] is not encodable as UTF-8: "
                                          f"{exc.reason} at index {exc.start}")
                        continue
                out.append(self.encode(text))
            return _BuiltLists(out, error)
        cache = self._caches.take()
        try:
            return self._codec.encode_batch_ids(texts, self._pattern_code, cache, skip, start, stop)
        finally:
            self._caches.give(cache)

    def encode_batch_array(self, texts: list, itemsize: int, append: int | None = None, *,
                           skip: tuple[str, ...] = (), start: int = 0, stop: int | None = None,
                           accept_bytes: bool = True) -> bytes | None:
        """The IDs of all of ``texts[start:stop]`` one after the other (the ID ``append`` after each)
        as raw native unsigned ints of ``itemsize`` bytes; None when only the Python path can
        encode them (a custom pattern, no compiled encoder, or a text that contains one of
        ``skip``). ``bytes`` texts (UTF-8 when the model splits) are refused unless
        ``accept_bytes``."""
        if self._pattern_code is None or not codec.compiled():
            return None
        cache = self._caches.take()
        try:
            return self._codec.encode_batch_array(
                texts, self._pattern_code, cache, -1 if append is None else append, itemsize,
                skip, start, stop, accept_bytes)
        finally:
            self._caches.give(cache)

    def encode_piece(self, data: bytes | str) -> list[int]:
        """Encode ``data`` as one piece: no pre-tokenizer split, the rules only.

        Equivalent to replaying every rule over the whole input, O(n log n)
        for n input bytes (see :meth:`encode` and ``docs/design.md`` §3).
        """
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        elif not isinstance(data, (bytes, str)):
            raise TypeError(f"data must be bytes or str, got {type(data).__name__}")
        return self._codec.encode(data, codec.PATTERN_NONE, None)

    def decode(self, ids: Iterable[int]) -> bytes:
        """The exact bytes of the token sequence ``ids`` (inverse of :meth:`encode`); O(IDs + bytes)."""
        return self._codec.decode(ids)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model to ``path`` atomically (see ``docs/format.md``); read it with :func:`bytepair.load`."""
        write_model_file(path, "bytes", model_fields(self), self.merges)

    def encode_spans(self, data: bytes, starts: Sequence[int]) -> tuple[array, array]:
        """Each piece ``data[starts[k]:starts[k + 1]]`` encoded whole (no split), laid end to end.

        ``data`` holds the pieces one after the other; ``starts`` (an ``array("q")`` or any
        sequence of ints) the offset of each piece in ``data``, then ``len(data)``.

        Returns ``(ids, offsets)``: an ``array("I")`` of every piece's IDs in
        turn, and an ``array("q")`` of where each piece's IDs begin, then their
        total. No Python object per piece. O(bytes x log) in the worst case.

        >>> import bytepair
        >>> model = bytepair.train_bytes([b"aaa"], 1)
        >>> model.encode_spans(b"aaaab", [0, 4, 5])
        (array('I', [256, 256, 98]), array('q', [0, 2, 3]))
        """
        return self._codec.encode_spans(data, array("q", starts))


def model_fields(model: ByteModel) -> dict:
    """The header fields of a byte model's file: its pattern, and a SuperBPE model's stages."""
    fields: dict = {"pattern": file_pattern(model.pattern)}
    if model.stages is not None:
        fields["superbpe"] = dict(model.stages._replace(
            pretokenize=file_pattern(model.stages.pretokenize))._asdict())
    return fields


def encode_word(word: str, rules: Sequence[tuple[str, str]], *, end_of_word: str | None = None) -> list[str]:
    """Split ``word`` by replaying ``rules`` (pairs of str) in learned order.

    Characters that no rule covers stay single characters. ``end_of_word``
    is added after the characters first, as in training (it must be the
    marker the rules were learned with).

    >>> encode_word("lowest", [("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")])
    ['low', 'est']
    """
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, got {type(word).__name__}")
    end_of_word = check_end_of_word(end_of_word)
    symbols = list(word) + ([end_of_word] if end_of_word else [])
    for index, rule in enumerate(rules):
        if (
            not isinstance(rule, tuple) or len(rule) != 2
            or not all(isinstance(s, str) and s for s in rule)
        ):
            raise TypeError(f"rules[{index}] must be a pair of non-empty str, got {rule!r}")
        left, right = rule
        # Cheap skip: most rules do not apply to a given word.
        if left in symbols and right in symbols:
            symbols, _ = replace_pair(symbols, left, right, left + right)
    return symbols


class _SplitterAtFirstUse:
    """``splitter(pattern)`` of a named pattern, made when it is first called.

    Importing ``regex`` and compiling a named pattern took 20-25 ms, every
    time a process made its first model, and the compiled encoder splits the
    named patterns itself, so that splitter is often never called. A named
    pattern is known to compile; any other is compiled at once, so that a bad
    one is refused when the model is made.
    """

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.split = None

    def __call__(self, text: str) -> list[str]:
        if self.split is None:
            self.split = splitter(self.pattern)
        return self.split(text)


def _checked_sides(merges: list[Merge]) -> tuple[array, array]:
    """The rules' left and right tokens, once the rules are checked to make a model.

    Rule ``r`` must have rank ``r`` and token ID ``256 + r``, join two tokens
    made before it, repeat no pair and have ``0 <= replacements <= count``.
    The checks run over whole columns in C (a trained model of 100k rules
    loads in milliseconds); only a table that fails one is walked rule by
    rule, to name the first bad rule.
    """
    n = len(merges)
    ranks, lefts, rights, tokens, counts, replacements = zip(*merges) if n else ((),) * 6
    try:
        if not set(map(type, lefts + rights)) <= {int, bool}:  # as isinstance(side, int)
            raise TypeError
        lefts, rights = array("q", lefts), array("q", rights)
        if (ranks == tuple(range(n)) and tokens == tuple(range(BYTE_TOKENS, BYTE_TOKENS + n))
                and min(lefts, default=0) >= 0 and min(rights, default=0) >= 0
                and all(map(operator.lt, lefts, tokens)) and all(map(operator.lt, rights, tokens))
                # One int per pair, not a tuple: tuples would wake the cyclic collector.
                and len(set(map(operator.or_, map(operator.lshift, lefts, repeat(32)), rights))) == n
                and min(replacements, default=0) >= 0
                and all(map(operator.le, replacements, counts))):
            return array("I", lefts), array("I", rights)
    except (TypeError, OverflowError):  # not an int, or one that does not fit: named below
        pass
    seen: set[tuple[int, int]] = set()
    for rank, merge in enumerate(merges):
        token = BYTE_TOKENS + rank
        if merge.rank != rank or merge.token_id != token:
            raise ValueError(f"merges[{rank}] must have rank {rank} and token_id {token}")
        for side in (merge.left, merge.right):
            if not isinstance(side, int) or not 0 <= side < token:
                raise ValueError(f"merges[{rank}] joins {side!r}, which is not a token before it")
        if (merge.left, merge.right) in seen:
            raise ValueError(f"merges[{rank}] repeats the pair {(merge.left, merge.right)}")
        if not 0 <= merge.replacements <= merge.count:
            raise ValueError(f"merges[{rank}] needs 0 <= replacements <= count")
        seen.add((merge.left, merge.right))
    # The walk found nothing wrong where a column check failed (an int subclass that
    # compares oddly, say): its verdict is the one the model has always had.
    return array("I", (m.left for m in merges)), array("I", (m.right for m in merges))


class WordModel:
    """A word-mode model: rules over string symbols, learned from word counts.

    ``words`` maps each training word to its final symbols.

    >>> import bytepair
    >>> model = bytepair.train_words({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 4)
    >>> model.rules
    [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w')]
    >>> model.merges[0]
    Merge(rank=0, left='e', right='s', token_id='es', count=9, replacements=9)
    >>> model.encode("lowest")
    ['low', 'est']
    """

    def __init__(self, merges: Iterable[Merge], *, end_of_word: str | None = None,
                 words: dict[str, tuple[str, ...]] | None = None):
        """A model from its rules; they are checked (ValueError names the first bad one). O(rules).

        ``merges``
            The rules in rank order: rule ``r`` has rank ``r`` and joins two
            non-empty str symbols into ``token_id == left + right``.
        ``end_of_word``
            The symbol added after each word's characters, or None.
        ``words``
            Each training word's final symbols, when there are any to keep.
        """
        self.merges = []
        for rank, merge in enumerate(merges):
            merge = Merge(*merge)
            if merge.rank != rank:
                raise ValueError(f"merges[{rank}] must have rank {rank}")
            if not all(isinstance(s, str) and s for s in (merge.left, merge.right)):
                raise ValueError(f"merges[{rank}] must join two non-empty str symbols")
            if merge.token_id != merge.left + merge.right:
                raise ValueError(f"merges[{rank}] must name the joined symbol as its token")
            if not 0 <= merge.replacements <= merge.count:
                raise ValueError(f"merges[{rank}] needs 0 <= replacements <= count")
            self.merges.append(merge)
        self.end_of_word = check_end_of_word(end_of_word)
        self.words = words

    def __repr__(self) -> str:
        return f"<WordModel rules={len(self.merges)} end_of_word={self.end_of_word!r}>"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, WordModel)
            and self.merges == other.merges
            and self.end_of_word == other.end_of_word
        )

    def truncate(self, merges: int) -> "WordModel":
        """The model of the first ``merges`` rules: what training to ``merges`` gives.

        The result has no ``words`` (they would need the word counts). O(merges).

        >>> import bytepair
        >>> counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
        >>> bytepair.train_words(counts, 4).truncate(2).rules
        [('e', 's'), ('es', 't')]
        """
        merges = check_int(merges, "merges", maximum=len(self.merges))
        return WordModel(self.merges[:merges], end_of_word=self.end_of_word)

    @property
    def rules(self) -> list[tuple[str, str]]:
        """The learned pairs in order: the simple form of the result."""
        return [(m.left, m.right) for m in self.merges]

    def encode(self, word: str) -> list[str]:
        """Split ``word`` with this model's rules (see :func:`encode_word`)."""
        return encode_word(word, self.rules, end_of_word=self.end_of_word)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model to ``path`` atomically (see ``docs/format.md``); read it with :func:`bytepair.load`."""
        write_model_file(path, "words", {"end_of_word": self.end_of_word}, self.merges)


class _BuiltLists:
    """:meth:`ByteModel.encode_batch_ids` of the Python path: lists built at once."""

    def __init__(self, lists: list, error: str | None = None):
        self._lists = lists
        self._error = error  # the first str that UTF-8 cannot hold, named

    def lists(self, track: bool = True) -> list:
        return self._lists

    def skipped(self) -> list[int]:
        return [i for i, ids in enumerate(self._lists) if ids is None]

    def check(self) -> None:
        """Raise ValueError for the first str that UTF-8 cannot hold."""
        if self._error is not None:
            raise ValueError(self._error)
