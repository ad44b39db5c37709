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
written down in :func:`to_tokenizers_json` and :func:`to_tiktoken`; the
pattern translation is in :mod:`bytepair.split.dialects`. Every function takes a
:class:`bytepair.Tokenizer`; a bare :class:`bytepair.ByteModel` is wrapped
(no special tokens).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from typing import TYPE_CHECKING

from bytepair._util.atomic import write_atomically
from bytepair.formats.common import as_tokenizer, bytes_to_unicode, first_not_itself
from bytepair.formats.from_tokenizers import (bpe_trainer_pipeline, like_pipeline,
                                              numbered_as_bpe_trainer)
from bytepair.split import dialects
from bytepair.split.dialects import hf_pattern
from bytepair.split.patterns import TIKTOKEN_NAMES
from bytepair.split.pretokenize import PATTERNS, resolve_pattern
from bytepair.model.models import BYTE_TOKENS, ByteModel
from bytepair.model.tokenizer import Tokenizer

if TYPE_CHECKING:  # for annotations only: importing regex or tokenizers at start-up is slow
    from typing import Mapping

    import regex
    import tokenizers

_BYTE_CHARS = bytes_to_unicode()


def token_string(data: bytes) -> str:
    """A token's bytes as a ``tokenizer.json`` vocabulary string.

    >>> token_string(b" the"), token_string("é".encode())
    ('Ġthe', 'Ã©')
    """
    return "".join(_BYTE_CHARS[b] for b in data)


def _parts(tokenizer: Tokenizer | ByteModel) -> tuple[ByteModel, dict[str, int]]:
    """The byte model and the special tokens (a bare ByteModel has none)."""
    tokenizer = as_tokenizer(tokenizer)
    return tokenizer.model, dict(tokenizer.special_tokens)


def _outer_ids(tokenizer) -> list[int]:
    """The ID given out for each of the model's tokens (an imported tokenizer's own IDs)."""
    tokenizer = as_tokenizer(tokenizer)
    ids = tokenizer.ids
    return ids if ids is not None else list(range(tokenizer.vocab_size))


def _ranks(model: ByteModel, target: str) -> dict[bytes, int]:
    """Bytes -> ID for every non-special token; two IDs with the same bytes are refused.

    O(V) for V tokens.
    """
    spelled = model.all_token_bytes()
    ranks = dict(zip(spelled, range(len(spelled))))
    if len(ranks) == len(spelled):
        return ranks
    ranks = {}  # some bytes stand twice: name the first such pair
    for token_id, data in enumerate(spelled):
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

    The condition: no two tokens have the same bytes, and **every token
    encodes, on its own, to itself**: ``model.encode(token_bytes(T)) == [T]``
    (raw bytes, no pre-tokenizer). Cost: one encode per learned token, about
    O(sum of token lengths x log).

    The two loops. A *state* is the token sequence of a piece part-way
    through encoding. bytepair (and Hugging Face) merge, at each step, the
    adjacent pair ``(X, Y)`` that is a *rule*, with the smallest
    ``(rank, position)``. tiktoken first returns a piece whose bytes are a
    token as that one token; otherwise it merges, at each step, the adjacent
    pair whose *joined bytes* are a token, with the smallest ``(ID of that
    token, position)``. With distinct bytes a rule's token has ID
    ``256 + rank``, so on rule pairs both use the same key, ties to the
    left. They can differ only through a *foreign split*: adjacent ``X, Y``
    whose joined bytes are a token ``T`` whose rule is not ``(X, Y)``.

    Proof that the condition suffices.

    1. Locality: if a state of input ``s`` has ``X, Y`` adjacent, covering
       ``s[i:k]``, then encoding ``s[i:k]`` alone passes through the state
       ``[X, Y]``. Tokens only grow, so every merge so far lies inside X's
       bytes, inside Y's, or outside ``[i, k)``. Encoding ``s[i:k]`` alone
       makes exactly the inside merges, in the same order: before each of
       them, its candidate pairs are among the full input's candidates (keys
       in the same order), and the full input merged the smallest of those.
    2. No foreign split ever occurs. If ``X, Y`` (a foreign split of ``T``)
       were adjacent in any state, by (1) encoding ``bytes(T)`` alone would
       reach ``[X, Y]``. From there the only possible merge is ``(X, Y)``,
       and only if it is a rule; its token would have ``T``'s bytes, so it
       would be ``T`` (distinct bytes) and ``(X, Y)`` would be ``T``'s rule.
       So that encoding ends at ``[X, Y] != [T]``, against the condition.
    3. So in every state both loops see the same candidates with the same
       keys and make the same merge; and tiktoken's whole-piece shortcut
       returns ``[T]`` for a piece spelling ``T``, which is what bytepair
       gives by the condition.

    Conversely, if a token does not encode to itself, tiktoken encodes its
    bytes differently whenever they form a whole piece; so without a
    pre-tokenizer the condition is also necessary (for byte input).

    Training always satisfies it: when the rule ``(L, R)`` of ``T`` was
    chosen, ``L, R`` were adjacent in a training piece (its count was at
    least 1), and training transforms a piece just as encoding does; by (1)
    encoding ``bytes(T)`` reaches ``[L, R]``, then merges it into ``[T]``.
    Hand-made or edited rule tables can fail, e.g. ``(b, c), (a, b), (ab, c)``:
    bytepair encodes ``abc`` as ``[a, bc]``, tiktoken as ``[abc]``.

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
    spelled = list(_ranks(model, "tiktoken"))[BYTE_TOKENS:]  # distinct, by ID
    found = first_not_itself(model, spelled)
    if found is not None:
        k, ids = found
        token_id = BYTE_TOKENS + k
        raise ValueError(
            f"cannot export to tiktoken exactly: token {token_id} ({spelled[k]!r}, rule "
            f"{_rule(model, token_id)}) encodes to {ids} on its own, but tiktoken returns "
            f"a piece that spells a token as that token, and merges any two adjacent parts "
            f"that spell a token, so it would encode differently from bytepair (models "
            f"learned by training never have this; this rule table was made or edited by hand)")


