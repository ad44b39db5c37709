"""Which pieces sentencepiece's BPE trainer may make: scripts, ``▁`` and digits.

sentencepiece (0.2.3) refuses a merge whose piece would break one of these rules
(``IsValidSentencePiece`` in its trainer); :func:`valid_piece` states them once, for the
naive reference in the tests and for the fast loop alike.

Scripts come from the ``regex`` module's Unicode data, limited to the scripts of Unicode
8.0, the version of sentencepiece's own table: a character of a later script counts as
Common there and here. (Characters added after 8.0 to an older script, such as the CJK
extensions F to I, are Common in sentencepiece's table but keep their script here; such
characters are rare in training text.)

>>> rules = PieceRules()
>>> rules.valid("▁the"), rules.valid("the▁"), rules.valid("a1"), rules.valid("日本")
(True, False, False, True)
>>> rules.valid("ひら漢字")  # Hiragana and Katakana count as Han
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex

#: The meta symbol sentencepiece writes for a space (U+2581).
SPACE = "\u2581"
#: What sentencepiece's trainer puts for a character outside the coverage (U+2585).
UNKNOWN_CHAR = "\u2585"
#: The boundary sentencepiece's trainer puts where a meta piece stood in the text (U+001F).
BOUNDARY = "\x1f"

# The scripts of Unicode 8.0 besides Common and Inherited (sentencepiece's table).
_SCRIPTS_8_0 = """
Latin Greek Cyrillic Armenian Hebrew Arabic Syriac Thaana Devanagari Bengali Gurmukhi
Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan Myanmar Georgian
Hangul Ethiopic Cherokee Canadian_Aboriginal Ogham Runic Khmer Mongolian Hiragana Katakana
Bopomofo Han Yi Old_Italic Gothic Deseret Tagalog Hanunoo Buhid Tagbanwa Limbu Tai_Le
Linear_B Ugaritic Shavian Osmanya Cypriot Braille Buginese Coptic New_Tai_Lue Glagolitic
Tifinagh Syloti_Nagri Old_Persian Kharoshthi Balinese Cuneiform Phoenician Phags_Pa Nko
Sundanese Lepcha Ol_Chiki Vai Saurashtra Kayah_Li Rejang Lycian Carian Lydian Cham Tai_Tham
Tai_Viet Avestan Egyptian_Hieroglyphs Samaritan Lisu Bamum Javanese Meetei_Mayek
Imperial_Aramaic Old_South_Arabian Inscriptional_Parthian Inscriptional_Pahlavi Old_Turkic
Kaithi Batak Brahmi Mandaic Chakma Meroitic_Cursive Meroitic_Hieroglyphs Miao Sharada
Sora_Sompeng Takri Caucasian_Albanian Bassa_Vah Duployan Elbasan Grantha Pahawh_Hmong Khojki
Linear_A Mahajani Manichaean Mende_Kikakui Modi Mro Old_North_Arabian Nabataean Palmyrene
Pau_Cin_Hau Old_Permic Psalter_Pahlavi Siddham Khudawadi Tirhuta Warang_Citi Ahom
Anatolian_Hieroglyphs Hatran Multani Old_Hungarian SignWriting Inherited
""".split()
_SCRIPT = regex.compile("|".join(f"(?P<{name}>\\p{{Script={name}}})" for name in _SCRIPTS_8_0))
#: A script no character has: sentencepiece's "any" (digits without split_by_number, a start).
ANY = "Any"


@lru_cache(maxsize=1 << 16)
def script(char: str) -> str:
    """The script of one character as sentencepiece's trainer sees it (Kana count as Han)."""
    found = _SCRIPT.match(char)
    name = found.lastgroup if found else "Common"
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
