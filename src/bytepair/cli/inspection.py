"""``bytepair inspect`` and ``bytepair vocab``: what a model holds."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from bytepair._util.validate import plural
from bytepair.cli.common import (add_model_pattern, add_trust_pattern, as_tokenizer, int_at_least,
                                 load_model, pattern_name, show_bytes)
from bytepair.cli.spm_models import is_sentencepiece

if TYPE_CHECKING:
    from bytepair.model.models import WordModel


def _sample_stats(tokenizer, sample: str) -> tuple[int, int]:
    """Bytes and tokens of a sample file (special-token text counts as text)."""
    from bytepair.read.corpus import files_named

    text = tokenizer.pattern is not None
    total_bytes = total_tokens = 0
    for document in files_named("--sample", sample).documents(text):
        total_bytes += len(document.encode("utf-8")) if text else len(document)
        total_tokens += len(tokenizer.model.encode(document))
    if total_tokens == 0:
        raise ValueError(f"--sample: {sample!r} holds no text")
    return total_bytes, total_tokens


def _word_sample_stats(model: WordModel, sample: str) -> tuple[int, int]:
    """Words and symbols of a sample file (words are split at white space)."""
    from bytepair.read.corpus import files_named

    words = symbols = 0
    for document in files_named("--sample", sample).documents(True):
        for word in document.split():
            words += 1
            symbols += len(model.encode(word))
    if words == 0:
        raise ValueError(f"--sample: {sample!r} holds no words")
    return words, symbols


def run_inspect_words(args, model: WordModel) -> None:
    """``inspect`` of a word-mode model: its rules, longest symbols and top rules by count."""
    sample = _word_sample_stats(model, args.sample) if args.sample is not None else None
    print(f"model: {args.model}")
    print("kind: word mode (string symbols; no token IDs)")
    print(f"rules: {len(model.merges):,}")
    print(f"end of word: {model.end_of_word!r}" if model.end_of_word else "end of word: none")
    longest = sorted(model.merges, key=lambda m: (-len(m.token_id), m.rank))[:args.top]
    print(f"longest symbols ({len(longest)}):")
    print(f"{'rank':>8}  {'length':>6}  symbol")
    for m in longest:
        print(f"{m.rank:>8}  {len(m.token_id):>6}  {m.token_id!r}")
    if model.merges and not any(m.count or m.replacements for m in model.merges):
        shown = model.merges[:args.top]
        print(f"first rules ({len(shown)} by rank; counts unknown: the file holds no training "
              f"counts)")
        print(f"{'rank':>8}  left + right")
        for m in shown:
            print(f"{m.rank:>8}  {m.left!r} + {m.right!r}")
    else:
        shown = sorted(model.merges, key=lambda m: (-m.count, m.rank))[:args.top]
        print(f"top rules ({len(shown)} by count):")
        print(f"{'rank':>8}  {'count':>10}  {'replacements':>12}  left + right")
        for m in shown:
            print(f"{m.rank:>8}  {m.count:>10}  {m.replacements:>12}  {m.left!r} + {m.right!r}")
    if sample is not None:
        words, symbols = sample
        print(f"sample: {args.sample}: {words:,} words -> {symbols:,} symbols, "
              f"{symbols / words:.3f} symbols per word")


def run_inspect(args) -> None:
    from bytepair.formats.bases import from_tokenizer
    from bytepair.formats.load import ModelFormatError
    from bytepair.model.models import BYTE_TOKENS, WordModel

    try:
        model = load_model(args.model, args.trust_pattern, pattern=args.pattern,
                           special=args.special)
    except ModelFormatError as refused:
        run_inspect_base(args, refused)
        return
    if isinstance(model, WordModel):
        run_inspect_words(args, model)
        return
    if type(model).__name__ == "SentencePieceModel":
        from bytepair.cli.sentencepiece import inspect_sentencepiece

        inspect_sentencepiece(args, model)
        return
    tokenizer = as_tokenizer(model, args.model)
    # The sample first: bad input fails before anything is printed.
    sample = _sample_stats(tokenizer, args.sample) if args.sample is not None else None
    merges = tokenizer.merges
    specials = tokenizer.special_tokens
    print(f"model: {args.model}")
    print(f"vocabulary size: {tokenizer.vocab_size:,} = 256 bytes + {plural(len(merges), 'merge')} + "
          f"{plural(len(specials), 'special token')}")
    print(f"merges: {len(merges):,}")
    listed = ", ".join(f"{token!r}={token_id}" for token, token_id in specials.items())
    print(f"special tokens: {listed or 'none'}")
    print(f"pattern: {pattern_name(tokenizer.pattern)}")
    stages = tokenizer.model.stages
    if stages is not None:
        print(f"superbpe: stage 1 to vocabulary {stages.transition} with "
              f"{pattern_name(stages.pretokenize)}, then tokens of up to {stages.max_words} words")

    top = args.top
    # An imported tokenizer gives out its source's IDs (Tokenizer.ids); the rules use bytepair's.
    outer = tokenizer.ids or range(tokenizer.vocab_size)
    token_bytes = tokenizer.model.token_bytes
    learned = range(BYTE_TOKENS, BYTE_TOKENS + len(merges))
    # Lengths are O(1) each: token bytes of a chain of rules would be quadratic.
    longest = sorted(learned, key=lambda t: (-tokenizer.model.token_length(t), t))[:top]
    print(f"longest tokens ({len(longest)}):")
    print(f"{'id':>8}  {'length':>6}  text")
    for token_id in longest:
        data = token_bytes(token_id)
        print(f"{outer[token_id]:>8}  {len(data):>6}  {show_bytes(data)}")

    if merges and not any(m.count or m.replacements for m in merges):
        # Imported rules (tokenizer.json, tiktoken) carry no counts: zeros are not counts.
        print(f"first merges ({min(top, len(merges))} by rank; counts unknown: the file holds "
              f"no training counts)")
        print(f"{'rank':>8}  {'token':>8}  {'left':>8}  {'right':>8}  text")
        for m in merges[:top]:
            print(f"{m.rank:>8}  {outer[m.token_id]:>8}  {outer[m.left]:>8}  {outer[m.right]:>8}  "
                  f"{show_bytes(token_bytes(m.token_id))}")
        _print_reachability(args, from_tokenizer(tokenizer), merges)
        _print_sample(args, sample)
        return
    # Rank order is count order for a fit from scratch; a warm start from a
    # model of another corpus need not be, so sort (ties: the earlier rank).
    shown = sorted(merges, key=lambda m: (-m.count, m.rank))[:top]
    print(f"top merges ({len(shown)} by count):")
    print(f"{'rank':>8}  {'token':>8}  {'left':>8}  {'right':>8}  {'count':>10}  "
          f"{'replacements':>12}  text")
    for m in shown:
        print(f"{m.rank:>8}  {outer[m.token_id]:>8}  {outer[m.left]:>8}  {outer[m.right]:>8}  "
              f"{m.count:>10}  {m.replacements:>12}  {show_bytes(token_bytes(m.token_id))}")
    _print_reachability(args, from_tokenizer(tokenizer), merges)
    _print_sample(args, sample)


def run_inspect_base(args, refused: Exception) -> None:
    """``inspect`` of a tokenizer bytepair cannot load as a model but can extend (a normalizer,
    ``ignore_merges`` with tokens no merge makes, ...): its size and its reachability."""
    from bytepair.formats.bases import read_base

    try:
        base = read_base(args.model, pattern=args.pattern, special_tokens=args.special,
                         trust_pattern=args.trust_pattern)
    except (ValueError, RecursionError):  # JSON nested too deep for Python's reader too
        raise refused from None
    print(f"model: {args.model}")
    print(f"kind: {base.kind} (bytepair cannot encode with it as a model: {refused})")
    print(f"vocabulary size: {base.size:,}; merges: {len(base.merges):,}; added tokens: "
          f"{len(base.added):,}; ignore_merges: {str(base.ignore_merges).lower()}")
    _print_reachability(args, base, None)


def _print_reachability(args, base, merges) -> None:
    """The tokens whose bytes the merges do not encode as themselves, and the tokens that
    encoding the training text never gives (known only from a model's training counts)."""
    from bytepair.evaluation.checks import intermediate_tokens

    unreachable = base.unreachable()
    print(f"unreachable tokens: {len(unreachable):,}"
          + (" (given only for a piece that is exactly their bytes: ignore_merges)"
             if unreachable and base.ignore_merges else ""))
    for token_id in unreachable[:args.top]:
        print(f"{token_id:>8}  {show_bytes(base.tokens[token_id])}")
    middle = intermediate_tokens(merges) if merges else None
    if middle is None:
        print("intermediate-only tokens: unknown (the file holds no training counts)")
        return
    outer = base.source.ids if base.source is not None and base.source.ids else None
    print(f"intermediate-only tokens: {len(middle):,} (never given when encoding the training "
          f"text)")
    for token in middle[:args.top]:
        token_id = outer[token] if outer else token
        print(f"{token_id:>8}  {show_bytes(base.tokens[token_id])}")


def _print_sample(args, sample) -> None:
    if sample is not None:
        total_bytes, total_tokens = sample
        print(f"sample: {args.sample}: {total_bytes:,} bytes -> {total_tokens:,} tokens, "
              f"{total_bytes / total_tokens:.3f} bytes per token")


# -- vocab ------------------------------------------------------------------

def escape_bytes(data: bytes) -> str:
    r"""Bytes as printable ASCII: each byte outside ``!``..``~`` and space, and ``\``, as ``\xNN``.

    >>> print(escape_bytes(b"a b\\\t\xc3\xa9"))
    a b\x5c\x09\xc3\xa9
    """
    return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02x}" for b in data)


