"""Exports: a Hugging Face ``tokenizer.json`` and a tiktoken ranks file.

Both formats name a token by its bytes (``tokenizer.json`` through the GPT-2
byte-to-unicode alphabet), so a model in which two IDs stand for the same
bytes cannot be exported; that is refused, naming the two IDs.

Hugging Face's BPE applies rules by pair rank exactly as bytepair does, so
the ``tokenizer.json`` export is exact for every model whose tokens have
distinct bytes. tiktoken merges by the rank of the *joined bytes* instead;
:func:`check_tiktoken_exact` states (and proves) when that gives bytepair's
IDs, and :func:`to_tiktoken` refuses a model for which it does not. Every
model that training produces passes.

What is exact, and where the libraries' regex engines could differ, is
written down in :func:`to_tokenizers_json` and :func:`to_tiktoken`.
"""

from __future__ import annotations

import base64
import json
import os
import re

from .io import write_atomically
from .model import BYTE_TOKENS, ByteModel
from .pretokenize import PATTERNS

#: A tiktoken ``pat_str`` that keeps the whole input as one piece (bytepair's ``pattern=None``).
WHOLE_INPUT_PATTERN = r"[\s\S]+"

#: Patterns as Hugging Face's regex engine (Oniguruma) must be given them to split exactly like
#: bytepair's patterns under the ``regex`` module (checked by ``tests/test_export.py``):
#: Oniguruma reads ``{1,3}+`` as a repeated group, not as a possessive interval (greedy is the
#: same here: nothing follows it in its branch), and its ``\w`` differs from ``regex``'s (it
#: takes in superscript digits and vulgar fractions, and leaves out the zero-width (non-)joiners
#: U+200C/U+200D that join emoji), so ``whitespace`` spells out ``regex``'s ``\w``.
_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}"
HF_PATTERNS = {
    PATTERNS["gpt2"]: PATTERNS["gpt2"],
    PATTERNS["cl100k"]: PATTERNS["cl100k"].replace(r"\p{N}{1,3}+", r"\p{N}{1,3}"),
    PATTERNS["o200k"]: PATTERNS["o200k"],
    PATTERNS["whitespace"]: rf"[{_WORD}]+|[^{_WORD}\s]+",
}
# ``{n}+``, ``{n,}+`` and ``{n,m}+`` (possessive in ``regex``, a repeated group in Oniguruma).
_POSSESSIVE_INTERVAL = re.compile(r"(?<!\\)\{\d*(?:,\d*)?\}\+")


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to a printable character (``tokenizer.json`` vocabularies use it).

    Printable Latin-1 bytes stand for themselves; the others (space, control
    bytes, ...) take the characters from U+0100 on, in byte order.

    >>> table = bytes_to_unicode()
    >>> table[ord("a")], table[ord(" ")], table[ord("\\n")], len(set(table.values()))
    ('a', 'Ġ', 'Ċ', 256)
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_BYTE_CHARS = bytes_to_unicode()


def token_string(data: bytes) -> str:
    """A token's bytes as a ``tokenizer.json`` vocabulary string.

    >>> token_string(b" the"), token_string("é".encode())
    ('Ġthe', 'Ã©')
    """
    return "".join(_BYTE_CHARS[b] for b in data)


def _parts(tokenizer) -> tuple[ByteModel, dict[str, int]]:
    """The byte model and the special tokens of a Tokenizer (or of a bare ByteModel: none)."""
    from .tokenizer import Tokenizer

    if isinstance(tokenizer, Tokenizer):
        return tokenizer.model, dict(tokenizer.special_tokens)
    if isinstance(tokenizer, ByteModel):
        return tokenizer, {}
    raise TypeError(f"tokenizer must be a bytepair Tokenizer or ByteModel, got {type(tokenizer).__name__}")


