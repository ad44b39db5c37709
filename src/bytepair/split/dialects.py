"""Regex dialects: bytepair's pre-tokenizer patterns as other regex engines must be given them.

bytepair splits with the ``regex`` module and keeps the text between two
matches as a piece of its own. Hugging Face's ``tokenizers`` runs Oniguruma,
and tiktoken runs its own engine and drops the text between matches; these
functions translate a pattern so that each engine cuts the same pieces, or
refuse a pattern whose meaning would differ.
"""

from __future__ import annotations

import re

from bytepair.split.pretokenize import PATTERNS

#: tiktoken ``pat_str`` for ``pattern=None``: the whole input is one piece.
WHOLE_INPUT_PATTERN = r"[\s\S]+"

#: bytepair's named patterns as Hugging Face's regex engine (Oniguruma) must be given them to
#: split exactly as the ``regex`` module does (checked by ``tests/formats/test_export.py``). Oniguruma
#: reads ``{1,3}+`` as a repeated group, not as a possessive interval (greedy means the same
#: there: nothing follows it in its branch), and its ``\w`` takes in superscript digits and
#: vulgar fractions and leaves out the zero-width (non-)joiners U+200C/U+200D found inside emoji,
#: so ``whitespace`` spells out ``regex``'s ``\w``.
WORD_CHARS = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200C\u200D"
HF_PATTERNS = {
    PATTERNS["gpt2"]: PATTERNS["gpt2"],
    PATTERNS["cl100k"]: PATTERNS["cl100k"].replace(r"\p{N}{1,3}+", r"\p{N}{1,3}"),
    PATTERNS["o200k"]: PATTERNS["o200k"],
    PATTERNS["whitespace"]: rf"[{WORD_CHARS}]+|[^{WORD_CHARS}\s]+",
    PATTERNS["whitespace-split"]: PATTERNS["whitespace-split"],
}
#: bytepair's named patterns for tiktoken, whose splitter drops the text between matches where
#: bytepair keeps it as pieces: ``whitespace`` and ``whitespace-split`` get their gaps (runs of
#: ``\s``) as an alternative.
TIKTOKEN_PATTERNS = {
    PATTERNS["gpt2"]: PATTERNS["gpt2"],
    PATTERNS["cl100k"]: PATTERNS["cl100k"],
    PATTERNS["o200k"]: PATTERNS["o200k"],
    PATTERNS["whitespace"]: PATTERNS["whitespace"] + r"|\s+",
    PATTERNS["whitespace-split"]: PATTERNS["whitespace-split"] + r"|\s+",
}
# Group references and named groups, which a pattern written out twice no longer resolves.
_GROUP_REFERENCE = re.compile(r"\\[1-9]|\\[gk]|\(\?P?<(?![=!])|\(\?P[=>]|\(\?&|\(\?R\)|\(\?[+-]?\d|\(\?\(")


def regex_constructs(source: str) -> set[str]:
    r"""Constructs of a regex whose meaning differs between engines, found outside ``[...]``.

    ``^``, ``$`` and ``\Z`` (Oniguruma: line anchors; tiktoken's ``$``: end of text only),
    inline flags ``m``/``s`` (Oniguruma's ``m`` is dot-all) and possessive intervals such as
    ``{1,3}+`` (Oniguruma: a repeated group).

    >>> sorted(regex_constructs(r"^\w+[$^]\d{2}+$"))
    ['$', '^', '{n,m}+']
    """
    found = set()
    outside = []  # the pattern outside classes; an escape becomes "\\", a class "C"
    i, n = 0, len(source)
    while i < n:
        char = source[i]
        if char == "\\":
            if source[i:i + 2] == "\\Z":
                found.add("\\Z")
            outside.append("\\")
            i += 2
        elif char == "[":
            i += 1
            if source[i:i + 1] == "^":
                i += 1
            if source[i:i + 1] == "]":
                i += 1  # a leading ']' is a literal
            while i < n and source[i] != "]":
                i += 2 if source[i] == "\\" else 1
            outside.append("C")
            i += 1
        else:
            if char in "^$":
                found.add(char)
            outside.append(char)
            i += 1
    rest = "".join(outside)
    if re.search(r"\{\d*,?\d*\}\+", rest):
        found.add("{n,m}+")
    for flags in re.findall(r"\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]", rest):
        found.update(f"(?{flag})" for flag in flags if flag in "ms")
    return found


def tiktoken_pattern(source: str | None) -> str:
    r"""The ``pat_str`` that makes tiktoken cut text into bytepair's pieces for ``source`` (a
    pattern name, a regex source, or None).

    bytepair keeps the text between two matches of a pattern as a piece of
    its own; tiktoken drops it. Patterns that match every character (gpt2,
    cl100k, o200k) pass unchanged, ``whitespace`` and ``whitespace-split`` gain ``|\s+``, ``None``
    becomes :data:`WHOLE_INPUT_PATTERN`, and a custom regex ``S`` becomes
    ``(?:S)|(?:(?!(?:S))[\s\S])+``: at each position the match of ``S`` if
    there is one, else the run of characters up to the next position where
    ``S`` matches, which is bytepair's piece between two matches. That holds
    when ``S`` never matches the empty string. Refused: a custom regex with
    group references or named groups (it cannot be written out twice), or
    with ``$`` or ``\Z``, which tiktoken's engine reads differently.

    >>> print(tiktoken_pattern(None))
    [\s\S]+
    >>> print(tiktoken_pattern("whitespace"))
    \w+|[^\w\s]+|\s+
    >>> print(tiktoken_pattern("[a-z]+"))
    (?:[a-z]+)|(?:(?!(?:[a-z]+))[\s\S])+
    """
    if source is None:
        return WHOLE_INPUT_PATTERN
    source = PATTERNS.get(source, source)
    known = TIKTOKEN_PATTERNS.get(source)
    if known is not None:
        return known
    if _GROUP_REFERENCE.search(source):
        raise ValueError(
            f"cannot give pattern {source!r} to tiktoken: it uses a group reference or named "
            f"group, and tiktoken needs the pattern written out twice to keep the text between "
            f"matches"
        )
    differ = sorted(regex_constructs(source) & {"$", "\\Z"})
    if differ:
        raise ValueError(
            f"cannot give pattern {source!r} to tiktoken: {', '.join(differ)} means something "
            f"else in tiktoken's regex engine (there '$' is the end of the text only)"
        )
    return rf"(?:{source})|(?:(?!(?:{source}))[\s\S])+"


def hf_pattern(source: str) -> str:
    r"""The regex to give Hugging Face's ``Split`` for bytepair's pattern ``source``, a name
    (``"cl100k"``) or a regex source.

    Named patterns map to checked Oniguruma equivalents (:data:`HF_PATTERNS`).
    A custom regex passes unchanged, unless it holds a construct that
    Oniguruma reads differently: ``^``, ``$``, ``\Z`` (line anchors there),
    the inline flags ``m`` and ``s`` (``m`` is dot-all there) or a possessive
    interval like ``{1,3}+`` (a repeated group there); that is refused.

    >>> print(hf_pattern("whitespace-split"))
    \S+
    >>> hf_pattern("cl100k") == hf_pattern(PATTERNS["cl100k"]) != PATTERNS["cl100k"]
    True
    """
    source = PATTERNS.get(source, source)
    known = HF_PATTERNS.get(source)
    if known is not None:
        return known
    differ = regex_constructs(source)
    if differ:
        raise ValueError(
            f"cannot export pattern {source!r} to tokenizer.json: {', '.join(sorted(differ))} "
            f"means something else in Oniguruma, Hugging Face's regex engine"
        )
    return source
