"""``bytepair train FILES --sentencepiece``: spm_train's BPE, with spm_train's option names (dashes).

The parser is built from :class:`bytepair.training.sentencepiece.SentencePieceOptions`:
a boolean is a flag that also takes ``true`` or ``false`` (``--remove-extra-whitespaces
false``); symbol lists are comma-separated. An spm_train option bytepair does not
support is refused in one line naming it.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import time
from dataclasses import fields
from pathlib import Path

from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import Parser, cluster, integer, is_count_table, memory_size, naming, size

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
    command.add_argument("files", nargs="*", metavar="FILE", help="text files, one sentence a line")
    command.add_argument("--counts", nargs="+", metavar="COUNTS",
                         help="train from count tables of sentencepiece words ('bytepair count "
                         "--sentencepiece' wrote them; added up) instead of FILEs; the word options "
                         "not given are the tables'")
    command.add_argument("--sentencepiece", action="store_true", required=True,
                         help="train spm_train's BPE (this command)")
    command.add_argument("--vocab-size", type=size, required=True, metavar="N")
    command.add_argument("-o", "--output", required=True, metavar="FILE.model")
    _add_counting_options(command, "model")
    command.add_argument("--max-memory", type=memory_size, default=None, metavar="SIZE",
                         help="keep the whole run within SIZE (4GiB, 512MiB): the counting tables "
                         "get a third of it, and a merge loop that would not fit is refused "
                         "before it starts (default: no limit)")
    command.add_argument("--tokenizer-json", metavar="FILE",
                         help="also write a Hugging Face tokenizer.json of the model")
    command.add_argument("-q", "--quiet", action="store_true")
    _add_spm_options(command, [f.name for f in fields(SentencePieceOptions) if f.name not in ("vocab_size", "given")])
    command.set_defaults(run=run_train_sentencepiece, check_usage=_check_train_usage)
    _refuse_by_name(command, {})
    return command


def count_parser() -> Parser:
    """The ``count --sentencepiece`` command's parser: the spm_train options that decide the words."""
    from bytepair.training.sentencepiece import META_OPTIONS, WORD_OPTIONS, SentencePieceOptions

    command = Parser(prog="bytepair count", description="Count the words of text files as spm_train "
                     "makes them (one sentence a line, normalised and cut), and save the table to -o. "
                     "'bytepair train --counts A B ... --sentencepiece --vocab-size N' trains from the "
                     "tables (added up) the model that training on the files gives.")
    command.add_argument("files", nargs="+", metavar="FILE", help="text files, one sentence a line")
    command.add_argument("--sentencepiece", action="store_true", required=True,
                         help="count sentencepiece's words (this command)")
    command.add_argument("-o", "--output", required=True, metavar="COUNTS", help="table file to write")
    _add_counting_options(command, "table")
    command.add_argument("-q", "--quiet", action="store_true")
    _add_spm_options(command, WORD_OPTIONS + META_OPTIONS)
    model_options = {f.name.replace("_", "-") for f in fields(SentencePieceOptions)} - {"given"}
    model_options -= {name.replace("_", "-") for name in WORD_OPTIONS + META_OPTIONS}
    command.set_defaults(run=run_count_sentencepiece, check_usage=None)
    _refuse_by_name(command, {name: "decides the model, not the words; give it to 'bytepair train "
                              "--counts COUNTS --sentencepiece'" for name in model_options})
    return command


def _add_counting_options(command: Parser, result: str) -> None:
    """--workers, --count-memory and --scheduler."""
    command.add_argument("--workers", "--num-threads", type=integer, default=None, metavar="N",
                         help="threads that count the words (default 1)")
    command.add_argument("--count-memory", type=memory_size, default=None, metavar="SIZE",
                         help="keep the word-counting tables within SIZE (4GiB, 512MiB): past it "
                         f"they spill to TMPDIR and are merged back (the {result} is the same)")
    command.add_argument("--scheduler", metavar="ADDRESS",
                         help="count the words on the Dask cluster at ADDRESS (tcp://host:8786); "
                         "its workers must see the FILEs at the same paths")


def _add_spm_options(command: Parser, names) -> None:
    """spm_train's options ``names``, with dashes: booleans as flags that take true or false."""
    from bytepair.training.sentencepiece import SentencePieceOptions

    kinds = {option.name: option.type for option in fields(SentencePieceOptions)}
    for name in names:
        flag = "--" + name.replace("_", "-")
        if kinds[name] in ("bool", bool):
            command.add_argument(flag, type=boolean, nargs="?", const=True, default=None,
                                 metavar="true|false")
        elif name.endswith("symbols"):
            command.add_argument(flag, type=symbols, default=None, metavar="A,B,...")
        else:
            kind = {"int": integer, "float": float}.get(str(kinds[name]), str)
            command.add_argument(flag, type=kind, default=None, metavar=name.split("_")[-1].upper())