def tiktoken_pattern(pattern: str | regex.Pattern | None) -> str:
    r"""The ``pat_str`` that makes tiktoken cut text into bytepair's pieces for ``pattern``.

    ``pattern`` is what ``train`` takes: a pattern name (``"cl100k"``, or
    tiktoken's ``"cl100k_base"``), ``None`` or ``"none"`` (no split), a
    regex str or a compiled regex; a model's ``pattern`` (its regex source)
    works too. An unknown name is refused (ValueError, as ``train`` refuses
    it). The translation is :func:`bytepair.split.dialects.tiktoken_pattern`.

    >>> from bytepair.split.pretokenize import PATTERNS
    >>> tiktoken_pattern("cl100k") == tiktoken_pattern("cl100k_base") == PATTERNS["cl100k"]
    True
    >>> tiktoken_pattern("none")
    '[\\s\\S]+'
    """
    if isinstance(pattern, str) and pattern in TIKTOKEN_NAMES:
        pattern = TIKTOKEN_NAMES[pattern]
    if not (isinstance(pattern, str) and pattern in PATTERNS.values()):  # a source needs no check
        pattern = resolve_pattern(pattern, "pattern")
    return dialects.tiktoken_pattern(pattern)


def tiktoken_ranks(tokenizer: Tokenizer | ByteModel) -> dict[bytes, int]:
    """``mergeable_ranks`` of ``tokenizer`` for ``tiktoken.Encoding``: token bytes -> ID (rank = ID).

    Raises ValueError when tiktoken cannot reproduce bytepair's IDs (see
    :func:`check_tiktoken_exact`). Special tokens are not included.
    """
    check_tiktoken_exact(tokenizer)
    model, _ = _parts(tokenizer)
    outer = _outer_ids(tokenizer)
    # tiktoken ranks merges by the joined token's ID: those IDs must keep the rules' order.
    learned = outer[BYTE_TOKENS:model.vocab_size]
    if any(a >= b for a, b in zip(learned, learned[1:])):
        raise ValueError("cannot export to tiktoken: this tokenizer's IDs do not follow the "
                         "order of its rules, and tiktoken merges in the order of the IDs")
    return dict(zip(model.all_token_bytes(), outer))


