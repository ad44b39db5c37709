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

import dataclasses
import re
from dataclasses import dataclass

#: The meta symbol of a space.
SPACE = "\u2581"
#: The trainer's mark for an unknown character; a line holding it is skipped.
UNKNOWN_CHAR = "\u2585"
_UNKNOWN_BYTES = UNKNOWN_CHAR.encode()
#: Where a meta piece stood.
BOUNDARY = "\x1f"
#: The normalisation rules sentencepiece ships.
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")
_SURROGATE = re.compile("[\udc80-\udcff]")
# SplitIntoWords (model_interface.cc): (suffix mode, whitespace-only pieces) -> word pattern.
# Sentences are lines of one text here: no word crosses a line end.
_WORD = {
    (False, False): re.compile(f"[^{SPACE}\n]+|{SPACE}[^{SPACE}\n]*"),
    (False, True): re.compile(f"{SPACE}+[^{SPACE}\n]*|[^{SPACE}\n]+"),
    (True, False): re.compile(f"[^{SPACE}\n]*{SPACE}|[^{SPACE}\n]+"),
    (True, True): re.compile(f"[^{SPACE}\n]+{SPACE}*|{SPACE}+"),
}
_SENTENCE = re.compile("[^\n]+")
_SPACES = re.compile(" {2,}")
_EDGE_SPACE = re.compile("^ | $", re.M)
_LINE_START = re.compile("^(?=.)", re.M)
_LINE_END = re.compile("(?<=.)$", re.M)
_TRAILING_SPACES = re.compile(f"{SPACE}+$", re.M)


#: The keys of :meth:`TextRules.as_json` and their JSON types.
_JSON_TYPES = {"normalization_rule_name": str, "add_dummy_prefix": bool, "remove_extra_whitespaces": bool,
               "treat_whitespace_as_suffix": bool, "allow_whitespace_only_pieces": bool,
               "split_by_whitespace": bool, "max_sentence_length": int, "meta_pieces": list}


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
    #: A model's own character map, used instead of the rule's when given (a base being extended).
    precompiled_charsmap: bytes | None = None

    @property
    def identity(self) -> bool:
        """Whether no character map applies (only spaces are handled)."""
        if self.precompiled_charsmap is not None:
            return not self.precompiled_charsmap
        return self.normalization_rule_name == "identity"

    def canonical(self) -> TextRules:
        """The same rules with the meta pieces sorted and each once (only the set decides the words)."""
        return dataclasses.replace(self, meta_pieces=tuple(sorted(set(self.meta_pieces))))

    def as_json(self) -> dict:
        """The rules as a count table's header stores them (:meth:`from_json` reads them back).

        >>> TextRules.from_json(TextRules(meta_pieces=("<s>", "<unk>")).as_json()).meta_pieces
        ('<s>', '<unk>')
        """
        if self.precompiled_charsmap is not None:
            raise ValueError("sentencepiece rules with a model's own character map cannot be stored")
        rules = self.canonical()
        return {name: list(rules.meta_pieces) if name == "meta_pieces" else getattr(rules, name)
                for name in _JSON_TYPES}

    @classmethod
    def from_json(cls, value) -> TextRules:
        """The rules :meth:`as_json` wrote; a ValueError naming the first key that is missing,
        unknown or of the wrong type."""
        if not isinstance(value, dict):
            raise ValueError(f"the sentencepiece rules must be an object, not {type(value).__name__}")
        for name in value:
            if name not in _JSON_TYPES:
                raise ValueError(f"the sentencepiece rules hold an unknown key {name!r}")
        for name, kind in _JSON_TYPES.items():
            if name not in value:
                raise ValueError(f"the sentencepiece rules have no {name!r}")
            item = value[name]
            if not isinstance(item, kind) or (kind is int and isinstance(item, bool)):
                raise ValueError(f"the sentencepiece rules' {name!r} must be a {kind.__name__}, "
                                 f"not {type(item).__name__}")
        if value["normalization_rule_name"] not in RULES:
            raise ValueError(f"the sentencepiece rules' 'normalization_rule_name' "
                             f"{value['normalization_rule_name']!r} is not one of {', '.join(RULES)}")
        if not 10 <= value["max_sentence_length"] <= 1 << 30:
            raise ValueError(f"the sentencepiece rules' 'max_sentence_length' {value['max_sentence_length']} "
                             f"is outside [10, 2**30]")
        pieces = value["meta_pieces"]
        if not all(isinstance(piece, str) and piece for piece in pieces) or pieces != sorted(set(pieces)):
            raise ValueError("the sentencepiece rules' 'meta_pieces' must be distinct non-empty strings, sorted")
        return cls(**dict(value, meta_pieces=tuple(pieces)))

    def difference(self, other: TextRules) -> tuple[str, str, str] | None:
        """``(field, own value, other's value)`` of the first field where the rules differ (the
        meta pieces as the pieces only one side has), or None when they cut the same words.

        >>> TextRules().difference(TextRules(max_sentence_length=100))
        ('max_sentence_length', '4192', '100')
        >>> TextRules(meta_pieces=("<s>", "<unk>")).difference(TextRules(meta_pieces=("<unk>",)))
        ('meta_pieces', "'<s>'", 'none')
        """
        for name in _JSON_TYPES:
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "meta_pieces":
                mine, theirs = set(mine), set(theirs)
                if mine != theirs:
                    return name, _pieces(mine - theirs), _pieces(theirs - mine)
            elif mine != theirs:
                return name, str(mine).lower() if isinstance(mine, bool) else str(mine), \
                    str(theirs).lower() if isinstance(theirs, bool) else str(theirs)
        return None

    def sentence_words(self, sentences: str) -> list[str]:
        """Normalised sentences (one a line) cut into words (whole sentences without ``split_by_whitespace``)."""
        if not self.split_by_whitespace:
            return _SENTENCE.findall(sentences)
        key = (self.treat_whitespace_as_suffix, self.allow_whitespace_only_pieces)
        return _WORD[key].findall(sentences)


