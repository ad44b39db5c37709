"""Hugging Face ``tokenizers``' tie order (``ties="tokenizers"``), on bytepair's exact engine.

Both trainers take the pair with the greatest count; they differ only in how
they break a tie. bytepair takes the smallest ``(left, right)`` in its own IDs
(byte values, then ``256 + rank``). ``tokenizers.trainers.BpeTrainer`` takes
the smallest pair in *its* IDs, which it hands out in this order:

1. the special tokens, in the order given;
2. the alphabet, sorted by character: a byte-level vocabulary's characters
   are GPT-2's stand-ins for the 256 bytes (``bytes_to_unicode``), so bytes
   ``!``..``~``, ``¡``..``¬`` and ``®``..``ÿ`` come first (in byte order),
   then the other 68 bytes (space, control bytes, ...) in byte order;
3. merged tokens, in the order they are made.

Special tokens never take part in a pair, and merged tokens are numbered in
the same order by both trainers. So the tie order of ``BpeTrainer`` is
bytepair's order after *relabelling the bytes*: give byte ``b`` the ID
``POSITION[b]`` (its place in the alphabet), run bytepair's engine unchanged,
and map the bytes of the learned rules back (:func:`restore`). The engine
stays exact and its default order is untouched; relabelling is one
``bytes.translate`` over the pieces.

What ``BpeTrainer`` does beyond that, and why it does not matter here. When
a merge makes a string that is already in its vocabulary, it gives the rule
the existing token's ID (and its vocabulary then grows by less than one per
merge; ``vocab_size`` counts distinct strings). From then on it would count
both spellings as one token, with stale counts for pairs merged before. But
with left-to-right replacement no run of BPE ever makes the same bytes twice:
when rule ``(L, R)`` of token ``T`` is learned, encoding ``T``'s bytes alone
passes through the state ``[L, R]`` (the locality argument written out in
:func:`bytepair.formats.export.check_tiktoken_exact`), and that encoding
passes through exactly one state of two tokens, so a second rule making ``T``
would have to be the same pair, which was merged away. ``BpeTrainer`` is such
a run as long as it never reuses an ID, so it never does; the tests check it
on every example against ``BpeTrainer`` itself. :func:`check_distinct` guards
the argument all the same: a duplicate would be refused in one line.

Its other settings (``limit_alphabet``, ``continuing_subword_prefix``,
``end_of_word_suffix``, ``max_token_length``, an ``initial_alphabet`` that is
not all 256 bytes) have no bytepair equivalent; the guide
``docs/from-tokenizers.md`` lists what each bytepair setting matches.

API (the checks and ``tokenizers_ids`` serve plain and parity-aware training;
``relabel``, ``relabel_ids``, ``restore`` and ``check_distinct`` plain training only):

``check_ties(ties)``
    ``"bytepair"`` (None too) or ``"tokenizers"``, else ValueError in one line.
``check_pattern(source)``
    ValueError when ``tokenizers`` cannot split with the pattern (before any work).
``check_special_tokens(special_tokens, rules=())``
    ValueError when a special token is spelled like a byte (before training) or a
    learned token (after: pass the rules); ``BpeTrainer`` would give both one ID.
``relabel(data: bytes) -> bytes``
    Pieces laid end to end, each byte replaced by its alphabet position.
    O(n), in C. Give the result to the engine instead of ``data``.
``relabel_ids(tokens) -> array("I")``
    The same for token IDs (a warm start's pieces encoded by earlier rules):
    IDs below 256 relabelled, merged tokens unchanged.
``restore(rules) -> list[Merge]``
    Rules learned on relabelled data, with bytepair's byte IDs again (ranks,
    token IDs and counts unchanged). Works on any ``Merge`` list, from rank
    ``first`` on (``restore(rules, first=len(start_rules))``).
``check_distinct(rules, first=0)``
    ValueError when a rule makes the bytes of an earlier token (see above).
``tokenizers_ids(merges, specials) -> list[int]``
    The ``Tokenizer(..., ids=...)`` map that numbers the tokens as
    ``BpeTrainer`` does: specials, alphabet, merged tokens.

Parity-aware training does *not* use this relabelling: ``ParityBpeTrainer``
breaks a tie by the *greatest* ``(left, right)`` as strings of byte-level
characters, not by the smallest IDs, so its engine takes the order
:class:`bytepair.learn.parity.TokenizersOrder` (built on :data:`CHARACTER`).

>>> from bytepair.learn import incremental
>>> def first_rule(data):
...     return incremental.fit([data], [1], 1, lambda l, r, rank: 256 + rank)[0][0]
>>> rule = first_rule(b"a a")                # two tied pairs: (a, space) and (space, a)
>>> bytes([rule.left, rule.right])           # bytepair: the smallest byte values
b' a'
>>> rule = restore([first_rule(relabel(b"a a"))])[0]
>>> bytes([rule.left, rule.right])           # BpeTrainer: 'a' sorts before 'Ġ' (space)
b'a '
"""