def _ranks(model: ByteModel, target: str) -> dict[bytes, int]:
    """Bytes -> ID for every non-special token; two IDs with the same bytes are refused.

    O(V) for V tokens.
    """
    ranks: dict[bytes, int] = {}
    for token_id in range(model.vocab_size):
        data = model.token_bytes(token_id)
        first = ranks.setdefault(data, token_id)
        if first != token_id:
            raise ValueError(
                f"cannot export to {target}: token IDs {first} and {token_id} both stand for the "
                f"bytes {data!r} (rules {_rule(model, first)} and {_rule(model, token_id)}); "
                f"{target} names each token by its bytes, so it cannot tell them apart"
            )
    return ranks


def _rule(model: ByteModel, token_id: int) -> str:
    if token_id < BYTE_TOKENS:
        return "byte"
    merge = model.merges[token_id - BYTE_TOKENS]
    return f"({merge.left}, {merge.right})"


def check_tiktoken_exact(tokenizer) -> None:
    """Raise ValueError unless tiktoken's merge loop gives bytepair's IDs for this model.

    The condition: **every token encodes, on its own, to itself**:
    ``model.encode(token_bytes(T)) == [T]`` (on the raw bytes, without the
    pre-tokenizer), and no two tokens have the same bytes. Cost: one encode
    per learned token, O(sum of token lengths x log).

    Why it suffices. Write a state for the token sequence of a piece while
    it is being encoded. bytepair (and Hugging Face) repeatedly merge the
    adjacent pair ``(X, Y)`` that is a *rule* with the smallest
    ``(rank, position)``. tiktoken first returns a piece whose bytes are a
    token as that token; otherwise it repeatedly merges the adjacent pair
    with the smallest ``(ID of the token spelled by bytes(X) + bytes(Y),
    position)``. With distinct bytes, a rule pair's key is the ID of its
    token, ``256 + rank``: the same order. So the two loops agree as long as
    no state ever holds a *foreign split*: adjacent ``X, Y`` whose joined
    bytes are a token ``T`` whose rule is not ``(X, Y)``.

    1. Locality: if a state of input ``s`` holds ``X, Y`` adjacent over
       ``s[i:k]``, then encoding ``s[i:k]`` alone passes through ``[X, Y]``.
       Every merge so far lies inside X's span, inside Y's span, or outside
       ``[i, k)`` (tokens only grow). Replay only the inside merges on
       ``s[i:k]``: its candidate pairs are a subset of the full input's, with
       the same keys in the same order, so the pair the full input merged,
       the smallest there, is also the smallest here.
    2. If a foreign split ``X, Y`` of ``T`` were adjacent anywhere, encoding
       ``bytes(T)`` alone would pass through ``[X, Y]``. From a two-token
       state the only possible merge is ``(X, Y)``, which would make a token
       with ``T``'s bytes, hence ``T`` (distinct bytes), hence ``(X, Y)``
       would be ``T``'s rule; so the encoding would end at ``[X, Y] != [T]``,
       against the condition. No foreign split ever occurs.
    3. So tiktoken's loop makes bytepair's merges, step for step; and its
       whole-piece shortcut returns ``[T]`` for a piece spelling ``T``,
       which is ``model.encode(bytes(T))`` by the condition.

    Conversely, a token that does not encode to itself is encoded differently
    by tiktoken whenever its bytes form a whole piece.

    Training always satisfies it: when rule ``(L, R)`` of ``T`` was chosen,
    ``L, R`` were adjacent in a training piece (its count was at least 1),
    and training transforms pieces exactly as encoding does, so by (1)
    encoding ``bytes(T)`` passes through ``[L, R]`` and then merges it into
    ``[T]``. Only hand-made or edited rule tables can fail, such as
    ``(b, c), (a, b), (ab, c)``: bytepair encodes ``abc`` as ``[a, bc]``,
    tiktoken as ``[abc]``.

    >>> from bytepair import ByteModel, Merge
    >>> a, b, c = b"abc"
    >>> model = ByteModel([Merge(0, b, c, 256, 1, 1), Merge(1, a, b, 257, 1, 1),
    ...                    Merge(2, 257, c, 258, 1, 1)])
    >>> model.encode(b"abc")
    [97, 256]
    >>> check_tiktoken_exact(model)
    Traceback (most recent call last):
    ...
    ValueError: cannot export to tiktoken exactly: token 258 (b'abc', rule (257, 99)) encodes to [97, 256] on its own, ...
    """
    model, _ = _parts(tokenizer)
    _ranks(model, "tiktoken")
    encode = model._encode_piece
    for token_id in range(BYTE_TOKENS, model.vocab_size):
        data = model.token_bytes(token_id)
        ids = encode(data)
        if ids != [token_id]:
            raise ValueError(
                f"cannot export to tiktoken exactly: token {token_id} ({data!r}, rule "
                f"{_rule(model, token_id)}) encodes to {ids} on its own, but tiktoken returns "
                f"a piece that spells a token as that token, and merges any two adjacent parts "
                f"that spell a token, so it would encode differently from bytepair (models "
                f"learned by training never have this; this rule table was made or edited by hand)"
            )


