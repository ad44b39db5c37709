"""``bytepair train FILES --sentencepiece``: spm_train's BPE, with spm_train's option names (dashes).

The parser is built from :class:`bytepair.training.sentencepiece.SentencePieceOptions`:
a boolean is a flag that also takes ``true`` or ``false`` (``--remove-extra-whitespaces
false``); symbol lists are comma-separated. An spm_train option bytepair does not
support is refused in one line naming it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import fields

from bytepair._util.atomic import check_target
from bytepair.cli.common import Parser, cluster, integer, memory_size, size

#: spm_train options with no counterpart here (refused by name, not as a typo).
UNSUPPORTED = ("input-sentence-size", "shuffle-input-sentence", "seed-sentencepiece-size",
               "shrinking-factor", "num-sub-iterations", "required-chars", "use-all-vocab",
               "vocabulary-output-piece-score", "train-extremely-large-corpus", "input-format",
               "pretokenization-delimiter", "normalization-rule-tsv", "denormalization-rule-tsv",
               "auto-character-coverage", "split-by-unicode-script-extended", "self-test-sample-size",
               "enable-differential-privacy", "seed-sentencepieces-file", "model-prefix", "input",
               "unk-surface", "mining-sentence-size", "training-sentence-size", "byte-fallback-only",
               "max-sentencepiece-length-per-script", "accept-language", "model-type")


def boolean(text: str) -> bool:
    """``true`` or ``false`` (spm_train's spelling; also 1/0, yes/no)."""
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def symbols(text: str) -> tuple[str, ...]:
    return tuple(s for s in text.split(",") if s)


def parser() -> Parser:
    """The ``train --sentencepiece`` command's parser."""
    from bytepair.training.sentencepiece import SentencePieceOptions

    command = Parser(prog="bytepair train", description="Train a sentencepiece BPE model exactly as "
                     "spm_train does (sentencepiece 0.2.3), and write its .model file.")
    command.add_argument("files", nargs="+", metavar="FILE", help="text files, one sentence a line")
    command.add_argument("--sentencepiece", action="store_true", required=True,
                         help="train spm_train's BPE (this command)")
    command.add_argument("--vocab-size", type=size, required=True, metavar="N")
    command.add_argument("-o", "--output", required=True, metavar="FILE.model")
    command.add_argument("--workers", "--num-threads", type=integer, default=1, metavar="N",
                         help="threads that count the words (default 1)")
    command.add_argument("--max-memory", type=memory_size, default=None, metavar="SIZE",
                         help="keep the whole run within SIZE (4GiB, 512MiB): the counting tables "
                         "get a third of it, and a merge loop that would not fit is refused "
                         "before it starts (default: no limit)")
    command.add_argument("--count-memory", type=memory_size, default=None, metavar="SIZE",
                         help="keep the word-counting tables within SIZE (4GiB, 512MiB): past it "
                         "they spill to TMPDIR and are merged back (the model is the same)")
    command.add_argument("--scheduler", metavar="ADDRESS",
                         help="count the words on the Dask cluster at ADDRESS (tcp://host:8786); "
                         "its workers must see the FILEs at the same paths")
    command.add_argument("--tokenizer-json", metavar="FILE",
                         help="also write a Hugging Face tokenizer.json of the model")
    command.add_argument("-q", "--quiet", action="store_true")
    for option in fields(SentencePieceOptions):
        if option.name in ("vocab_size", "given"):
            continue
        flag = "--" + option.name.replace("_", "-")
        if option.type in ("bool", bool):
            command.add_argument(flag, type=boolean, nargs="?", const=True, default=None,
                                 metavar="true|false")
        elif option.name.endswith("symbols"):
            command.add_argument(flag, type=symbols, default=None, metavar="A,B,...")
        else:
            kind = {"int": integer, "float": float}.get(str(option.type), str)
            command.add_argument(flag, type=kind, default=None, metavar=option.name.split("_")[-1].upper())
    command.set_defaults(run=run_train_sentencepiece, check_usage=None)
    original = command.check_options

    def check_options(argv: list[str]) -> None:
        for token in argv:
            name = token.split("=", 1)[0].lstrip("-").replace("_", "-")
            if token.startswith("--") and name in UNSUPPORTED:
                command.error(f"--{name}: an spm_train option bytepair does not support")
        original(argv)

    command.check_options = check_options
    return command


def run_train_sentencepiece(args) -> None:
    from bytepair.formats.spm_file import save_sentencepiece
    from bytepair.training.sentencepiece import SentencePieceOptions, train_sentencepiece

    check_target(args.output, "-o")
    if args.tokenizer_json:
        check_target(args.tokenizer_json, "--tokenizer-json")
    names = {f.name for f in fields(SentencePieceOptions)} - {"vocab_size", "given"}
    options = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    say = (lambda line: None) if args.quiet else (lambda line: print(f"bytepair: {line}", file=sys.stderr))
    start = time.perf_counter()
    with cluster(args.scheduler) as client:
        model = train_sentencepiece(args.files, vocab_size=args.vocab_size, workers=args.workers,
                                    report=say, count_memory=args.count_memory, max_memory=args.max_memory,
                                    client=client, **options)
    save_sentencepiece(model, args.output)
    if args.tokenizer_json:
        from bytepair.formats.spm_export import export_sentencepiece

        export_sentencepiece(model, args.tokenizer_json)
    say(f"{len(model)} pieces in {time.perf_counter() - start:.1f} s; "
        f"{model.skipped_lines} lines skipped as longer than max_sentence_length; wrote {args.output}")


def inspect_sentencepiece(args, model) -> None:
    """``bytepair inspect`` of a sentencepiece BPE model: its pieces by type, normaliser and longest pieces."""
    from bytepair.model.spm_model import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED

    sample = None
    if args.sample is not None:
        with open(args.sample, encoding="utf-8") as handle:
            lines = [line.rstrip("\n") for line in handle]
        tokens = sum(len(model.encode(line)) for line in lines)
        sample = (len(lines), sum(len(line.encode()) for line in lines), tokens)
    kinds = {NORMAL: "normal", UNKNOWN: "unknown", CONTROL: "control", USER_DEFINED: "user-defined",
             BYTE: "byte"}
    counted = {name: sum(1 for _, _, k in model.pieces if k == kind) for kind, name in kinds.items()}
    print(f"model: {args.model}")
    print("kind: sentencepiece BPE (pieces with scores; no merge list)")
    print(f"vocabulary size: {len(model):,} = " + " + ".join(f"{n:,} {name}" for name, n in counted.items() if n))
    print(f"byte fallback: {'yes' if model.byte_fallback else 'no'}")
    flags = ", ".join(f"{name} {model.flag(name)}" for name in
                      ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"))
    print(f"normalizer: {model.normalizer.get('name', '?')} ({flags})")
    normal = [(at, piece) for at, (piece, _, kind) in enumerate(model.pieces) if kind == NORMAL]
    longest = sorted(normal, key=lambda item: (-len(item[1]), item[0]))[:args.top]
    print(f"longest pieces ({len(longest)}):")
    print(f"{'id':>8}  {'length':>6}  piece")
    for at, piece in longest:
        print(f"{at:>8}  {len(piece):>6}  {piece!r}")
    if sample is not None:
        lines, size, tokens = sample
        print(f"sample: {args.sample}: {lines:,} lines, {size:,} bytes -> {tokens:,} tokens, "
              f"{size / max(tokens, 1):.3f} bytes per token")
