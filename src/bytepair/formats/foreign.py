"""Files of other tools given where a model belongs: what they are, and what to pass instead.

``bytepair.load`` reads its own model files, a Hugging Face ``tokenizer.json``
(or the directory that holds one), a tiktoken ranks file and a sentencepiece BPE
``.model`` (which is not a byte-level base: ``bytepair.extend`` takes it on its own path). People also try
the other files that sit beside a tokenizer; each gets one line that names the
kind of file and says what to pass, or that bytepair does not read that
format, instead of a JSON or UTF-8 error about its first byte.
"""

from __future__ import annotations

from bytepair.formats.export import SPECIAL_TOKENS_SUFFIX

#: What makes a ``tokenizer.json`` from GPT-2 style ``vocab.json`` and ``merges.txt``.
_FROM_VOCAB_AND_MERGES = (
    "pass the tokenizer.json that holds them (or its directory); to make one: "
    "tokenizers.ByteLevelBPETokenizer('vocab.json', 'merges.txt').save('tokenizer.json')")
_TOKENIZER_BESIDE = "pass its directory, or the tokenizer.json beside it"
#: Keys that only a transformers ``tokenizer_config.json`` holds.
_TOKENIZER_CONFIG_KEYS = {"tokenizer_class", "added_tokens_decoder", "model_max_length",
                          "clean_up_tokenization_spaces", "chat_template"}
_SPECIAL_TOKENS_MAP_KEYS = {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token",
                            "cls_token", "mask_token", "additional_special_tokens"}


def binary_file(data: bytes) -> str | None:
    """What a file that is not UTF-8 text is, when it is a known kind; None otherwise."""
    if data[:2] == b"\x1f\x8b":
        return "is gzip-compressed; a model file is read as it is: decompress it first (gunzip)"
    if data[:4] == b"PAR1":
        return ("is a Parquet file, not a model; to train on it: "
                "bytepair train FILE.parquet --text-column NAME")
    if is_sentencepiece(data):
        return ("is a sentencepiece model (.model), not a byte-level tokenizer: its pieces "
                "carry scores, not byte-pair merge ranks; bytepair.load reads it (BPE models), "
                "and bytepair.extend extends it into a .model")
    return None


def is_sentencepiece(data: bytes) -> bool:
    """A serialized sentencepiece ``ModelProto``: it opens with its first piece (field 1,
    length-delimited: byte 0x0a), itself opening with the piece's text (0x0a again), and
    holds the word-start mark U+2581 or the default ``<unk>`` near the start."""
    if len(data) < 4 or data[0] != 0x0A:
        return False
    # The first piece's length is a varint; its first field is the piece text.
    at = 1
    while at < len(data) and data[at] & 0x80:
        at += 1
    head = data[:1 << 16]
    return at + 1 < len(data) and data[at + 1] == 0x0A and (
        b"\xe2\x96\x81" in head or b"<unk>" in head)


def text_file(text: str) -> str | None:
    """What a UTF-8 file that is not JSON is, when it is a known kind; None otherwise."""
    if is_sentencepiece(text[:1 << 16].encode("utf-8", "surrogatepass")):
        return binary_file(text[:1 << 16].encode("utf-8", "surrogatepass"))  # valid UTF-8 by chance
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if not lines:
        return None
    if {"[PAD]", "[UNK]", "[CLS]"} & set(lines[:5]):
        return ("is a WordPiece vocab.txt (BERT), which bytepair does not read: WordPiece "
                "matches the longest vocabulary entry, it has no byte-pair merges")
    if lines[0].startswith("#version") or (
            len(lines) >= 2 and all(len(line.split(" ")) == 2 for line in lines[:20])):
        return f"is a merges.txt (GPT-2 style merge list) without its vocabulary: {_FROM_VOCAB_AND_MERGES}"
    return None


def json_file(data, name: str = "") -> str | None:
    """What a JSON document that is not a bytepair model is, when it is a known kind
    (``name``: the file's name)."""
    if not isinstance(data, dict):
        return None
    if name.endswith(SPECIAL_TOKENS_SUFFIX):
        return ("holds the special tokens of a tiktoken ranks file: load the ranks file, "
                "with this one as its special tokens (load(ranks, pattern=..., "
                "special_tokens=this file); command line: --special FILE)")
    if data.get("format") == "bytepair-checkpoint":
        return ("is the manifest of a training checkpoint, not a model: continue the run with "
                "'bytepair train ... --checkpoint DIR --resume'")
    keys = set(data)
    if keys & _TOKENIZER_CONFIG_KEYS:
        return ("is a transformers tokenizer_config.json, which holds settings, not the "
                f"tokenizer: {_TOKENIZER_BESIDE}")
    if keys and keys <= _SPECIAL_TOKENS_MAP_KEYS:
        return ("is a transformers special_tokens_map.json, which names special tokens, not "
                f"the tokenizer: {_TOKENIZER_BESIDE}")
    if "model_type" in keys or "architectures" in keys:
        return f"is a transformers model config.json, not a tokenizer: {_TOKENIZER_BESIDE}"
    if isinstance(data.get("vocab"), list) and isinstance(data.get("config"), dict):
        return "is a Mistral tekken.json tokenizer, which bytepair does not read"
    if data and all(isinstance(v, int) and not isinstance(v, bool) for v in data.values()):
        return f"is a vocabulary (token -> ID, like GPT-2's vocab.json) without its merges (merges.txt); {_FROM_VOCAB_AND_MERGES}"
    return None