def tiktoken_ranks(tokenizer) -> dict[bytes, int]:
    """``mergeable_ranks`` for ``tiktoken.Encoding``: token bytes -> ID (rank = ID).

    Raises ValueError when tiktoken cannot reproduce bytepair's IDs (see
    :func:`check_tiktoken_exact`). Special tokens are not included.
    """
    check_tiktoken_exact(tokenizer)
    model, _ = _parts(tokenizer)
    return {model.token_bytes(i): i for i in range(model.vocab_size)}


def to_tiktoken(tokenizer, path: str | os.PathLike) -> None:
    """Write a tiktoken BPE file: ``base64(token bytes) ID`` per line, in ID order.

    Load it with ``tiktoken.load.load_tiktoken_bpe(path)`` and give the
    pattern and the special tokens yourself (the file holds neither)::

        enc = tiktoken.Encoding(
            "mine", pat_str=tokenizer.pattern or WHOLE_INPUT_PATTERN,
            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(path),
            special_tokens=tokenizer.special_tokens)

    (:func:`tiktoken_encoding` does this directly.) Then
    ``enc.encode(text, allowed_special=...)`` equals ``tokenizer.encode``
    with the same argument, and ``enc.encode_ordinary`` equals
    ``tokenizer.encode_ordinary``, with two caveats on the pattern: it runs
    on tiktoken's regex engine, which may class characters by another Unicode
    version than the installed ``regex`` module (characters added or
    re-categorised in the newest version, e.g. U+0295 in Unicode 17), and a
    custom regex may mean something else there. Special tokens must not be
    prefixes of one another (tiktoken's choice between them is unspecified).

    Note: ``load_tiktoken_bpe`` caches what it reads under the path's name
    (in ``$TIKTOKEN_CACHE_DIR``, by default ``<tmp>/data-gym-cache``), so a
    rewritten file at the same path reads stale unless ``TIKTOKEN_CACHE_DIR``
    is set to the empty string.

    The model must be exact under tiktoken's merge loop
    (:func:`check_tiktoken_exact`; trained models always are), or ValueError.
    The file is written atomically: a failed export leaves no file.
    """
    ranks = tiktoken_ranks(tokenizer)
    lines = [f"{base64.b64encode(data).decode('ascii')} {token_id}\n"
             for data, token_id in ranks.items()]
    write_atomically(path, "".join(lines))


def tiktoken_encoding(tokenizer, name: str = "bytepair"):
    """A ``tiktoken.Encoding`` with this tokenizer's ranks, pattern and special tokens.

    Imports tiktoken (not a bytepair dependency) on call. Refuses what
    :func:`to_tiktoken` refuses, and special tokens one of which is a prefix
    of another. See :func:`to_tiktoken` for what is exact.
    """
    import tiktoken

    model, specials = _parts(tokenizer)
    ranks = tiktoken_ranks(tokenizer)
    ordered = sorted(specials)
    for shorter, longer in zip(ordered, ordered[1:]):
        if longer.startswith(shorter):
            raise ValueError(
                f"special token {shorter!r} is a prefix of {longer!r}; tiktoken does not say "
                f"which of them it matches, bytepair matches the longest"
            )
    return tiktoken.Encoding(
        name,
        pat_str=model.pattern if model.pattern is not None else WHOLE_INPUT_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=specials,
        explicit_n_vocab=model.vocab_size + len(specials),
    )


