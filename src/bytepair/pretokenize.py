"""Pre-tokenization: split text into pieces that no rule may cross.

Named patterns are those of GPT-2, GPT-4 (``cl100k``) and GPT-4o (``o200k``)
as published with tiktoken, plus ``whitespace`` (Hugging Face's
``Whitespace`` pre-tokenizer). Any other string is compiled as a regex with
the ``regex`` package. ``None`` means no split: each document is one piece.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

import regex

PATTERNS = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
    "whitespace": r"""\w+|[^\w\s]+""",
}


def resolve_pattern(pretokenize: str | None) -> str | None:
    """The regex source for a pattern name or custom regex; ``None`` and ``"none"`` mean no split.

    >>> resolve_pattern("whitespace")
    '\\\\w+|[^\\\\w\\\\s]+'
    """
    if pretokenize is None or pretokenize == "none":
        return None
    if not isinstance(pretokenize, str):
        raise TypeError(f"pretokenize must be a pattern name or a regex str, got {type(pretokenize).__name__}")
    source = PATTERNS.get(pretokenize, pretokenize)
    compile_pattern(source)
    return source


def compile_pattern(source: str):
    """Compile ``source`` with ``regex``; a bad regex raises ValueError naming ``pretokenize``."""
    try:
        compiled = regex.compile(source)
    except regex.error as exc:
        names = ", ".join(sorted(PATTERNS))
        raise ValueError(
            f"pretokenize: {source!r} is neither a known pattern ({names}, none) nor a valid regex: {exc}"
        ) from None
    return compiled


def split(text: str, source: str | None) -> list[str]:
    """The pieces of ``text`` (text the pattern does not match is dropped).

    >>> split("Hello world's end!!", PATTERNS["gpt2"])
    ['Hello', ' world', "'s", ' end', '!!']
    """
    if source is None:
        return [text] if text else []
    return compile_pattern(source).findall(text)


def count_pieces(texts: Iterable[str], source: str) -> Counter:
    """How often each piece (as UTF-8 bytes) occurs across ``texts``."""
    findall = compile_pattern(source).findall
    counts: Counter = Counter()
    for text in texts:
        counts.update(findall(text))
    counts.pop("", None)  # a pattern that can match nothing yields empty pieces: no pairs
    return Counter({piece.encode("utf-8"): n for piece, n in counts.items()})
