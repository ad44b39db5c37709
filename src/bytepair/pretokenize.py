"""Pre-tokenization: split text into pieces that no rule may cross.

Named patterns are those of GPT-2, GPT-4 (``cl100k``) and GPT-4o (``o200k``)
as published with tiktoken, plus ``whitespace`` (Hugging Face's
``Whitespace`` pre-tokenizer). Any other string is compiled as a regex with
the ``regex`` package. ``None`` means no split: each document is one piece.
"""

from __future__ import annotations

from typing import Callable

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
    "nanochat": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+""",
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


#: Patterns whose matches cover every character of any text (checked by tests).
COVERING = frozenset(PATTERNS[name] for name in ("gpt2", "cl100k", "o200k"))


def splitter(source: str) -> Callable[[str], list[str]]:
    """A function that cuts text into pieces that together are the whole text.

    The pieces are the pattern's matches and, as pieces of their own, the
    stretches of text between matches, so no text is ever lost (Hugging
    Face's ``Split`` with ``behavior="isolated"`` does the same).

    >>> splitter(PATTERNS["gpt2"])("Hello world's end!!")
    ['Hello', ' world', "'s", ' end', '!!']
    >>> splitter(PATTERNS["whitespace"])("a, b")
    ['a', ',', ' ', 'b']
    """
    compiled = compile_pattern(source)
    if source == PATTERNS["gpt2"]:
        from . import fastsplit

        if fastsplit.available():
            return fastsplit.split_gpt2
    if source in COVERING:
        return compiled.findall

    def split(text: str) -> list[str]:
        pieces = []
        end = 0
        for match in compiled.finditer(text):
            start = match.start()
            if start > end:
                pieces.append(text[end:start])
            if match.end() > start:
                pieces.append(match.group())
            end = max(end, match.end())
        if end < len(text):
            pieces.append(text[end:])
        return pieces

    return split