def to_tiktoken(tokenizer: Tokenizer | ByteModel, path: str | os.PathLike) -> None:
    """Write ``tokenizer`` to ``path`` as a tiktoken BPE file: ``base64(token bytes) ID`` per line,
    in ID order.

    A tiktoken ranks file holds neither the pattern nor the special tokens.
    The special tokens, when there are any, go beside it, to
    :func:`tiktoken_special_tokens_path` (``path.special_tokens.json``): the
    JSON object of token -> ID that ``tiktoken.Encoding`` takes as
    ``special_tokens``. Load both with tiktoken and give the pattern::

        import json, tiktoken, tiktoken.load  # the ranks reader is a submodule
        from bytepair.formats.export import tiktoken_pattern, tiktoken_special_tokens_path
        enc = tiktoken.Encoding(
            "mine", pat_str=tiktoken_pattern(tokenizer.pattern),
            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
            special_tokens=json.load(open(tiktoken_special_tokens_path(path))))

    or with bytepair: ``bytepair.load(path, pattern=...,
    special_tokens=path + ".special_tokens.json")``.

    (:func:`tiktoken_encoding` does this directly.) The pattern is bytepair's
    own for gpt2, cl100k and o200k (see :func:`bytepair.split.dialects.tiktoken_pattern`). Then
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
    is set to the empty string. Before tiktoken 0.12 it reads local paths
    only with the ``blobfile`` package installed (same format; checked with
    tiktoken 0.7 and 0.12).

    The model must be exact under tiktoken's merge loop
    (:func:`check_tiktoken_exact`; trained models always are), or ValueError.
    Both files are written atomically: a failed export leaves no new file.
    """
    ranks = tiktoken_ranks(tokenizer)
    lines = [f"{base64.b64encode(data).decode('ascii')} {token_id}\n"
             for data, token_id in sorted(ranks.items(), key=lambda item: item[1])]
    _, specials = _parts(tokenizer)
    sidecar = tiktoken_special_tokens_path(path)
    if not specials:
        write_atomically(path, "".join(lines))
        # A special-tokens file left by an earlier export to this path would now lie.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sidecar)
        return
    existed = os.path.exists(sidecar)
    write_atomically(sidecar, json.dumps(specials, ensure_ascii=False, indent=1) + "\n")
    try:
        write_atomically(path, "".join(lines))
    except BaseException:
        if not existed:
            with contextlib.suppress(OSError):
                os.unlink(sidecar)
        raise


def tiktoken_special_tokens_path(path: str | os.PathLike) -> str:
    """Where :func:`to_tiktoken` writes the special tokens of the ranks file ``path``:
    ``path`` + ``.special_tokens.json``, a JSON object of token -> ID, the
    ``special_tokens`` that ``tiktoken.Encoding`` takes.

    >>> tiktoken_special_tokens_path("tok.tiktoken")
    'tok.tiktoken.special_tokens.json'
    """
    return os.fspath(path) + SPECIAL_TOKENS_SUFFIX


#: What :func:`tiktoken_special_tokens_path` adds to a ranks file's name.
SPECIAL_TOKENS_SUFFIX = ".special_tokens.json"


