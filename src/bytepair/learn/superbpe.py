"""SuperBPE: superword tokens, learned in two stages; the word cap and the reference.

The definition (Liu et al., "SuperBPE: Space Travel for Language Models", 2025), as
bytepair trains it:

* **Stage 1** is ordinary byte-mode training with the stage-1 pre-tokenizer
  (``pretokenize``, default ``gpt2``) up to the *transition*: ``transition``
  rules (a vocabulary of ``256 + transition`` tokens).
* **Stage 2** cuts every document with the stage-2 pattern the way Hugging
  Face's ``Split(pattern, behavior="isolated")`` does: each match is a piece,
  and so is each non-empty stretch of text between two matches
  (:func:`bytepair.split.pretokenize.splitter`). The default pattern,
  ``superbpe``, matches only digits, runs of two or more punctuation
  characters and trailing spaces, so the stretches between them are whole
  phrases. Each piece is encoded with the stage-1 rules in rank order, exactly
  as the final tokenizer encodes; identical pieces are counted once, with a
  weight. Then BPE goes on over these sequences with the same counting and
  tie-break as always (:mod:`bytepair.learn.naive`), token IDs continuing
  from stage 1.
* **The word cap:** a pair whose joined bytes hold more than ``max_words``
  words is never eligible, at any count. A *word* is a maximal run of bytes
  that are not ASCII white space (``b" \\t\\n\\v\\f\\r"``). Training ends early
  when no eligible pair is left.

The final tokenizer splits with the stage-2 pattern and applies all rules in
rank order, so encoding a training document gives exactly its sequence at
the end of training.

Whether a pair is eligible depends only on its two tokens, so the engines
keep one small *shape* per token (:func:`shape`: its number of words, and
whether its first and last bytes are inside a word) and decide from the two
shapes (:func:`joined_shape`) when a pair would enter the priority queue.

:func:`fit_naive` is the reference: it recounts every round and is the
specification the fast path (``bytepair.training``) is tested against.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Sequence

from bytepair._util.errors import ArgumentError
from bytepair.learn import naive
from bytepair.learn.rules import Merge, byte_token, replace_pair
from bytepair.split.pretokenize import splitter

#: The bytes that separate words (ASCII white space); every other byte is inside a word.
WHITESPACE = b" \t\n\v\f\r"
#: A shape's word count saturates here (a cap is far smaller); it fits the engines' 32 bits.
MAX_SHAPE_WORDS = (1 << 29) - 1
#: The default word cap.
DEFAULT_MAX_WORDS = 4

_IN_WORD = bytes(0 if b in WHITESPACE else 1 for b in range(256))


def words_in(data: bytes) -> int:
    """The number of words in ``data``: maximal runs of bytes that are not ASCII white space.

    >>> words_in(b" of the"), words_in(b"  "), words_in(b"a\\tb\\n"), words_in(b"")
    (2, 0, 2, 0)
    """
    return len(data.split())  # bytes.split() cuts on exactly WHITESPACE


def shape(data: bytes) -> int:
    """A token's shape: ``words << 2 | first byte in a word << 1 | last byte in a word``.

    >>> shape(b" the"), shape(b"of "), shape(b"  ")
    (5, 6, 0)
    """
    if not data:
        return 0
    words = min(words_in(data), MAX_SHAPE_WORDS)
    return words << 2 | _IN_WORD[data[0]] << 1 | _IN_WORD[data[-1]]


def joined_shape(left: int, right: int) -> int:
    """The shape of two tokens' bytes joined: a word that runs across the seam counts once.

    >>> joined_shape(shape(b"of"), shape(b" the")) == shape(b"of the")
    True
    >>> joined_shape(shape(b"ab"), shape(b"cd")) == shape(b"abcd")
    True
    """
    words = (left >> 2) + (right >> 2) - (left & (right >> 1) & 1)
    return min(words, MAX_SHAPE_WORDS) << 2 | (left & 2) | (right & 1)


def shapes(token_bytes: Sequence[bytes]) -> array:
    """``array("I")`` of the shape of each token, by ID. O(total bytes)."""
    return array("I", map(shape, token_bytes))


def replay(piece: bytes, rules: Sequence[Merge]) -> list[int]:
    """``piece`` encoded whole by applying ``rules`` in rank order, one pass each.

    The plain statement of how a tokenizer encodes a piece; O(rules x bytes).

    >>> replay(b"aaab", [Merge(0, 97, 97, 256, 2, 1), Merge(1, 256, 97, 257, 1, 1)])
    [257, 98]
    """
    sequence = list(piece)
    for rule in rules:
        sequence, _ = replace_pair(sequence, rule.left, rule.right, rule.token_id)
    return sequence


def _pieces(documents: Sequence[bytes], source: str | None) -> list[bytes]:
    if source is None:
        return [doc for doc in documents if doc]
    split = splitter(source)
    return [piece.encode("utf-8") for doc in documents for piece in split(doc.decode("utf-8"))]


def fit_naive(
    documents: Sequence[bytes | str],
    transition: int,
    merges: int,
    *,
    pretokenize: str | None,
    superbpe_pretokenize: str,
    max_words: int = DEFAULT_MAX_WORDS,
) -> tuple[list[Merge], list[list[int]]]:
    """The reference SuperBPE fit: up to ``merges`` rules in all, up to ``transition`` in stage 1.

    ``documents`` are UTF-8 ``bytes`` or ``str``; ``pretokenize`` and
    ``superbpe_pretokenize`` are regex sources (``pretokenize`` may be None:
    each document is one piece in stage 1). Returns the rules and each
    document's final token sequence (its stage-2 pieces' sequences in order).
    Every round recounts everything: O(merges x corpus).

    >>> rules, seqs = fit_naive(["to be or not to be"], 2, 4, pretokenize=r" ?\\w+",
    ...                         superbpe_pretokenize=r"\\d+", max_words=2)
    >>> [(m.left, m.right, m.count) for m in rules]  # " b", "to"; then " be", "to be"
    [(32, 98, 2), (116, 111, 2), (256, 101, 2), (257, 258, 2)]
    >>> seqs
    [[259, 32, 111, 114, 32, 110, 111, 116, 32, 259]]
    
    """
    docs = [doc.encode("utf-8") if isinstance(doc, str) else doc for doc in documents]
    if merges < transition:
        raise ValueError("merges must be at least transition")
    # Stage 1: every piece is a sequence of its own (weight 1 each; identical
    # pieces weighted once give the same counts).
    pieces = _pieces(docs, pretokenize)
    stage1, _ = naive.fit(pieces, [1] * len(pieces), transition, byte_token)
    # Stage 2: the isolated split, each distinct piece encoded by the stage-1 rules.
    per_doc = [_pieces([doc], superbpe_pretokenize) for doc in docs]
    weight_of = Counter(piece for pieces in per_doc for piece in pieces)
    distinct = list(weight_of)
    token_bytes = [bytes([b]) for b in range(256)]
    for rule in stage1:
        token_bytes.append(token_bytes[rule.left] + token_bytes[rule.right])

    def join(left: int, right: int, rank: int) -> int:
        token_bytes.append(token_bytes[left] + token_bytes[right])
        return byte_token(left, right, rank)

    def eligible(left: int, right: int) -> bool:
        return words_in(token_bytes[left] + token_bytes[right]) <= max_words

    stage2, sequences = naive.fit([replay(p, stage1) for p in distinct],
                                  [weight_of[p] for p in distinct], merges - len(stage1), join,
                                  first_rank=len(stage1), eligible=eligible)
    final = dict(zip(distinct, sequences))
    return stage1 + stage2, [[t for piece in pieces for t in final[piece]] for pieces in per_doc]


def transition_too_large(transition: int, merges: int, vocab_size: int | None,
                         special: int) -> ArgumentError:
    """The error for a SuperBPE transition that leaves stage 2 nothing to learn: the
    transition must be below the final vocabulary of bytes and learned tokens."""
    final = 256 + merges
    if vocab_size is None:
        final_size = f"the final vocabulary, 256 bytes + {merges:,} learned tokens = {final:,}"
    elif special:
        final_size = (f"the final vocabulary size less its special tokens, {vocab_size:,} - "
                      f"{special:,} = {final:,}")
    else:
        final_size = f"the final vocabulary size, {vocab_size:,}"
    return ArgumentError("superbpe", f": the transition {transition:,} must be smaller than "
                         f"{final_size} (stage 1 learns tokens up to vocabulary {transition:,}, "
                         f"stage 2 the superword tokens above it)")
