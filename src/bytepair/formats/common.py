"""What the modules of ``formats/`` share: GPT-2's byte alphabet, a Tokenizer from a model,
and the checks of a ``tokenizer.json`` pipeline (normalizer, pre-tokenizer, post-processor,
decoder) that imports and exports alike make.

Every refusal is an :class:`ImportRefused`: one line naming the feature that bytepair
cannot reproduce exactly.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

from bytepair._util.errors import ArgumentError, InputError
from bytepair.model.models import BYTE_TOKENS, ByteModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.split.dialects import HF_PATTERNS, regex_constructs
from bytepair.split.pretokenize import PATTERNS, check_custom_pattern

#: The regex of Hugging Face's ``ByteLevel`` pre-tokenizer (``use_regex``): GPT-2's.
BYTE_LEVEL_PATTERN = PATTERNS["gpt2"]
#: Oniguruma regex (as ``tokenizer.json`` holds it) -> bytepair's source, for the named patterns.
_FROM_HF = {hf: source for source, hf in HF_PATTERNS.items()}


class ImportRefused(InputError):
    """A file whose tokenizer bytepair cannot reproduce exactly; the message names the feature."""


class LikeRefused(ArgumentError, ImportRefused):
    """An export's ``like`` (a tokenizer whose pipeline to copy) that would not encode as the
    model does; the message names the argument (``like: ...``)."""

    def __init__(self, *parts):
        super().__init__("like", *parts)

    def __reduce__(self):
        return (type(self), self.parts)


def first_not_itself(model: ByteModel, spelled: list[bytes]) -> tuple[int, list[int]] | None:
    """The first learned token that does not encode, alone and unsplit, to itself: ``(k, its
    IDs)`` for token ``256 + k`` (its bytes are ``spelled[k]``), None when every one does.
    All of them in one call of the encoder. O(their total bytes x log).

    >>> from bytepair.learn.rules import Merge
    >>> a, b, c = b"abc"  # (b, c), (a, b), (ab, c): "abc" encodes as a, bc
    >>> model = ByteModel([Merge(0, b, c, 256, 1, 1), Merge(1, a, b, 257, 1, 1),
    ...                    Merge(2, 257, c, 258, 1, 1)])
    >>> first_not_itself(model, [b"bc", b"ab", b"abc"])
    (2, [97, 256])
    """
    encoded, at = model.encode_spans(b"".join(spelled), [0, *accumulate(map(len, spelled))])
    if encoded == array("I", range(BYTE_TOKENS, BYTE_TOKENS + len(spelled))):
        return None
    return next((k, encoded[at[k]:at[k + 1]].tolist()) for k in range(len(spelled))
                if encoded[at[k]:at[k + 1]] != array("I", [BYTE_TOKENS + k]))


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to a printable character (``tokenizer.json`` vocabularies use it).

    Printable Latin-1 bytes stand for themselves; the others (space, control
    bytes, ...) take the characters from U+0100 on, in byte order.

    >>> table = bytes_to_unicode()
    >>> table[ord("a")], table[ord(" ")], table[ord("\\n")], len(set(table.values()))
    ('a', 'Ġ', 'Ċ', 256)
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def as_tokenizer(tokenizer: Tokenizer | ByteModel) -> Tokenizer:
    """``tokenizer`` itself, or a bare ByteModel wrapped as a Tokenizer with no special tokens."""
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if isinstance(tokenizer, ByteModel):
        return Tokenizer(tokenizer)
    raise TypeError(f"tokenizer must be a bytepair Tokenizer or ByteModel, got {type(tokenizer).__name__}")


def check_normalizer(normalizer) -> None:
    """Refuse a ``tokenizer.json`` normalizer (an empty Sequence is none)."""
    if normalizer is None:
        return
    if normalizer.get("type") == "Sequence" and not normalizer.get("normalizers"):
        return
    raise ImportRefused(f"the normalizer ({normalizer.get('type')}) changes the text before it "
                        f"is split; bytepair has no normalizers")


def steps_of(component, key: str) -> list:
    """The parts of a component, a Sequence's parts in order."""
    if component is None:
        return []
    if not isinstance(component, dict):
        raise ImportRefused(f"{key} must be an object or null")
    if component.get("type") == "Sequence":
        parts = component.get(key, component.get("processors", component.get("decoders", [])))
        return [step for part in parts for step in steps_of(part, key)]
    return [component]