def hf_pattern(source: str) -> str:
    """The regex to give Hugging Face's ``Split`` for bytepair's pattern ``source``.

    Named patterns map to checked Oniguruma equivalents (:data:`HF_PATTERNS`);
    a custom regex passes unchanged, except that a possessive interval
    (``{n,m}+``), which Oniguruma reads as a repeated group, is refused.
    """
    known = HF_PATTERNS.get(source)
    if known is not None:
        return known
    found = _POSSESSIVE_INTERVAL.search(source)
    if found:
        raise ValueError(
            f"cannot export pattern {source!r} to tokenizer.json: Oniguruma, Hugging Face's regex "
            f"engine, reads the possessive interval {found.group()!r} as a repeated group; write "
            f"it without the '+' if that means the same in your pattern"
        )
    return source


def tokenizers_json(tokenizer) -> dict:
    """The ``tokenizer.json`` document (a dict) for a Tokenizer or ByteModel.

    See :func:`to_tokenizers_json`. O(V) for V tokens.
    """
    model, specials = _parts(tokenizer)
    ranks = _ranks(model, "tokenizer.json")
    vocab = {token_string(data): token_id for data, token_id in ranks.items()}
    for token, token_id in specials.items():
        clash = vocab.get(token)
        if clash is not None:
            raise ValueError(
                f"cannot export to tokenizer.json: special token {token!r} (ID {token_id}) is "
                f"spelled like the vocabulary entry of token {clash}, and Hugging Face would give "
                f"it that ID"
            )
    merges = [[token_string(model.token_bytes(m.left)), token_string(model.token_bytes(m.right))]
              for m in model.merges]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    if model.pattern is None:
        pre_tokenizer = byte_level
    else:
        # Removed + invert keeps exactly the matches, each as one piece, and drops the text
        # between them: Python's findall, which bytepair and tiktoken use. (Isolated would keep
        # that text as pieces too; the same for patterns that match everything, as the GPT ones do.)
        split = {"type": "Split", "pattern": {"Regex": hf_pattern(model.pattern)},
                 "behavior": "Removed", "invert": True}
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": token_id, "content": token, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for token, token_id in specials.items()
        ],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


def to_tokenizers_json(tokenizer, path: str | os.PathLike) -> None:
    """Write a Hugging Face ``tokenizer.json`` for ``tokenizers.Tokenizer.from_file``.

    The model is BPE over GPT-2's byte alphabet (:func:`token_string`): the
    vocabulary maps every byte and learned token to its ID, the merges list
    the rules in rank order as ``[left, right]`` pairs (read by tokenizers
    0.20 and later). The pre-tokenizer splits on the pattern (each match
    is a piece, text between matches is dropped, as bytepair does) and maps
    bytes to the alphabet; with no pattern the whole input is one piece.
    Special tokens are added tokens with their IDs; Hugging Face always
    matches them (longest first), so its IDs equal
    ``tokenizer.encode(text, allowed_special="all")``; decode with
    ``skip_special_tokens=False`` to keep them.

    Exact for every model whose tokens have distinct bytes (else ValueError
    naming two IDs), up to the regex engine: Oniguruma gets a checked
    equivalent of each named pattern (:data:`HF_PATTERNS`), but may class
    characters by another Unicode version than the ``regex`` module
    (characters added or re-categorised in the newest version), and a custom
    regex may mean something else there. Written atomically.
    """
    text = json.dumps(tokenizers_json(tokenizer), ensure_ascii=False, indent=2)
    write_atomically(path, text + "\n")
