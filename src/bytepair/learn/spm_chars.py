"""sentencepiece's alphabet: the characters kept by ``character_coverage``, the rest masked.

spm_train counts the characters of the normalised text (NUL is not counted), sorts them
by (count descending, code point ascending) and keeps them while the share counted so far,
as a 32-bit float, is below ``character_coverage`` (also a 32-bit float). The boundary
U+001F is counted but never kept. Every character not kept becomes U+2585, which no
piece may hold: the kept characters are the only ones pieces are made of, and they end
the vocabulary in the same order.

>>> kept = required_chars({"\u2581ab": 3, "\u2581b": 1}, 1.0)
>>> kept
[('b', 4), ('\u2581', 4), ('a', 3)]
>>> masked_words({"\u2581ab": 3, "\u2581c": 1}, dict(kept))
{'\u2581ab': 3, '\u2581\u2585': 1}
"""

from __future__ import annotations

import struct
from collections import Counter
from typing import Mapping

from bytepair.learn.spm_pieces import BOUNDARY, UNKNOWN_CHAR


def float32(value: float) -> float:
    """``value`` rounded to a 32-bit float, as sentencepiece compares coverage."""
    return struct.unpack("f", struct.pack("f", value))[0]


def char_counts(words: Mapping[str, int]) -> Counter:
    """Each character's count over ``{word: count}``, NUL left out. O(total characters)."""
    counts: Counter = Counter()
    for word, count in words.items():
        for char, times in Counter(word).items():
            counts[char] += times * count
    counts.pop("\0", None)
    return counts


def required_chars(words: Mapping[str, int], coverage: float,
                   counts: Mapping[str, int] | None = None) -> list[tuple[str, int]]:
    """The kept characters with their counts, in vocabulary order (count desc, code point)."""
    counts = char_counts(words) if counts is None else counts
    total = sum(counts.values())
    if total == 0:
        raise ValueError("corpus: no characters to train on (every line empty or skipped)")
    limit = float32(coverage)
    kept: list[tuple[str, int]] = []
    accumulated = 0
    for char, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if float32(accumulated / total) >= limit:
            break
        accumulated += count
        if char != BOUNDARY:
            kept.append((char, count))
    return kept


def masked_words(words: Mapping[str, int], kept: Mapping[str, int]) -> dict[str, int]:
    """``words`` with each character outside ``kept`` written U+2585, equal words added."""
    out: dict[str, int] = {}
    for word, count in words.items():
        if not all(char in kept for char in word):
            word = "".join(char if char in kept else UNKNOWN_CHAR for char in word)
        out[word] = out.get(word, 0) + count
    return out
