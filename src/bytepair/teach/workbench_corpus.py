"""What a workbench request carries: its corpus in one of three modes, checked against the limits.

A corpus is read in one of three modes:

``words``
    the chapter's word lists (``low lower lowest``): words separated by white
    space, each occurrence a row of its own;
``counts``
    ``word count`` lines (the word-count exercise, ``low 5``): one row per
    word, its pairs weighted by its count;
``bytes``
    free text, one document per line, trained as bytes (token IDs 256 and up;
    no end-of-word marker and no word boundaries inside a document).

In the word modes each word starts as its characters plus the end-of-word
marker ``</w>`` (unless ``end_of_word`` is false); ties go to the smallest
``(left, right)`` in string order, so ``</w>`` sorts before letters. In byte
mode ties go to the smallest IDs.

Bad input raises :class:`WorkbenchError` (a ValueError) with one line for the page.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from bytepair.learn.rules import Merge
from bytepair.model.models import BYTE_TOKENS

MODES = ("words", "counts", "bytes")
#: The end-of-word marker of the word modes.
END_OF_WORD = "</w>"
#: The largest corpus, in bytes of UTF-8.
MAX_BYTES = 32 * 1024
#: The most rows: words (word lists), lines (counts) or documents (bytes).
MAX_ROWS = 5000
#: The greatest count of a ``word count`` line.
MAX_COUNT = 10**9
#: The most merges one request may ask for.
MAX_MERGES = 500

LIMITS = {"bytes": MAX_BYTES, "rows": MAX_ROWS, "count": MAX_COUNT, "merges": MAX_MERGES}


class WorkbenchError(ValueError):
    """A request the workbench refuses; the message is shown in the page."""


class Corpus(NamedTuple):
    """A parsed corpus: its rows' first symbols, weights and display text."""

    mode: str
    rows: list            # a list of symbols per row (str in word modes, int IDs in byte mode)
    weights: list[int]
    texts: list[str]      # what each row was typed as
    end_of_word: str | None

    def join(self, left, right, rank: int):
        return BYTE_TOKENS + rank if self.mode == "bytes" else left + right

    def labeller(self, rules: list[Merge]) -> Callable:
        """The display text of a token, given the rules that made the merged ones."""
        if self.mode != "bytes":
            return lambda token: token
        expansions = {i: bytes([i]) for i in range(BYTE_TOKENS)}
        for rule in rules:
            expansions[rule.token_id] = expansions[rule.left] + expansions[rule.right]
        return lambda token: byte_label(expansions[token])

    def width(self, rules: list[Merge]) -> Callable:
        """How many first symbols a token covers (to lay a stream back out as rows)."""
        if self.mode == "bytes":
            widths = {}
            for rule in rules:
                widths[rule.token_id] = widths.get(rule.left, 1) + widths.get(rule.right, 1)
            return lambda token: widths.get(token, 1)
        # Words never hold the marker (parse refuses them), so each one in a token is one symbol.
        shrink = len(self.end_of_word) - 1 if self.end_of_word else 0
        eow = self.end_of_word
        return lambda token: len(token) - (shrink * token.count(eow) if eow else 0)


_GLYPHS = {" ": "\u2423", "\t": "\u21e5", "\r": "\u240d", "\n": "\u21b5"}


def byte_label(data: bytes) -> str:
    """A byte token's text: UTF-8 as text (white space as glyphs), other bytes as ``\\xNN``.

    >>> byte_label(b"a b"), byte_label(b"\\xd0"), byte_label("é".encode())
    ('a␣b', '\\\\xd0', 'é')
    """
    text = data.decode("utf-8", "backslashreplace")
    out = []
    for ch in text:
        if ch in _GLYPHS:
            out.append(_GLYPHS[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def parse(payload: dict) -> Corpus:
    """The corpus of a request (see the module for the modes); refuses bad input in one line.

    >>> parse({"corpus": "low lower", "mode": "words"}).rows
    [['l', 'o', 'w', '</w>'], ['l', 'o', 'w', 'e', 'r', '</w>']]
    >>> parse({"corpus": "ab 3", "mode": "counts", "end_of_word": False})[1:3]
    ([['a', 'b']], [3])
    >>> parse({"corpus": "aa\\nb", "mode": "bytes"}).rows
    [[97, 97], [98]]
    """
    mode = payload.get("mode", "words")
    if mode not in MODES:
        raise WorkbenchError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    text = payload.get("corpus")
    if not isinstance(text, str):
        raise WorkbenchError("corpus must be text (a JSON string)"
                             if text is not None else "the request has no corpus")
    eow = payload.get("end_of_word", True)
    if not isinstance(eow, bool):
        raise WorkbenchError(f"end_of_word must be true or false, got {eow!r}")
    end_of_word = END_OF_WORD if eow and mode != "bytes" else None
    for number, line in enumerate(text.split("\n"), 1):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise WorkbenchError(
                f"line {number}, character {exc.start + 1}: not valid UTF-8 (a lone surrogate "
                f"U+{ord(line[exc.start]):04X})") from None
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise WorkbenchError(f"the corpus is {size:,} bytes, more than the workbench's limit of "
                             f"{MAX_BYTES:,} bytes")
    if not text.strip():
        raise WorkbenchError("the corpus is empty: type some words, such as low lower lowest")
    if mode == "bytes":
        documents = text.split("\n")
        if documents[-1] == "":
            documents.pop()  # the line break that ends the last line
        _check_rows(len(documents), "documents (lines)")
        return Corpus(mode, [list(doc.encode("utf-8")) for doc in documents],
                      [1] * len(documents), documents, None)
    if mode == "words":
        words = text.split()
        _check_rows(len(words), "words")
        for word in words:
            _check_word(word, end_of_word)
        weights = [1] * len(words)
    else:
        words, weights, seen = [], [], {}
        for number, line in enumerate(text.split("\n"), 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise WorkbenchError(f"line {number}: expected 'word count', got {line.strip()!r}")
            word, count = fields
            if not count.isdigit() or not 1 <= int(count) <= MAX_COUNT:
                raise WorkbenchError(f"line {number}: the count of {word!r} must be a whole "
                                     f"number from 1 to {MAX_COUNT:,}, got {count!r}")
            if word in seen:
                raise WorkbenchError(f"line {number}: {word!r} is already counted on line "
                                     f"{seen[word]}")
            _check_word(word, end_of_word)
            seen[word] = number
            words.append(word)
            weights.append(int(count))
        _check_rows(len(words), "word lines")
    tail = [end_of_word] if end_of_word else []
    return Corpus(mode, [[*word, *tail] for word in words], weights, words, end_of_word)


def _check_rows(rows: int, what: str) -> None:
    if rows > MAX_ROWS:
        raise WorkbenchError(f"the corpus has {rows:,} {what}, more than the workbench's limit "
                             f"of {MAX_ROWS:,}")


def _check_word(word: str, end_of_word: str | None) -> None:
    if end_of_word and end_of_word in word:
        raise WorkbenchError(f"the word {word!r} holds the end-of-word marker {end_of_word}; "
                             "remove it or switch the marker off")