def check_post_processor(post_processor) -> None:
    """Refuse a ``tokenizer.json`` post-processor that adds tokens around the encoded text."""
    for step in steps_of(post_processor, "processors"):
        kind = step.get("type")
        if kind == "ByteLevel":
            continue  # it moves offsets only
        if (kind == "TemplateProcessing" and not step.get("special_tokens")
                and step.get("single") == [{"Sequence": {"id": "A", "type_id": 0}}]):
            continue
        raise ImportRefused(f"the post_processor ({kind}) adds tokens around the encoded text; "
                            f"bytepair adds none")


def check_decoder(decoder) -> None:
    """Refuse a ``tokenizer.json`` decoder other than ``ByteLevel`` (alone or in a Sequence)."""
    for step in steps_of(decoder, "decoders"):
        if step.get("type") != "ByteLevel":
            raise ImportRefused(f"the decoder ({step.get('type')}) is not ByteLevel, so decoding "
                                f"would not give the bytes back as bytepair does")


def read_pattern(pre_tokenizer, trust_pattern: bool) -> str | None:
    """bytepair's pattern for a ``tokenizer.json`` pre-tokenizer: ``ByteLevel`` alone (GPT-2's
    pattern with its regex, else none), or a ``Split`` (isolated) then ``ByteLevel`` without
    regex; anything else is refused. A Split regex that is not a named pattern is read only
    with ``trust_pattern``."""
    steps = steps_of(pre_tokenizer, "pretokenizers")
    if not steps or steps[-1].get("type") != "ByteLevel":
        raise ImportRefused("the pre_tokenizer does not end with ByteLevel, so the model is not "
                            "byte-level BPE")
    *before, byte_level = steps
    if byte_level.get("add_prefix_space"):
        raise ImportRefused("ByteLevel add_prefix_space: it adds a space that is not in the text")
    use_regex = byte_level.get("use_regex", True)
    if not before:
        return BYTE_LEVEL_PATTERN if use_regex else None
    if len(before) > 1 or before[0].get("type") != "Split":
        kinds = ", ".join(str(step.get("type")) for step in before)
        raise ImportRefused(f"the pre_tokenizer has {kinds} before ByteLevel; bytepair reads "
                            f"one Split there")
    if use_regex:
        raise ImportRefused("a Split followed by ByteLevel with use_regex: two splits, where "
                            "bytepair has one")
    split = before[0]
    behavior = str(split.get("behavior", "")).lower()
    if behavior != "isolated":
        raise ImportRefused(f"Split behavior {split.get('behavior')!r}: bytepair keeps every "
                            f"match and the text between matches as pieces (Isolated)")
    if split.get("invert"):
        raise ImportRefused("Split invert: bytepair splits on the matches themselves")
    given = split.get("pattern")
    if isinstance(given, dict) and isinstance(given.get("String"), str) and given["String"]:
        import regex  # at first use: importing it at start-up is slow

        return regex.escape(given["String"])
    if not (isinstance(given, dict) and isinstance(given.get("Regex"), str)):
        raise ImportRefused("the Split pattern must be {\"Regex\": ...} or {\"String\": ...}")
    source = given["Regex"]
    known = _FROM_HF.get(source)
    if known is not None:
        return known
    differ = regex_constructs(source)
    if differ:
        raise ImportRefused(f"the Split pattern uses {', '.join(sorted(differ))}, which means "
                            f"something else in Oniguruma (tokenizers) than in bytepair's regex")
    if source in PATTERNS.values():  # a named pattern that Oniguruma reads as regex does
        return source
    if not trust_pattern:
        raise ImportRefused(
            f"the Split pattern {short(source)} is not one of bytepair's named patterns; a regex "
            f"from a file can take exponential time on some text, so it is used only with "
            f"load(..., trust_pattern=True) (command line: --trust-pattern)")
    try:
        return check_custom_pattern(source, "the Split pattern")
    except ValueError as exc:
        raise ImportRefused(str(exc)) from None


def short(value) -> str:
    """``repr(value)``, cut to 120 characters for a one-line message.

    >>> short("ab"), len(short("x" * 500))
    ("'ab'", 123)
    """
    text = repr(value)
    return text if len(text) <= 120 else text[:120] + "..."
