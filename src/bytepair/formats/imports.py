"""Imports: a Hugging Face ``tokenizer.json`` or a tiktoken ranks file as a bytepair Tokenizer.

Both are read only when bytepair can encode exactly as the source library
does; whatever cannot be represented that way is refused with one line
naming the feature (:class:`ImportRefused`). The source's token IDs are kept:
when they do not follow bytepair's scheme (bytes, then ``256 + rank``, then
the special tokens), the Tokenizer carries an ID map (``Tokenizer.ids``).
A ``tokenizers`` ``BpeTrainer`` numbers its special tokens first and its
alphabet by character, not by byte value, so its files always need one.

``docs/format.md`` lists what is accepted and what is refused.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from array import array
from itertools import accumulate, repeat

from bytepair._util.backend import extensions_wanted
from bytepair._util.validate import check_special_tokens
from bytepair.formats import _ranks_py
from bytepair.formats.common import (ImportRefused, bytes_to_unicode, check_decoder,
                                     check_normalizer, check_post_processor, first_not_itself,
                                     read_pattern, short)
from bytepair.learn.incremental import gc_paused
from bytepair.learn.rules import Merge
from bytepair.model.models import BYTE_TOKENS, ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.split.patterns import TIKTOKEN_NAMES
from bytepair.split.pretokenize import PATTERNS, resolve_pattern  # noqa: F401 (PATTERNS: doctests)

#: One line of a tiktoken ranks file: a base64 token, a space, its rank.
TIKTOKEN_LINE = re.compile(r"[A-Za-z0-9+/]*={0,2} \d+")
#: A whole ranks file of such lines and nothing else (no blank line, no spaces around).
_PLAIN_RANKS = re.compile(r"(?:[A-Za-z0-9+/]+={0,2} \d+\n)*(?:[A-Za-z0-9+/]+={0,2} \d+)?")
_CHAR_BYTE = {char: byte for byte, char in bytes_to_unicode().items()}
_BYTE_CHAR = bytes_to_unicode()

#: Each token's split by tiktoken's merge loop: compiled, or the plain Python twin.
tiktoken_splits = _ranks_py.tiktoken_splits
if extensions_wanted():
    try:
        from bytepair.formats._ranks import tiktoken_splits
    except ImportError:  # pragma: no cover - depends on how the package was installed
        pass


def looks_like_tiktoken(text: str) -> bool:
    """Whether ``text`` starts like a tiktoken ranks file (``base64 rank`` on its first line)."""
    first = text.lstrip("\n").split("\n", 1)[0].rstrip("\r")
    return bool(TIKTOKEN_LINE.fullmatch(first))


def looks_like_tokenizers_json(data) -> bool:
    """Whether parsed JSON ``data`` is a Hugging Face ``tokenizer.json`` (it has a model object)."""
    return isinstance(data, dict) and isinstance(data.get("model"), dict) and "format" not in data


# -- tokenizer.json ----------------------------------------------------------

def from_tokenizers_json(data: dict, *, trust_pattern: bool = False) -> Tokenizer:
    """The Tokenizer that encodes as ``tokenizers.Tokenizer`` does with this ``tokenizer.json``.

    Accepted: a BPE model over the byte-level alphabet (all 256 bytes in the
    vocabulary), merges as ``"a b"`` strings or ``[a, b]`` lists, a
    ``ByteLevel`` pre-tokenizer (its GPT-2 regex, or none) or a ``Split``
    (``Isolated``, not inverted) followed by ``ByteLevel`` without a regex,
    and added tokens (as special tokens, matched longest first). Encoding with
    ``allowed_special="all"`` gives the IDs of ``tokenizers``' ``encode``
    (which always matches added tokens). Refused with :class:`ImportRefused`:
    a normalizer, dropout, a model other than BPE, ``continuing_subword_prefix``,
    ``end_of_word_suffix``, ``byte_fallback``, a vocabulary that lacks a byte,
    post-processors that add tokens, truncation and padding, added tokens
    with ``lstrip``/``rstrip``/``single_word``, and a Split pattern that is
    not a named one unless ``trust_pattern`` (a regex from a file can take
    exponential time). O(vocabulary + merges).
    """
    model = data["model"]
    check_model(model)
    check_normalizer(data.get("normalizer"))
    for setting in ("truncation", "padding"):
        if data.get(setting) is not None:
            raise ImportRefused(f"{setting} is set: it changes the IDs that encoding returns")
    check_post_processor(data.get("post_processor"))
    check_decoder(data.get("decoder"))
    pattern = read_pattern(data.get("pre_tokenizer"), trust_pattern)

    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(isinstance(i, int) and not isinstance(i, bool)
                                              for i in vocab.values()):
        raise ImportRefused("model.vocab must be an object of token -> integer ID")
    merges = _merge_pairs(model.get("merges"))
    missing = [b for b in range(BYTE_TOKENS) if _BYTE_CHAR[b] not in vocab]
    if missing:
        raise ImportRefused(
            f"the vocabulary lacks {len(missing)} of the 256 bytes (first: byte {missing[0]}, "
            f"{_BYTE_CHAR[missing[0]]!r}); tokenizers drops such bytes or makes them unknown, "
            f"bytepair encodes every byte (train with initial_alphabet=ByteLevel.alphabet())")
    inner = {_BYTE_CHAR[b]: b for b in range(BYTE_TOKENS)}
    outer = [vocab[_BYTE_CHAR[b]] for b in range(BYTE_TOKENS)]
    rules, seen = [], {}
    for rank, (left, right) in enumerate(merges):
        sides = []
        for side in (left, right):
            if side not in inner:
                raise ImportRefused(
                    f"merges[{rank}] ({left!r}, {right!r}) joins {side!r}, which is neither a "
                    f"byte nor made by an earlier merge; bytepair's rules join earlier tokens")
            sides.append(inner[side])
        pair = tuple(sides)
        if pair in seen:
            raise ImportRefused(f"merges[{seen[pair]}] and merges[{rank}] are the same pair "
                                f"({left!r}, {right!r})")
        seen[pair] = rank
        joined = left + right
        if joined in inner:
            raise ImportRefused(
                f"merges[{rank}] ({left!r}, {right!r}) makes {joined!r}, which an earlier merge "
                f"made already; bytepair gives each rule a token of its own")
        if joined not in vocab:
            raise ImportRefused(f"merges[{rank}] makes {joined!r}, which is not in the vocabulary")
        inner[joined] = BYTE_TOKENS + rank
        outer.append(vocab[joined])
        rules.append(Merge(rank, pair[0], pair[1], BYTE_TOKENS + rank, 0, 0))

    specials = _added_tokens(data.get("added_tokens", []))
    _check_added_ids(data.get("added_tokens", []), vocab)
    ordinary = set(outer)
    for content, token_id in specials:
        if token_id in ordinary:
            raise ImportRefused(f"added token {content!r} has ID {token_id}, which a byte or "
                                f"merged token has too")
        outer.append(token_id)
    special_ids = dict(specials)
    for token, token_id in vocab.items():
        made = inner.get(token)
        if (made is None or outer[made] != token_id) and special_ids.get(token) != token_id:
            raise ImportRefused(
                f"vocab entry {token!r} (ID {token_id}) is neither a byte, nor made by a merge, "
                f"nor an added token; bytepair holds only tokens that its rules make")
    if sorted(outer) != list(range(len(outer))):
        gap = min(set(range(len(outer))) - set(outer))
        raise ImportRefused(f"the token IDs are not 0..{len(outer) - 1}: no token has ID {gap}")
    byte_model = ByteModel(rules, pattern=pattern)
    if model.get("ignore_merges"):
        _check_whole_tokens(byte_model)
    return Tokenizer(byte_model, [content for content, _ in specials], ids=outer)


def check_model(model: dict) -> None:
    """Refuse a model that is not plain byte-level BPE (one line naming what it has)."""
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise ImportRefused(f"the model is {kind}, not BPE; bytepair reads byte-level BPE only")
    if model.get("dropout") not in (None, 0, 0.0):
        raise ImportRefused(f"dropout {model['dropout']!r}: BPE-dropout skips merges at random, "
                            f"and bytepair encodes deterministically")
    for feature in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(feature) not in (None, ""):
            raise ImportRefused(f"{feature} {model[feature]!r}: bytepair's tokens are bytes, "
                                f"with no markers inside words")
    if model.get("byte_fallback"):
        raise ImportRefused("byte_fallback: tokens such as <0x41> stand for bytes in a "
                            "non-byte-level vocabulary; bytepair reads byte-level BPE only")


def _merge_pairs(merges) -> list[tuple[str, str]]:
    if not isinstance(merges, list):
        raise ImportRefused("model.merges must be a list")
    pairs = []
    for rank, item in enumerate(merges):
        parts = item.split(" ") if isinstance(item, str) else item
        if (not isinstance(parts, list) or len(parts) != 2
                or not all(isinstance(p, str) and p for p in parts)):
            raise ImportRefused(f"merges[{rank}] is not a pair: {short(item)}")
        pairs.append((parts[0], parts[1]))
    # One set over all the text; only a file that fails is walked to name the merge.
    if not set("".join(left + right for left, right in pairs)) <= _CHAR_BYTE.keys():
        for rank, (left, right) in enumerate(pairs):
            strange = next((c for c in left + right if c not in _CHAR_BYTE), None)
            if strange is not None:
                raise ImportRefused(f"merges[{rank}] holds {strange!r}, which is not in the "
                                    f"byte-level alphabet, so the model is not byte-level")
    return pairs


def _added_tokens(added) -> list[tuple[str, int]]:
    """(content, ID) of each added token, by ID."""
    if not isinstance(added, list):
        raise ImportRefused("added_tokens must be a list")
    tokens = []
    for index, token in enumerate(added):
        if (not isinstance(token, dict) or not isinstance(token.get("content"), str)
                or not token["content"] or not isinstance(token.get("id"), int)):
            raise ImportRefused(f"added_tokens[{index}] needs a non-empty content and an id")
        for flag in ("lstrip", "rstrip", "single_word"):
            if token.get(flag):
                raise ImportRefused(f"added token {token['content']!r} has {flag}; bytepair "
                                    f"matches special tokens as they are written")
        tokens.append((token["content"], token["id"]))
    return sorted(tokens, key=lambda pair: pair[1])


def _check_added_ids(added: list, vocab: dict) -> None:
    """Refuse an added token whose ID in the file is not the one ``tokenizers`` gives it.

    ``tokenizers`` does not read an added token's ``id``: on load it adds the
    tokens in the file's order, and one whose content is not in ``model.vocab``
    gets the vocabulary's size, or one more than the largest added ID when
    that is not below it. An ID in a gap of the vocabulary, or added tokens
    out of order, would make it give other IDs than the file says.
    """
    given: list[int] = []
    for token in added:
        content, token_id = token["content"], token["id"]
        if content in vocab:
            assigned = vocab[content]
        elif given and max(given) >= len(vocab):
            assigned = max(given) + 1
        else:
            assigned = len(vocab)
        if assigned != token_id:
            raise ImportRefused(
                f"added token {content!r} has ID {token_id} in the file, but tokenizers gives it "
                f"ID {assigned} when it loads the file (its ID is a gap in model.vocab, or the "
                f"added tokens are out of order)")
        given.append(assigned)


def _check_whole_tokens(model: ByteModel) -> None:
    """ignore_merges returns a piece that spells a token as that token: exact only when
    every token encodes to itself."""
    for token_id in range(BYTE_TOKENS, model.vocab_size):
        data = model.token_bytes(token_id)
        if model.encode_piece(data) != [token_id]:
            raise ImportRefused(
                f"ignore_merges: the token {data!r} does not encode to itself by the merges, "
                f"so tokenizers, which returns a whole piece that is a token as that token, "
                f"would encode it differently")


# -- tiktoken ----------------------------------------------------------------

def tiktoken_pattern_source(pattern) -> str | None:
    """bytepair's pattern for ``pattern``: a bytepair or tiktoken name, or a regex.

    >>> tiktoken_pattern_source("cl100k_base") == PATTERNS["cl100k"]
    True
    """
    if isinstance(pattern, str) and pattern in TIKTOKEN_NAMES:
        pattern = TIKTOKEN_NAMES[pattern]
    return resolve_pattern(pattern, "pattern")


def from_tiktoken(text: str, pattern, special_tokens=None) -> Tokenizer:
    """The Tokenizer that encodes as ``tiktoken.Encoding`` with these ranks and this pattern.

    ``text`` is a ranks file: ``base64(token bytes) rank`` per line, every
    single byte among the tokens, ranks ``0..n-1``. Each longer token's rule
    is the split that tiktoken's own merge loop reaches on its bytes with the
    tokens ranked before it; a token that this does not make from two tokens,
    or that would not encode to itself by bytepair's rules (where tiktoken's
    loop and bytepair's could differ, see
    :func:`bytepair.formats.export.check_tiktoken_exact`), is refused. IDs are
    the ranks. O(sum of token lengths squared) for the splits.

    The file holds no special tokens; ``special_tokens`` gives them as
    ``tiktoken.Encoding`` takes them, a dict of token -> ID (the IDs must
    continue the ranks without gaps), or as a list of tokens, which get the
    IDs after the ranks in that order.
    """
    source = tiktoken_pattern_source(pattern)
    with gc_paused():  # a Merge per token: collections would walk them again and again
        return _from_ranks(_tiktoken_tokens(text), source, special_tokens)


def _from_ranks(tokens: list[bytes], source: str | None, special_tokens) -> Tokenizer:
    """:func:`from_tiktoken` of the tokens by rank, checked as :func:`_tiktoken_tokens` does."""
    parts, lefts, rights = tiktoken_splits(b"".join(tokens),
                                           array("q", [0, *accumulate(map(len, tokens))]))
    inner = array("I", bytes(4 * len(tokens)))  # bytepair's ID of each rank
    outer = [0] * BYTE_TOKENS  # the rank of each of bytepair's IDs
    joined = []  # the ranks of the tokens longer than a byte
    for rank, token in enumerate(tokens):
        if len(token) == 1:
            inner[rank], outer[token[0]] = token[0], rank
        else:
            inner[rank] = BYTE_TOKENS + len(joined)
            joined.append(rank)
    for rank in joined:
        if parts[rank] != 2:
            raise ImportRefused(
                f"the token {tokens[rank]!r} (rank {rank}) is not made by joining two tokens of "
                f"lower rank (tiktoken's merges stop at {parts[rank]} parts); tiktoken returns it "
                f"only as a whole piece, and bytepair's rules cannot hold it")
    rules = list(map(Merge, range(len(joined)), [inner[lefts[rank]] for rank in joined],
                     [inner[rights[rank]] for rank in joined],
                     range(BYTE_TOKENS, BYTE_TOKENS + len(joined)), repeat(0), repeat(0)))
    outer += joined
    # Sound by construction: rule r has rank r and token 256 + r, and joins two tokens of lower
    # rank, so made before it; distinct tokens have distinct bytes, so distinct pairs.
    model = ByteModel.trusted(rules, source)
    found = first_not_itself(model, [tokens[rank] for rank in joined])
    if found is not None:
        raise ImportRefused(
            f"the token {tokens[joined[found[0]]]!r} (rank {joined[found[0]]}) does not encode "
            f"to itself by the rules derived from the ranks, so tiktoken and bytepair could "
            f"encode it differently")
    specials = _tiktoken_specials(special_tokens, len(outer))
    return Tokenizer(model, list(specials), ids=outer + list(specials.values()))


def _tiktoken_tokens(text: str) -> list[bytes]:
    """The tokens of a ranks file by rank, once the ranks are checked to be ``0..n-1`` over
    distinct non-empty tokens that hold every single byte (else ImportRefused naming the
    first line at fault)."""
    tokens = _plain_tokens(text)
    if tokens is not None:
        distinct = set(tokens)
    else:
        ranks = _ranks_by_line(text)
        distinct = ranks.keys()
    missing = [b for b in range(BYTE_TOKENS) if bytes([b]) not in distinct]
    if missing:
        raise ImportRefused(f"the ranks lack {len(missing)} of the 256 single bytes (first: "
                            f"{bytes([missing[0]])!r}); bytepair encodes every byte")
    if tokens is not None:
        return tokens
    if sorted(ranks.values()) != list(range(len(ranks))):
        gap = min(set(range(len(ranks) + 1)) - set(ranks.values()))
        raise ImportRefused(f"the ranks are not 0..{len(ranks) - 1} without repeats (no token "
                            f"has rank {gap}); bytepair numbers its tokens without gaps")
    tokens = [b""] * len(ranks)
    for token, rank in ranks.items():
        tokens[rank] = token
    return tokens


def _plain_tokens(text: str) -> list[bytes] | None:
    """The tokens of a plain file (lines ``base64 rank`` with one space and ``\\n`` line
    ends, ranks ``0, 1, 2, ...`` in order, distinct non-empty tokens), read whole at C speed;
    None for any other file, to be read line by line and refused by name."""
    if not _PLAIN_RANKS.fullmatch(text):
        return None
    fields = text.split()
    try:
        tokens = [binascii.a2b_base64(encoded, strict_mode=True) for encoded in fields[::2]]
    except binascii.Error:
        return None
    in_order = list(map(int, fields[1::2])) == list(range(len(tokens)))
    return tokens if in_order and all(tokens) and len(set(tokens)) == len(tokens) else None


def _ranks_by_line(text: str) -> dict[bytes, int]:
    """The ranks of a file, line by line (blank lines skipped, spaces around a line
    allowed); ImportRefused names the first line that is not a token and its rank."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if not TIKTOKEN_LINE.fullmatch(line.strip()):
            raise ImportRefused(f"line {number} is not 'base64-token rank': {short(line)}")
        encoded, rank = line.split()
        try:
            token = base64.b64decode(encoded, validate=True)
        except binascii.Error as exc:
            raise ImportRefused(f"line {number}: {encoded!r} is not base64 ({exc})") from None
        if token in ranks:
            raise ImportRefused(f"line {number}: the token {token!r} is listed twice")
        if not token:
            raise ImportRefused(f"line {number}: an empty token")
        ranks[token] = int(rank)
    return ranks