def tiktoken_encoding(tokenizer: Tokenizer | ByteModel, name: str = "bytepair"):
    """A ``tiktoken.Encoding`` called ``name`` with ``tokenizer``'s ranks, pattern and special tokens.

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
        pat_str=dialects.tiktoken_pattern(model.pattern),
        mergeable_ranks=ranks,
        special_tokens=specials,
        explicit_n_vocab=model.vocab_size + len(specials),
    )


def tokenizers_json(tokenizer, *, like=None) -> dict:
    """The ``tokenizer.json`` document (a dict) for a Tokenizer or ByteModel.

    See :func:`to_tokenizers_json`. O(V) for V tokens.
    """
    return _tokenizers_document(tokenizer, like)[0]


def _bytepair_pipeline(pattern: str | None) -> dict:
    """bytepair's own spelling: the pattern as a Split before a ByteLevel without regex; GPT-2's
    pattern as GPT-2's own ``tokenizer.json`` spells it, the ``ByteLevel`` regex (fast
    tokenizers such as gigatoken recognise that spelling, not GPT-2's regex in a Split)."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    if pattern is None:
        pre_tokenizer = byte_level
    elif pattern == PATTERNS["gpt2"]:  # the ByteLevel regex
        pre_tokenizer = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                         "use_regex": True}
    else:
        # Isolated: every match is a piece, and so is the text between two matches, as in
        # bytepair's splitter.
        split = {"type": "Split", "pattern": {"Regex": hf_pattern(pattern)},
                 "behavior": "Isolated", "invert": False}
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    return {"version": "1.0", "truncation": None, "padding": None, "normalizer": None,
            "pre_tokenizer": pre_tokenizer, "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                        "use_regex": False}}


def _tokenizers_document(tokenizer, like) -> tuple[dict, bool]:
    """The document, and whether it is spelled as ``tokenizers`` spells it (then written as
    ``Tokenizer.save`` writes it: no newline at the end)."""
    model, specials = _parts(tokenizer)
    if like is not None:
        pipeline, hf_spelling = like_pipeline(like, model.pattern), True
    elif numbered_as_bpe_trainer(tokenizer):
        pipeline, hf_spelling = bpe_trainer_pipeline(model.pattern), True
    else:
        pipeline, hf_spelling = _bytepair_pipeline(model.pattern), False
    ranks = _ranks(model, "tokenizer.json")
    outer = _outer_ids(tokenizer)
    vocab = {token_string(data): outer[token_id] for data, token_id in ranks.items()}
    for token, token_id in specials.items():
        clash = vocab.get(token)
        if clash is not None:
            raise ValueError(
                f"cannot export to tokenizer.json: special token {token!r} (ID {token_id}) is "
                f"spelled like the vocabulary entry of token {clash}, and Hugging Face would give "
                f"it that ID"
            )
    # Special tokens are in the vocabulary too (as BpeTrainer writes them): tokenizers and
    # transformers give an added token missing from it a new ID after the vocabulary.
    vocab.update(specials)
    vocab = dict(sorted(vocab.items(), key=lambda item: item[1]))  # in ID order, as tokenizers writes it
    merges = [[token_string(model.token_bytes(m.left)), token_string(model.token_bytes(m.right))]
              for m in model.merges]
    document = {
        "version": pipeline["version"],
        "truncation": pipeline["truncation"],
        "padding": pipeline["padding"],
        "added_tokens": [
            {"id": token_id, "content": token, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for token, token_id in specials.items()
        ],
        "normalizer": pipeline["normalizer"],
        "pre_tokenizer": pipeline["pre_tokenizer"],
        "post_processor": pipeline["post_processor"],
        "decoder": pipeline["decoder"],
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
    return document, hf_spelling


def to_tokenizers_json(tokenizer: Tokenizer | ByteModel, path: str | os.PathLike, *,
                       like: tokenizers.Tokenizer | str | os.PathLike | Mapping | None = None,
                       ) -> None:
    """Write ``tokenizer`` to ``path`` as a Hugging Face ``tokenizer.json``, for
    ``tokenizers.Tokenizer.from_file``.

    The model is BPE over GPT-2's byte alphabet (:func:`token_string`): the
    vocabulary maps every byte and learned token to its ID, the merges list
    the rules in rank order as ``[left, right]`` pairs (read by tokenizers
    0.20 and later). The pre-tokenizer splits on the pattern (``Split`` with
    ``behavior="isolated"``: each match is a piece, and so is the text
    between two matches, as in bytepair) and maps bytes to the alphabet
    (``ByteLevel`` without its own regex); with no pattern the whole input
    is one piece.
    Special tokens are added tokens with their IDs; Hugging Face always
    matches them (longest first), so its IDs equal
    ``tokenizer.encode(text, allowed_special="all")``; decode with
    ``skip_special_tokens=False`` to keep them.

    Exact for every model whose tokens have distinct bytes (else ValueError
    naming two IDs), up to the regex engine: Oniguruma gets a checked
    equivalent of each named pattern (:data:`bytepair.split.dialects.HF_PATTERNS`), but may class
    characters by another Unicode version than the ``regex`` module
    (characters added or re-categorised in the newest version), and a custom
    regex may mean something else there (:func:`hf_pattern` refuses the
    known cases). Written atomically: a failed export leaves no file.

    The pipeline (every key but ``model`` and ``added_tokens``) is spelled in one of three ways:

    - ``like`` given (a ``tokenizers.Tokenizer``, trained or not, the path of its
      ``tokenizer.json``, or that file parsed): as ``like`` spells it
      (:func:`bytepair.formats.from_tokenizers.like_pipeline`, which refuses in one line
      a pipeline that would not encode as ``tokenizer`` does, e.g. a pre-tokenizer that
      splits otherwise, or a normalizer);
    - else, for a tokenizer numbered as ``BpeTrainer`` numbers (``ties="tokenizers"``):
      as ``tokenizers`` saves the pipeline docs/from-tokenizers.md gives for its pattern,
      with ``decoders.ByteLevel()``
      (:func:`bytepair.formats.from_tokenizers.bpe_trainer_pipeline`);
    - else bytepair's own: the pattern as a ``Split`` before a ``ByteLevel`` without regex
      (GPT-2's pattern as GPT-2's own file spells it: ``ByteLevel`` with its regex).

    In the first two the file is written as ``tokenizers.Tokenizer.save`` writes it (two
    spaces of indent, no newline at the end), so that a file trained alike by
    ``BpeTrainer`` is the same byte for byte; in the third it ends with a newline.
    """
    document, hf_spelling = _tokenizers_document(tokenizer, like)
    text = json.dumps(document, ensure_ascii=False, indent=2)
    write_atomically(path, text if hf_spelling else text + "\n")