from __future__ import annotations

from array import array
from typing import Sequence

from bytepair._util.errors import ArgumentError
from bytepair.learn.rules import Merge

#: The values ``ties`` takes: bytepair's own order, and Hugging Face ``tokenizers``' order.
TIES = ("bytepair", "tokenizers")

BYTE_TOKENS = 256


def _printable(byte: int) -> bool:
    # GPT-2's bytes_to_unicode keeps these bytes as their own Latin-1 character.
    return 33 <= byte <= 126 or 161 <= byte <= 172 or 174 <= byte <= 255


#: The bytes in ``BpeTrainer``'s alphabet order: by their byte-level character's code point.
ALPHABET = bytes([b for b in range(BYTE_TOKENS) if _printable(b)]
                 + [b for b in range(BYTE_TOKENS) if not _printable(b)])
#: ``POSITION[b]``: byte ``b``'s place in :data:`ALPHABET` (a ``bytes.translate`` table).
POSITION = bytes(sorted(range(BYTE_TOKENS), key=ALPHABET.__getitem__))
assert all(ALPHABET[POSITION[b]] == b for b in range(BYTE_TOKENS))


#: ``CHARACTER[b]``: the character that stands for byte ``b`` in a byte-level vocabulary.
CHARACTER = [chr(b) for b in range(BYTE_TOKENS)]
for _extra, _byte in enumerate(b for b in range(BYTE_TOKENS) if not _printable(b)):
    CHARACTER[_byte] = chr(256 + _extra)  # GPT-2's stand-ins, from U+0100 on, in byte order
del _extra, _byte


def check_special_tokens(special_tokens: Sequence[str], rules: Sequence[Merge] = ()) -> None:
    """Refuse a special token spelled like a byte or a learned token in a byte-level vocabulary.

    ``BpeTrainer`` looks tokens up by their spelling, so it would give both one
    ID (the special token's, the smallest), and a merge that makes it would
    take that ID and its place in the tie order; bytepair keeps them apart.
    Call it with no rules before training, and with the rules after. O(V).

    >>> check_special_tokens(["<s>", "Ġ"])
    Traceback (most recent call last):
    ...
    bytepair._util.errors.ArgumentError: special_tokens: 'Ġ' is spelled like the byte-level token of b' '; BpeTrainer would give both one ID, which bytepair does not reproduce with ties='tokenizers'
    """
    wanted = set(special_tokens)
    if not wanted:
        return
    spelled = list(CHARACTER)
    tokens = list(zip(spelled, (bytes([b]) for b in range(BYTE_TOKENS))))
    data = [bytes([b]) for b in range(BYTE_TOKENS)]
    for rule in rules:
        spelled.append(spelled[rule.left] + spelled[rule.right])
        data.append(data[rule.left] + data[rule.right])
        tokens.append((spelled[-1], data[-1]))
    for text, token in tokens:
        if text in wanted:
            raise ArgumentError(
                "special_tokens", f": {text!r} is spelled like the byte-level token of {token!r}; "
                f"BpeTrainer would give both one ID, which bytepair does not reproduce with "
                f"ties='tokenizers'")


def check_ties(ties: str | None) -> str:
    """``ties`` checked: ``"bytepair"`` (the default, also for None) or ``"tokenizers"``.

    >>> check_ties(None), check_ties("tokenizers")
    ('bytepair', 'tokenizers')
    """
    if ties is None:
        return "bytepair"
    if not isinstance(ties, str) or ties not in TIES:
        raise ValueError(f"ties must be one of {', '.join(map(repr, TIES))}, got {ties!r}")
    return ties


