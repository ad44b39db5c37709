"""The naive reference for extending a tokenizer (``bytepair extend``): the specification.

Written from the rules alone, slowly and plainly; every faster path is tested equal to it.

A base is ``vocab`` (token bytes -> ID), ``merges`` (pairs of token bytes, in rank order),
``added`` (added-token text -> ID) and ``ignore_merges``. Extending it on ``documents``:

1. Each document goes through the base's pipeline: the added tokens are split out (longest
   first at each place, never merged), the rest is normalized (NFC or nothing) and cut into
   pieces by the pre-tokenizer's regex (or its regexes in turn, each cutting every piece
   again). Pieces are counted.
2. Each piece starts as the base's own encoding of it: merge-only (the lowest-ranked merge
   that applies, leftmost first, until none does), or, with ``ignore_merges``, the whole piece
   as one token when it is in the vocabulary.
3. The loop counts every adjacent pair of current tokens (overlapping windows included),
   weighted by piece counts; takes the highest count, ties to the smallest ``(left ID, right
   ID)``; replaces it left to right without overlap. A concatenation that is already a token
   (in the vocabulary or an added token) reuses its ID; any other gets the next ID, above every
   base ID and added-token ID. The merge is recorded either way.
4. It stops when the vocabulary (distinct IDs, added tokens included) reaches ``vocab_size``,
   or when the best count is below ``min_frequency``.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

import regex


def pieces(documents, pattern: str | None, added: dict[str, int], normalizer: str | None) -> Counter:
    """Piece bytes -> count, through the base's pipeline."""
    counts: Counter = Counter()
    tokens = sorted(added, key=len, reverse=True)
    for document in documents:
        segments = [document]
        if tokens:
            segments = regex.split("|".join(map(regex.escape, tokens)), document)
        for segment in segments:
            if normalizer == "NFC":
                segment = unicodedata.normalize("NFC", segment)
            found = [segment]
            for step in [pattern] if isinstance(pattern, str) else pattern or []:
                found = [part for piece in found for part in isolated(step, piece)]
            for piece in found:
                if piece:
                    counts[piece.encode()] += 1
    return counts


def isolated(pattern: str, text: str) -> list[str]:
    """``text`` cut by ``pattern``: every match, and the text between two matches (Isolated)."""
    out, at = [], 0
    for match in regex.finditer(pattern, text):
        out += [text[at:match.start()], match.group()]
        at = match.end()
    return [part for part in out + [text[at:]] if part]


def base_encoding(piece: bytes, vocab: dict[bytes, int], merges: list[tuple[bytes, bytes]],
                  ignore_merges: bool) -> list[int]:
    """The base's IDs for one piece: lookup first with ``ignore_merges``, else by merge rank."""
    if ignore_merges and piece in vocab:
        return [vocab[piece]]
    rank = {}
    for r, pair in enumerate(merges):
        rank.setdefault(pair, r)
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        ranks = [rank.get((parts[i], parts[i + 1])) for i in range(len(parts) - 1)]
        known = [(r, i) for i, r in enumerate(ranks) if r is not None]
        if not known:
            break
        _, i = min(known)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return [vocab[p] for p in parts]


def extend(documents, *, vocab: dict[bytes, int], merges: list[tuple[bytes, bytes]],
           added: dict[str, int], vocab_size: int, pattern: str | None = None,
           normalizer: str | None = None, ignore_merges: bool = False,
           min_frequency: int = 1) -> list[tuple[int, int, int]]:
    """The new merges ``(left ID, right ID, token ID)`` in order."""
    counts = pieces(documents, pattern, added, normalizer)
    sequences = [base_encoding(p, vocab, merges, ignore_merges) for p in counts]
    weights = list(counts.values())
    spelled = {token_id: data for data, token_id in vocab.items()}
    known = dict(vocab)
    for text, token_id in added.items():
        known.setdefault(text.encode(), token_id)
        spelled.setdefault(token_id, text.encode())
    ids = set(spelled)
    next_id = max(ids) + 1
    rules = []
    while len(ids) < vocab_size:
        pairs: Counter = Counter()
        for seq, weight in zip(sequences, weights):
            for pair in zip(seq, seq[1:]):
                pairs[pair] += weight
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))  # ties: smallest IDs
        if pairs[best] < max(min_frequency, 1):
            break
        joined = spelled[best[0]] + spelled[best[1]]
        new = known.get(joined)
        if new is None:
            new, next_id = next_id, next_id + 1
            known[joined], spelled[new] = new, joined
            ids.add(new)
        rules.append((best[0], best[1], new))
        sequences = [replace(seq, best, new) for seq in sequences]
    return rules


def replace(seq: list[int], pair: tuple[int, int], new: int) -> list[int]:
    """``seq`` with ``pair`` replaced by ``new``, left to right without overlap."""
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and (seq[i], seq[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out