def _pieces(pieces: set[str]) -> str:
    """Meta pieces as a message shows them (the 256 byte pieces of byte_fallback as one range)."""
    byte_pieces = {f"<0x{b:02X}>" for b in range(256)}
    has_bytes = byte_pieces <= pieces
    shown = [repr(piece) for piece in sorted(pieces - byte_pieces if has_bytes else pieces)]
    if has_bytes:
        shown.append("<0x00>...<0xFF> (byte_fallback)")
    return ", ".join(shown) or "none"


class SentenceText:
    """Lines (bytes) -> normalised sentences and words under :class:`TextRules`."""

    def __init__(self, rules: TextRules):
        self.rules = rules
        self._normalizer = self._plain = None
        if not rules.identity:
            if rules.precompiled_charsmap is None and rules.normalization_rule_name not in RULES:
                raise ValueError(f"normalization_rule_name: {rules.normalization_rule_name!r} is not one of "
                                 f"{', '.join(RULES)}")
            self._normalizer = self._made_normalizer(rules.add_dummy_prefix and not rules.treat_whitespace_as_suffix,
                                                     rules.remove_extra_whitespaces)
        pieces = sorted(set(rules.meta_pieces), key=lambda p: (-len(p), p))
        self._meta = re.compile("|".join(map(re.escape, pieces))) if pieces else None
        self._meta_starts = {piece[0] for piece in pieces}

    def skipped(self, line: bytes) -> str | None:
        """Why spm_train leaves ``line`` out (``"empty"``, ``"too long"``, ``"reserved"``), or None."""
        if not line:
            return "empty"
        if len(line) > self.rules.max_sentence_length:
            return "too long"
        if _UNKNOWN_BYTES in line:
            return "reserved"
        return None

    def _made_normalizer(self, dummy_prefix: bool, remove_extra_whitespaces: bool):
        """sentencepiece's normaliser of the rules' map (the model's own map when given)."""
        options = dict(add_dummy_prefix=dummy_prefix, escape_whitespaces=False,
                       remove_extra_whitespaces=remove_extra_whitespaces)
        if self.rules.precompiled_charsmap is None:
            return sentencepiece_module().SentencePieceNormalizer(
                rule_name=self.rules.normalization_rule_name, **options)
        from sentencepiece import sentencepiece_model_pb2

        spec = sentencepiece_model_pb2.NormalizerSpec(
            name=self.rules.normalization_rule_name, precompiled_charsmap=self.rules.precompiled_charsmap,
            **options)
        return sentencepiece_module().SentencePieceNormalizer(normalizer_spec=spec.SerializeToString())

    def charsmap(self) -> bytes:
        """The precompiled character map, as sentencepiece ships it (``b""`` for ``identity``)."""
        if self._normalizer is None:
            return b""
        if self.rules.precompiled_charsmap is not None:
            return self.rules.precompiled_charsmap
        from sentencepiece import sentencepiece_model_pb2

        spec = sentencepiece_model_pb2.NormalizerSpec()
        spec.ParseFromString(self._normalizer.serialized_normalizer_spec())
        return spec.precompiled_charsmap

    def normalize(self, line: bytes) -> str:
        """The normalised sentence of one line (without its line end); ``""`` when nothing is left."""
        return self._boundaries(self._sentences([line]))

    def words(self, line: bytes) -> list[str]:
        """The words of one line, or ``[]`` when spm_train skips it or nothing is left."""
        return self.block_words([line])

    def block_words(self, lines: list[bytes]) -> list[str]:
        """The words of many lines (ends removed), skipped lines left out. O(total characters)."""
        limit = self.rules.max_sentence_length
        lines = [line for line in lines if line and len(line) <= limit]
        if any(_UNKNOWN_BYTES in line for line in lines):
            lines = [line for line in lines if _UNKNOWN_BYTES not in line]
        return self.rules.sentence_words(self._boundaries(self._sentences(lines)))

    def _sentences(self, lines: list[bytes]) -> str:
        """Non-empty lines as normalised sentences (``▁`` for spaces), one a line."""
        if self._normalizer is not None:
            return "\n".join([self._mapped(line) for line in lines])
        text = b"\n".join(lines).decode("utf-8", "surrogateescape")
        if _SURROGATE.search(text):  # each malformed byte is one U+FFFD, as sentencepiece reads it
            text = _SURROGATE.sub("\ufffd", text)
        return self._identity(text)

    def _mapped(self, line: bytes) -> str:
        """One line through the rule's map (sentencepiece's normaliser reads its bytes: a malformed
        byte is a U+FFFD that the map never sees), the dummy prefix its, the rest here."""
        rules = self.rules
        text = self._normalizer.normalize(line).decode("utf-8").replace(" ", SPACE)
        if rules.remove_extra_whitespaces:
            text = text.rstrip(SPACE)  # the normaliser strips trailing spaces, sentencepiece ▁ too
        # The suffix comes after, even when nothing else is left, unless the line was all
        # spaces that leading-space removal took (then sentencepiece stops before the suffix).
        if rules.add_dummy_prefix and rules.treat_whitespace_as_suffix and (
                text or not rules.remove_extra_whitespaces or not self._all_spaces(line)):
            text += SPACE
        return text

    def _all_spaces(self, line: bytes) -> bool:
        """Whether each character of ``line`` is mapped to one space (U+3000, NBSP, ...)."""
        if self._plain is None:
            self._plain = self._made_normalizer(False, False)
        text = line.decode("utf-8", "surrogateescape")
        return not _SURROGATE.search(text) and all(self._plain.normalize(char) == " " for char in text)

    def _identity(self, text: str) -> str:
        """Sentences (one a line) under ``identity``: spaces removed, dummy ``▁``, ``▁`` for spaces."""
        rules = self.rules
        suffix = rules.add_dummy_prefix and rules.treat_whitespace_as_suffix
        if rules.remove_extra_whitespaces and " " in text:
            text = _EDGE_SPACE.sub("", _SPACES.sub(" ", text))
        if rules.add_dummy_prefix and not suffix:
            text = _LINE_START.sub(" ", text)
        text = text.replace(" ", SPACE)
        if rules.remove_extra_whitespaces and (SPACE + "\n" in text or text.endswith(SPACE)):
            # sentencepiece strips every trailing ▁ of a normalised sentence, a ▁ of its input
            # too; the suffix's ▁ comes after, even when nothing else is left.
            if suffix:
                text = "\n".join([line.rstrip(SPACE) + SPACE if line else line
                                  for line in text.split("\n")])
                suffix = False
            else:
                text = _TRAILING_SPACES.sub("", text)
        if suffix:
            text = _LINE_END.sub(SPACE, text)
        return text

    def _boundaries(self, text: str) -> str:
        """Every meta piece in ``text`` made the boundary U+001F, the longest first."""
        if self._meta is not None and any(first in text for first in self._meta_starts):
            text = self._meta.sub(BOUNDARY, text)
        return text