def _tiktoken_specials(special_tokens, first: int) -> dict[str, int]:
    """``special_tokens`` (a dict token -> ID, or a list of tokens) as a dict whose IDs are
    ``first, first + 1, ...`` in some order: the IDs a bytepair Tokenizer can give them."""
    if special_tokens is None:
        return {}
    if isinstance(special_tokens, dict):
        for token, token_id in special_tokens.items():
            if not isinstance(token_id, int) or isinstance(token_id, bool):
                raise ImportRefused(f"special_tokens: the ID of {token!r} must be an int, "
                                    f"got {short(token_id)}")
        specials = dict(sorted(special_tokens.items(), key=lambda item: item[1]))
    else:
        specials = {token: first + i
                    for i, token in enumerate(check_special_tokens(special_tokens))}
    check_special_tokens(list(specials))
    expected = list(range(first, first + len(specials)))
    if list(specials.values()) != expected:
        wrong = next(((t, i) for (t, i), e in zip(specials.items(), expected) if i != e))
        raise ImportRefused(
            f"special_tokens: {wrong[0]!r} has ID {wrong[1]}, but the special tokens must take "
            f"the IDs after the ranks without gaps ({first}..{first + len(specials) - 1}); "
            f"bytepair numbers its tokens without gaps")
    return specials


def read_special_tokens(path) -> dict[str, int]:
    """The special tokens of a tiktoken ranks file from their JSON file (an object of token ->
    ID, ``tiktoken.Encoding``'s ``special_tokens``), as ``export --to tiktoken`` writes it."""
    with open(path, encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ImportRefused(f"special_tokens: {os.fspath(path)!r} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ImportRefused(f"special_tokens: {os.fspath(path)!r} must hold a JSON object of "
                            f"special token -> ID, as tiktoken.Encoding takes special_tokens")
    return data