def check_pattern(source: str | None) -> None:
    r"""Refuse, before any work, a pre-tokenizer pattern that a ``tokenizer.json`` cannot hold
    (:func:`bytepair.split.dialects.hf_pattern`): BpeTrainer could not have split with it.

    >>> check_pattern(r"(?m)^\w+")
    Traceback (most recent call last):
    ...
    bytepair._util.errors.ArgumentError: pretokenize: ties='tokenizers' needs a pattern that tokenizers can run, and (?m), ^ read otherwise in Oniguruma, its regex engine
    """
    if source is None:
        return
    from bytepair.split.dialects import HF_PATTERNS, regex_constructs

    differ = () if source in HF_PATTERNS else regex_constructs(source)  # named: checked equivalents
    if differ:
        raise ArgumentError(
            "pretokenize", f": ties='tokenizers' needs a pattern that tokenizers can run, and "
            f"{', '.join(sorted(differ))} read otherwise in Oniguruma, its regex engine")


def relabel(data: bytes) -> bytes:
    """``data`` with every byte replaced by its place in :data:`ALPHABET`. O(n).

    >>> relabel(b"!"), relabel(b" ")             # '!' is first; space comes after 188 + 32
    (b'\\x00', b'\\xdc')
    """
    return bytes(data).translate(POSITION)


def relabel_ids(tokens: Sequence[int]) -> array:
    """Token IDs with the bytes (IDs below 256) relabelled; merged tokens unchanged. O(n).

    >>> list(relabel_ids([33, 32, 300]))
    [0, 220, 300]
    """
    position = POSITION
    return array("I", [position[t] if t < BYTE_TOKENS else t for t in tokens])


def restore(rules: list[Merge], first: int = 0) -> list[Merge]:
    """``rules`` with bytepair's byte IDs again: those from index ``first`` on were
    learned on :func:`relabel`-led data. O(rules).

    >>> restore([Merge(0, 0, 220, 256, 5, 5)])
    [Merge(rank=0, left=33, right=32, token_id=256, count=5, replacements=5)]
    """
    alphabet = ALPHABET

    def byte(t: int) -> int:
        return alphabet[t] if t < BYTE_TOKENS else t

    return rules[:first] + [m._replace(left=byte(m.left), right=byte(m.right)) for m in rules[first:]]


def check_distinct(rules: Sequence[Merge], first: int = 0) -> None:
    """Refuse rules, from index ``first`` on, that make the bytes of an earlier token.

    ``BpeTrainer`` gives such a merge the earlier token's ID and from then on
    counts both spellings as one token; bytepair gives each rule a token of
    its own, so the two would learn different rules after it. Training never
    makes such rules (see the module's docstring): this is the argument's
    guard. O(total bytes of the tokens).

    >>> a, b, c = b"abc"
    >>> check_distinct([Merge(0, a, b, 256, 2, 2), Merge(1, 256, c, 257, 2, 2),
    ...                 Merge(2, b, c, 258, 1, 1), Merge(3, a, 258, 259, 1, 1)])
    Traceback (most recent call last):
    ...
    ValueError: ties='tokenizers': merge 3 (b'a' + b'bc') makes b'abc', which merge 1 made already; BpeTrainer would give both one ID and learn other rules from there, which bytepair does not reproduce
    """
    spelled: list[bytes] = [bytes([b]) for b in range(BYTE_TOKENS)]
    made: dict[bytes, int] = {}
    for index, rule in enumerate(rules):
        left, right = spelled[rule.left], spelled[rule.right]
        joined = left + right
        spelled.append(joined)
        earlier = made.setdefault(joined, rule.rank)
        if index >= first and earlier != rule.rank:
            raise ValueError(
                f"ties='tokenizers': merge {rule.rank} ({left!r} + {right!r}) makes {joined!r}, "
                f"which merge {earlier} made already; BpeTrainer would give both one ID and "
                f"learn other rules from there, which bytepair does not reproduce")


def tokenizers_ids(merges: int, specials: int) -> list[int]:
    """The ID of each token as ``BpeTrainer`` numbers it, in bytepair's token order
    (bytes by value, then ``256 + rank``, then the special tokens): the ``ids`` map
    of :class:`bytepair.Tokenizer`. O(vocabulary).

    >>> ids = tokenizers_ids(1, 2)
    >>> ids[ord("!")], ids[ord(" ")], ids[256], ids[257:]
    (2, 222, 258, [0, 1])
    """
    ids = [specials + POSITION[b] for b in range(BYTE_TOKENS)]
    ids.extend(range(specials + BYTE_TOKENS, specials + BYTE_TOKENS + merges))
    ids.extend(range(specials))
    return ids
