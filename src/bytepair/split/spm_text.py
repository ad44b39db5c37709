"""sentencepiece's sentences and words: a line -> normalised text -> words, as spm_train makes them.

For each line of the corpus (sentencepiece 0.2.3, ``trainer_interface.cc``):

* an empty line, a line of more than ``max_sentence_length`` bytes, and a line holding
  U+2585 (the trainer's own mark for an unknown character) are skipped;
* the line is normalised: the precompiled character map of the rule (``nmt_nfkc`` by
  default; ``identity`` maps nothing), leading, trailing and repeated spaces removed
  (``remove_extra_whitespaces``), a space put first (``add_dummy_prefix``; last with
  ``treat_whitespace_as_suffix``) and each space written ``▁``;
* every meta piece in it (``<unk>``, ``<s>``, ``</s>``, control and user-defined
  symbols, ``<0x00>``...) becomes the boundary U+001F, longest first;
* it is cut into words (``split_by_whitespace``): each word starts with its ``▁`` (ends
  with it as a suffix); with ``allow_whitespace_only_pieces`` a run of ``▁`` stays whole.

The character maps of the rules other than ``identity`` are sentencepiece's own, read
through ``sentencepiece.SentencePieceNormalizer`` (the optional ``sentencepiece`` extra).

>>> text = SentenceText(TextRules(normalization_rule_name="identity"))
>>> text.words(b"Hello  world")
['\u2581Hello', '\u2581world']
>>> TextRules(normalization_rule_name="identity", allow_whitespace_only_pieces=True,
...           remove_extra_whitespaces=False).sentence_words("\u2581a\u2581\u2581b")
['\u2581a', '\u2581\u2581b']
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

#: The meta symbol of a space.
SPACE = "\u2581"
#: The trainer's mark for an unknown character; a line holding it is skipped.
UNKNOWN_CHAR = "\u2585"
_UNKNOWN_BYTES = UNKNOWN_CHAR.encode()
#: Where a meta piece stood.
BOUNDARY = "\x1f"
#: The normalisation rules sentencepiece ships.
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
_SURROGATE = regex.compile("[\udc80-\udcff]")
# SplitIntoWords (model_interface.cc): (suffix mode, whitespace-only pieces) -> word pattern.
_WORD = {
    (False, False): regex.compile(f"[^{SPACE}]+|{SPACE}[^{SPACE}]*"),
    (False, True): regex.compile(f"{SPACE}+[^{SPACE}]*|[^{SPACE}]+"),
    (True, False): regex.compile(f"[^{SPACE}]*{SPACE}|[^{SPACE}]+"),
    (True, True): regex.compile(f"[^{SPACE}]+{SPACE}*|{SPACE}+"),
}


def sentencepiece_module():
    """The ``sentencepiece`` package, or an ImportError saying how to get it."""
    try:
        import sentencepiece
    except ImportError:
        raise ImportError("sentencepiece models need the sentencepiece package: "
                          "pip install 'bytepair[sentencepiece]'") from None
    return sentencepiece


@dataclass(frozen=True)
class TextRules:
    """The trainer options that turn a line into words."""

    normalization_rule_name: str = "nmt_nfkc"
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    split_by_whitespace: bool = True
    max_sentence_length: int = 4192
    #: Meta pieces (unk, bos, eos, pad, control, user-defined, bytes): boundaries in the text.
    meta_pieces: tuple[str, ...] = ()

    def sentence_words(self, sentence: str) -> list[str]:
        """A normalised sentence cut into words (the sentence itself without ``split_by_whitespace``)."""
        if not self.split_by_whitespace:
            return [sentence]
        key = (self.treat_whitespace_as_suffix, self.allow_whitespace_only_pieces)
        return _WORD[key].findall(sentence)


class SentenceText:
    """Lines (bytes) -> normalised sentences and words under :class:`TextRules`."""

    def __init__(self, rules: TextRules):
        self.rules = rules
        self._normalizer = None
        if rules.normalization_rule_name != "identity":
            if rules.normalization_rule_name not in RULES:
                raise ValueError(f"normalization_rule_name: {rules.normalization_rule_name!r} is not one of "
                                 f"{', '.join(RULES)}")
            self._normalizer = sentencepiece_module().SentencePieceNormalizer(
                rule_name=rules.normalization_rule_name,
                add_dummy_prefix=rules.add_dummy_prefix and not rules.treat_whitespace_as_suffix,
                escape_whitespaces=False, remove_extra_whitespaces=rules.remove_extra_whitespaces)
        pieces = sorted(set(rules.meta_pieces), key=lambda p: (-len(p), p))
        self._meta = regex.compile("|".join(map(regex.escape, pieces))) if pieces else None

    def skipped(self, line: bytes) -> str | None:
        """Why spm_train leaves ``line`` out (``"empty"``, ``"too long"``, ``"reserved"``), or None."""
        if not line:
            return "empty"
        if len(line) > self.rules.max_sentence_length:
            return "too long"
        if _UNKNOWN_BYTES in line:
            return "reserved"
        return None

    def normalize(self, line: bytes) -> str:
        """The normalised sentence of one line (without its line end); ``""`` when nothing is left."""
        text = line.decode("utf-8", "surrogateescape")
        if _SURROGATE.search(text):  # each malformed byte is one U+FFFD, as sentencepiece reads it
            text = _SURROGATE.sub("\ufffd", text)
        rules = self.rules
        suffix = rules.add_dummy_prefix and rules.treat_whitespace_as_suffix
        if self._normalizer is not None:  # the dummy prefix, if any, is the normaliser's
            text = self._normalizer.normalize(text)
        else:
            if rules.remove_extra_whitespaces:
                text = " ".join(filter(None, text.split(" ")))
            if text and rules.add_dummy_prefix and not suffix:
                text = " " + text
        if not text:
            return ""
        if suffix:
            text += " "
        text = text.replace(" ", SPACE)
        if self._meta is not None:
            text = self._meta.sub(BOUNDARY, text)
        return text

    def words(self, line: bytes) -> list[str]:
        """The words of one line, or ``[]`` when spm_train skips it or nothing is left."""
        if self.skipped(line):
            return []
        sentence = self.normalize(line)
        return self.rules.sentence_words(sentence) if sentence else []
