"""Which pieces sentencepiece's BPE trainer may make: scripts, ``▁`` and digits.

sentencepiece (0.2.3) refuses a merge whose piece would break one of these rules
(``IsValidSentencePiece`` in its trainer); :func:`valid_piece` states them once, for the
naive reference in the tests and for the fast loop alike.

Scripts come from Unicode 9.0's script table, the one sentencepiece's trainer is built
with (``bytepair/data/unicode-9.0-scripts.txt``): a character assigned after 9.0, or moved
to another script since, counts as sentencepiece counts it, not as today's Unicode does.

>>> rules = PieceRules()
>>> rules.valid("▁the"), rules.valid("the▁"), rules.valid("a1"), rules.valid("日本")
(True, False, False, True)
>>> rules.valid("ひら漢字")  # Hiragana and Katakana count as Han
True
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

#: The meta symbol sentencepiece writes for a space (U+2581).
SPACE = "\u2581"
#: What sentencepiece's trainer puts for a character outside the coverage (U+2585).
UNKNOWN_CHAR = "\u2585"
#: The boundary sentencepiece's trainer puts where a meta piece stood in the text (U+001F).
BOUNDARY = "\x1f"

#: A script no character has: sentencepiece's "any" (digits without split_by_number, a start).
ANY = "Any"
#: Unicode 9.0's script ranges (first, last, script); code points in none are Common.
SCRIPT_TABLE = "unicode-9.0-scripts.txt"


@lru_cache(maxsize=1)
def _script_ranges() -> tuple[list[int], list[int], list[str]]:
    """The table's ranges as three lists (firsts ascending, lasts, scripts), read once."""
    firsts, lasts, names = [], [], []
    text = resources.files("bytepair").joinpath("data", SCRIPT_TABLE).read_text("ascii")
    for line in text.splitlines():
        if line and not line.startswith("#"):
            first, last, name = line.split()
            firsts.append(int(first, 16))
            lasts.append(int(last, 16))
            names.append(sys.intern(name))
    return firsts, lasts, names


@lru_cache(maxsize=1 << 16)
def script(char: str) -> str:
    """The script of one character as sentencepiece's trainer sees it (Kana count as Han)."""
    firsts, lasts, names = _script_ranges()
    code = ord(char)
    at = bisect_right(firsts, code) - 1
    name = names[at] if at >= 0 and code <= lasts[at] else "Common"
    if name in ("Hiragana", "Katakana") or char == "\u30fc":
        return "Han"
    return name


def is_decimal_digit(char: str) -> bool:
    """sentencepiece's digits: ASCII 0-9 and the full-width ０-９."""
    return "0" <= char <= "9" or "\uff10" <= char <= "\uff19"


@dataclass(frozen=True)
class PieceRules:
    """The trainer options that decide whether a piece may be made."""

    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_by_whitespace: bool = True
    split_digits: bool = False
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False

    def valid(self, piece: str) -> bool:
        """Whether sentencepiece's trainer may make ``piece`` (O(len(piece)))."""
        if not piece or len(piece) > self.max_sentencepiece_length:
            return False
        last = len(piece) - 1
        all_space = piece.count(SPACE) == len(piece)
        previous = ANY
        for pos, char in enumerate(piece):
            if char in (UNKNOWN_CHAR, "\0", BOUNDARY, " ") or "\ud800" <= char <= "\udfff":
                return False
            if char == SPACE:
                if not (self.allow_whitespace_only_pieces and all_space) and self._misplaced(pos, last):
                    return False
                continue
            kind = script(char)
            if kind == "Inherited":
                kind = previous
            digit = is_decimal_digit(char)
            if digit and not self.split_by_number:
                kind = ANY
            if digit and self.split_digits and last > 0:
                return False
            if self.split_by_unicode_script and ANY not in (kind, previous) and kind != previous:
                return False
            previous = kind
        return True

    def _misplaced(self, pos: int, last: int) -> bool:
        """Whether a ``▁`` at ``pos`` breaks the rule: first only (last only as a suffix)."""
        if self.treat_whitespace_as_suffix:
            if self.split_by_whitespace:
                return pos < last
            return pos < last and pos == 0
        if self.split_by_whitespace:
            return pos > 0
        return pos > 0 and pos == last