_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _text_cell(data: bytes) -> str:
    """The token as text when it is whole UTF-8; characters that are not printable are escaped
    (as in Python: ``\\n``, ``\\x1b``, ``\\u2028``), so that every row is one line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    return "".join(
        char if char.isprintable() and char != "\\" else
        _ESCAPES.get(char) or char.encode("unicode_escape").decode("ascii")
        for char in text
    )


def run_vocab(args) -> None:
    from bytepair.model.models import WordModel

    model = load_model(args.model, args.trust_pattern, pattern=args.pattern, special=args.special)
    if isinstance(model, WordModel):
        # No IDs: one row per rule, in rank order, the symbol it makes last.
        out = ["rank\tleft\tright\tsymbol\n"]
        for m in model.merges:
            cells = (_text_cell(s.encode("utf-8")) for s in (m.left, m.right, m.token_id))
            out.append(f"{m.rank}\t" + "\t".join(cells) + "\n")
        sys.stdout.write("".join(out))
        return
    if is_sentencepiece(model):
        _sentencepiece_vocab(model)
        return
    tokenizer = as_tokenizer(model, args.model)
    out = ["id\tbytes\ttext\n"]
    for token_id in range(tokenizer.vocab_size):
        data = tokenizer.id_to_token(token_id)
        out.append(f"{token_id}\t{escape_bytes(data)}\t{_text_cell(data)}\n")
    sys.stdout.write("".join(out))


def _sentencepiece_vocab(model) -> None:
    """A sentencepiece model's pieces: ID, piece (escaped as a token's text), score, type."""
    from bytepair.model.spm_model import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED

    kinds = {NORMAL: "normal", UNKNOWN: "unknown", CONTROL: "control",
             USER_DEFINED: "user-defined", UNUSED: "unused", BYTE: "byte"}
    out = ["id\tpiece\tscore\ttype\n"]
    for at, (piece, score, kind) in enumerate(model.pieces):
        out.append(f"{at}\t{_text_cell(piece.encode('utf-8'))}\t{score:g}\t{kinds.get(kind, kind)}\n")
    sys.stdout.write("".join(out))


def add_commands(commands) -> None:
    """Register ``inspect`` and ``vocab``."""
    count = int_at_least(0)
    inspect = commands.add_parser(
        "inspect", help="describe a model",
        description="Vocabulary size, merges, special tokens, pattern, longest tokens, top merges "
        "with counts and replacements, and bytes per token on an optional sample. A word-mode "
        "model shows its rules, longest symbols and symbols per word.",
    )
    inspect.add_argument("model", metavar="MODEL")
    inspect.add_argument("--sample", metavar="FILE", help="report bytes per token on this file")
    inspect.add_argument("--top", type=count, default=10, metavar="N", help="rows per table (10)")
    add_trust_pattern(inspect)
    add_model_pattern(inspect)
    inspect.set_defaults(run=run_inspect)

    vocab = commands.add_parser(
        "vocab", help="list every token",
        description="Print the vocabulary as tab-separated rows with a header: the ID, the "
        "token's bytes (printable ASCII as is, other bytes as \\xNN), and the token as text "
        "when it is whole UTF-8 (\\t, \\n, \\r and \\\\ escaped). Special tokens come last. "
        "A word-mode model has no IDs: its rows are its rules (rank, left, right, symbol). "
        "A sentencepiece model's rows are its pieces (ID, piece, score, type).",
    )
    vocab.add_argument("model", metavar="MODEL")
    add_trust_pattern(vocab)
    add_model_pattern(vocab)
    vocab.set_defaults(run=run_vocab)
