"""The named pre-tokenizer patterns, as regex sources (imports nothing from bytepair).

GPT-2, GPT-4 (``cl100k``) and GPT-4o (``o200k``) as published with tiktoken,
``whitespace`` (Hugging Face's ``Whitespace`` pre-tokenizer), ``whitespace-split`` (Hugging
Face's ``WhitespaceSplit``: runs of non-white-space, so ``ab,`` is one piece), ``nanochat`` and
``superbpe``
(the stage-2 pattern of SuperBPE superword training: its matches are digits, punctuation
runs and trailing spaces, and the text between them, whole phrases, is cut as pieces of its
own).
Its own module so that :mod:`bytepair.split.pretokenize` (splitting with ``regex``)
and :mod:`bytepair.split.fastsplit` (the compiled scanners) both read them and
neither imports the other's loading in a cycle.
"""

#: Pattern name -> regex source. ``bytepair.split.pretokenize.PATTERNS`` is this dict.
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
    # The white space between two runs is a piece too, as bytepair keeps all text (the pieces are
    # those of \S+|\s+); Hugging Face's WhitespaceSplit drops it.
    "whitespace-split": r"""\S+""",
    "nanochat": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+""",
    "superbpe": r"""\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)""",
}

#: tiktoken's encoding names, as users pass them for a pattern -> bytepair's name of that pattern.
TIKTOKEN_NAMES = {"r50k_base": "gpt2", "p50k_base": "gpt2", "cl100k_base": "cl100k",
                  "o200k_base": "o200k"}