def _refuse_by_name(command: Parser, others: dict[str, str]) -> None:
    """Refuse spm_train's options bytepair lacks, and ``others`` (name -> why), in one line each."""
    original = command.check_options

    def check_options(argv: list[str]) -> None:
        for token in argv:
            name = token.split("=", 1)[0].lstrip("-").replace("_", "-")
            if token.startswith("--") and name in UNSUPPORTED:
                command.error(f"--{name}: an spm_train option bytepair does not support")
            if token.startswith("--") and name in others:
                command.error(f"--{name}: {others[name]}")
        original(argv)

    command.check_options = check_options


def _check_train_usage(args, parser: Parser) -> None:
    if not args.files and not args.counts:
        parser.error("the following arguments are required: FILE (or --counts COUNTS)")
    if args.files and args.counts:
        parser.error("argument --counts: not allowed with FILE")
    if args.counts:
        for option in ("workers", "count_memory", "scheduler"):
            if getattr(args, option) is not None:
                parser.error(f"argument --{option.replace('_', '-')}: has no effect with --counts "
                             "(the words are already counted)")


def _spm_options(args, names) -> dict:
    """The spm_train options given on the command line (the library has the defaults)."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def _say(args):
    return (lambda line: None) if args.quiet else (lambda line: print(f"bytepair: {line}", file=sys.stderr))


def _check_text_files(files: list[str]) -> None:
    for path in files:
        if is_count_table(Path(path)):
            raise ValueError(f"FILE: {path!r} is a count table ('bytepair count' wrote it), not text; "
                             f"train from it with --counts {shlex.quote(path)}")


def run_train_sentencepiece(args) -> None:
    from bytepair.counts.piece_counts import PieceCounts
    from bytepair.formats.spm_file import save_sentencepiece
    from bytepair.training.sentencepiece import SentencePieceOptions, train_sentencepiece

    check_target(args.output, "-o")
    if args.tokenizer_json:
        check_target(args.tokenizer_json, "--tokenizer-json")
    options = _spm_options(args, {f.name for f in fields(SentencePieceOptions)} - {"vocab_size", "given"})
    say = _say(args)
    start = time.perf_counter()
    if args.counts:
        with naming("--counts"), _named("--counts"):
            tables = [PieceCounts.load(path) for path in args.counts]
            model = train_sentencepiece(tables, vocab_size=args.vocab_size, report=say,
                                        max_memory=args.max_memory, **options)
    else:
        _check_text_files(args.files)
        with cluster(args.scheduler) as client:
            model = train_sentencepiece(args.files, vocab_size=args.vocab_size, workers=args.workers or 1,
                                        report=say, count_memory=args.count_memory,
                                        max_memory=args.max_memory, client=client, **options)
    save_sentencepiece(model, args.output)
    if args.tokenizer_json:
        from bytepair.formats.spm_export import export_sentencepiece

        export_sentencepiece(model, args.tokenizer_json)
    say(f"{len(model)} pieces in {time.perf_counter() - start:.1f} s; "
        f"{model.skipped_lines} lines skipped as longer than max_sentence_length; wrote {args.output}")


def run_count_sentencepiece(args) -> None:
    from bytepair.training.sentencepiece import META_OPTIONS, WORD_OPTIONS, count_sentencepiece

    output = check_target(args.output, "-o")
    _check_text_files(args.files)
    say = _say(args)
    start = time.perf_counter()
    with cluster(args.scheduler) as client:
        table = count_sentencepiece(args.files, workers=args.workers or 1, count_memory=args.count_memory,
                                    client=client, report=say,
                                    **_spm_options(args, WORD_OPTIONS + META_OPTIONS))
    table.save(output)
    say(f"wrote {str(output)!r}: {plural(len(table), 'distinct word')}, {table.total():,} in all, "
        f"{plural(table.skipped_lines, 'line')} skipped as longer than max_sentence_length "
        f"({time.perf_counter() - start:.1f} s)")


@contextlib.contextmanager
def _named(argument: str):
    """The library's messages about its ``corpus`` name the argument that gave it."""
    try:
        yield
    except ValueError as exc:
        message = str(exc)
        if not message.startswith("corpus: "):
            raise
        raise ValueError(f"{argument}: {message.removeprefix('corpus: ')}") from None


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
