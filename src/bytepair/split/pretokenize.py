"""Pre-tokenization: split text into pieces that no rule may cross.

Named patterns are those of GPT-2, GPT-4 (``cl100k``) and GPT-4o (``o200k``)
as published with tiktoken, plus ``whitespace`` (Hugging Face's
``Whitespace`` pre-tokenizer) and ``whitespace-split`` (its ``WhitespaceSplit``: ``\\S+``), among
others (:data:`PATTERNS`). A custom regex is a compiled pattern or a
string with regex characters (see :func:`resolve_pattern`). ``None`` means no
split: each document is one piece.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable, Iterable

from bytepair._util.errors import Advice, ArgumentError, InputError
from bytepair._util.validate import is_text
from bytepair.split import fastsplit
from bytepair.split.patterns import PATTERNS  # re-exported: bytepair.split.pretokenize.PATTERNS

# ``regex`` is imported by the functions that use it, not here: importing it costs
# more than all of bytepair's own modules, and the compiled splitters do not need it.

#: What a custom regex in a ``str`` looks like: it holds a character that is not
#: a letter, digit, ``_`` or ``-``. A bare word must name a pattern (or be ``none``).
_BARE_WORD = r"[\w-]+"
#: How files write a custom regex that is a bare word (``regex.compile("ab")``): as the same
#: regex in a non-capturing group, which no reader can take for a pattern name.
_GROUPED_WORD = r"\(\?:([\w-]+)\)"
#: Model and encoding names users type for a pattern (lower case, without ``-`` and ``_``),
#: with the pattern that model uses and how to say it.
_MODEL_PATTERNS = {
    "gpt4": ("cl100k", "GPT-4's pattern"), "cl100kbase": ("cl100k", "GPT-4's pattern"),
    "gpt4o": ("o200k", "GPT-4o's pattern"), "gpt4omini": ("o200k", "GPT-4o's pattern"),
    "o200kbase": ("o200k", "GPT-4o's pattern"),
    "r50k": ("gpt2", "GPT-2's pattern"), "r50kbase": ("gpt2", "GPT-2's pattern"),
    "p50k": ("gpt2", "GPT-2's pattern"), "p50kbase": ("gpt2", "GPT-2's pattern"),
}
#: Short texts on which a custom pattern must not match the empty string.
_PROBES = ("", "a", "A b", " 1!", "é\n\t", "ab cd")


def resolve_pattern(pretokenize, name: str = "pretokenize") -> str | None:
    r"""The regex source for a pattern name or a custom regex; ``None`` and ``"none"`` mean no split.

    Three forms:

    * a name in :data:`PATTERNS` (or ``"none"``);
    * a compiled pattern, ``regex.compile(...)`` (or ``re.compile(...)``,
      recompiled with ``regex``; flags must be written inline, e.g. ``(?i)``);
    * a ``str`` holding a regex character (anything but letters, digits,
      ``_`` and ``-``), compiled with ``regex``.

    A bare word that names no pattern is refused (with "did you mean"), so
    that a typo such as ``"GPT2"`` never trains on a regex that matches the
    literal word. A custom pattern that can match the empty string is refused.
    ``name`` is how errors name the argument.

    >>> import regex
    >>> resolve_pattern("whitespace")
    '\\w+|[^\\w\\s]+'
    >>> resolve_pattern(regex.compile(r"\d+|\D+"))
    '\\d+|\\D+'
    >>> resolve_pattern("GPT2")
    Traceback (most recent call last):
    ...
    bytepair._util.errors.ArgumentError: pretokenize: unknown pattern 'GPT2', did you mean 'gpt2'? (known: cl100k, gpt2, nanochat, none, o200k, superbpe, whitespace, whitespace-split; a custom regex is a regex.compile(...) pattern or a str with regex characters)
    """
    if pretokenize is None or pretokenize == "none":
        return None
    if isinstance(pretokenize, str) and pretokenize in PATTERNS:
        return PATTERNS[pretokenize]
    import regex

    if isinstance(pretokenize, (regex.Pattern, re.Pattern)):
        source = pretokenize.pattern
        if not isinstance(source, str):
            raise TypeError(f"{name}: a compiled pattern must be of str, not bytes")
        # The flags a pattern compiled without any has; others would be lost with the source.
        default = regex.compile("").flags if isinstance(pretokenize, regex.Pattern) else \
            re.compile("").flags
        if pretokenize.flags & ~default:
            raise ArgumentError(
                name, ": compile flags are not kept in the model; write them inside the "
                "pattern instead, e.g. (?i) for IGNORECASE")
        return check_custom_pattern(source, name)
    if not isinstance(pretokenize, str):
        raise TypeError(
            f"{name} must be a pattern name, a compiled regex or a regex str, "
            f"got {type(pretokenize).__name__}"
        )
    if regex.fullmatch(_BARE_WORD, pretokenize):
        names = sorted([*PATTERNS, "none"])
        alias = _MODEL_PATTERNS.get(pretokenize.lower().replace("-", "").replace("_", ""))
        if alias is not None:
            hint = f", did you mean {alias[0]!r} ({alias[1]})?"
        else:
            close = difflib.get_close_matches(pretokenize.lower(), names, n=1, cutoff=0.5)
            hint = f", did you mean {close[0]!r}?" if close else ""
        raise ArgumentError(
            name, f": unknown pattern {pretokenize!r}{hint} (known: {', '.join(names)}; ",
            Advice("custom regex", "a custom regex is a regex.compile(...) pattern or a str with "
                   "regex characters"), ")")
    return check_custom_pattern(pretokenize, name)


def check_custom_pattern(source: str, name: str) -> str:
    """``source`` if it compiles and matches no empty string on short probe texts, else ValueError."""
    compiled = compile_pattern(source, name)
    for probe in _PROBES:
        for match in compiled.finditer(probe):
            if match.start() == match.end():
                raise ArgumentError(
                    name, f": pattern {source!r} matches the empty string (at {match.start()} "
                    f"in {probe!r}); every match must be a non-empty piece")
    return source


class UntrustedPattern(InputError):
    """A custom regex read from a file that the caller did not say it trusts."""


def stored_pattern(pattern, *, trusted: bool, bare_words: bool = False) -> str | None:
    """The pre-tokenizer a file stores (``None``: no split), checked before any use.

    A file holds ``null`` or a regex source (a named pattern as its full
    source, never its name). A custom regex can take exponential time on some
    text (``(a|aa)+$`` on a long run of ``a``), so it raises
    :class:`UntrustedPattern` unless the caller ``trusted`` the file. A bare
    word (letters, digits, ``_``, ``-``) is refused as ambiguous (a name, or a
    regex matching that literal word?) unless ``bare_words`` says the file
    can only mean the regex; such a regex matches one literal word and needs
    no trust. Other problems raise ValueError.
    """
    if pattern is None or (isinstance(pattern, str) and pattern in PATTERNS.values()):
        return pattern
    if not isinstance(pattern, str):
        raise ValueError("'pattern' must be a string or null")
    if not is_text(pattern):
        raise ValueError("'pattern' is not text (a lone surrogate)")
    import regex

    grouped = regex.fullmatch(_GROUPED_WORD, pattern)
    if grouped:  # a literal word written by file_pattern: that regex, and it needs no trust
        return grouped.group(1)
    word = regex.fullmatch(_BARE_WORD, pattern)
    if word and not bare_words:
        # bytepair writes a named pattern as its full source, never its name.
        raise ValueError(
            f"'pattern' {pattern!r} is ambiguous: a pattern name or a regex matching that literal "
            f"word? A model file holds the regex source (for a named pattern, its source)"
        )
    if not (trusted or word):
        shown = repr(pattern) if len(pattern) <= 200 else repr(pattern[:200]) + "..."
        raise UntrustedPattern(
            f"holds a custom regex pattern {shown}; a regex from a file can take exponential "
            f"time on some text, so pass ", Advice("trust_pattern=True"),
            " if the file comes from a trusted source")
    return check_custom_pattern(pattern, "'pattern'")


def file_pattern(source: str | None) -> str | None:
    r"""``source`` as a file stores it: a custom regex that is a bare word (``"ab"``, from
    ``regex.compile("ab")``) is written as ``"(?:ab)"``, the same regex, since a file's bare word
    would read as a pattern name; :func:`stored_pattern` reads it back as ``"ab"``.

    >>> file_pattern("ab"), file_pattern(r"\w+")
    ('(?:ab)', '\\w+')
    """
    if source is None or source in PATTERNS.values():
        return source
    import regex  # the engine stored_pattern reads with: ``re``'s \w is another class

    return f"(?:{source})" if regex.fullmatch(_BARE_WORD, source) else source


def compile_pattern(source: str, name: str = "pretokenize"):
    """Compile ``source`` with ``regex``; a bad regex raises ValueError naming ``name``."""
    import regex

    try:
        compiled = regex.compile(source)
    except regex.error as exc:
        raise ArgumentError(name, f": {source!r} is not a valid regex: {exc}") from None
    return compiled


def check_matches_something(source: str | None, pieces: Iterable[bytes],
                            name: str = "pretokenize") -> None:
    """Refuse a custom pattern that matched nothing: each document would be one piece.

    ``pieces`` are the UTF-8 pieces the splitter cut (a match is a piece
    that the pattern matches whole). Stops at the first match, so O(pieces)
    only when there is none. Named patterns and empty corpora pass.
    """
    if source is None or source in PATTERNS.values():
        return
    compiled = compile_pattern(source, name)
    seen = False
    for piece in pieces:
        seen = True
        if compiled.fullmatch(piece.decode("utf-8")):
            return
    if seen:
        raise ArgumentError(
            name, f": pattern {source!r} matches nothing in the corpus, so each document would "
            f"be one piece; give no pattern (none) for that")


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
    if source == PATTERNS["gpt2"] and fastsplit.available():
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
