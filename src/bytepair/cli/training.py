"""``bytepair train`` and ``bytepair count``: from a corpus (or count tables) to a model file."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING

from bytepair._util.atomic import check_target
from bytepair._util.errors import InputError, parts_of
from bytepair._util.validate import plural
from bytepair.cli.common import (PATTERN_CHOICES, add_trust_pattern, cluster, corpus_options, files_of,
                                 integer, load_tokenizer, memory_size, naming, pattern_name,
                                 pattern_option, size, skip_hint, vocab_sizes)

if TYPE_CHECKING:
    from bytepair.counts.piece_counts import PieceCounts

#: The placeholder of -o that a list of vocabulary sizes fills in.
SIZE_FIELD = "{vocab_size}"


def _checkpoint_options(args) -> dict:
    """``count_memory``, ``checkpoint`` and ``resume`` as the library takes them."""
    if args.resume and args.checkpoint is None:
        raise ValueError("--resume: needs --checkpoint DIR (the checkpoint to continue)")
    return {"count_memory": args.count_memory, "checkpoint": args.checkpoint,
            "resume": args.resume}


def _outputs(output: str, sizes: list[int] | None) -> dict[int | None, str]:
    """The file to write for each vocabulary size (one file, keyed None, without a size list)."""
    if sizes is None:
        return {None: output}
    if len(set(sizes)) > 1 and SIZE_FIELD not in output:
        raise ValueError(
            f"-o must contain {SIZE_FIELD} when --vocab-size lists several sizes "
            f"(one file per size), got {output!r}")
    return {size: output.replace(SIZE_FIELD, str(size)) for size in sorted(set(sizes))}


def run_train(args) -> None:
    from bytepair.training import train
    from bytepair.training.spec import TrainSpec, superbpe_options

    outputs = _outputs(args.output, args.vocab_size)
    for path in outputs.values():
        check_target(path, "-o")
    if args.language or args.parity or args.dev or args.ratio or any(
            getattr(args, name) is not None for name in _PARITY_NUMBERS):
        _run_parity(args, outputs)
        return
    init = (load_tokenizer(args.init, args.trust_pattern, "--init", need=" to continue from")
            if args.init is not None else None)
    # A warm start continues the init model: its special tokens are the
    # defaults, and (in the library) so is its pattern, as the count tables'
    # is: the result equals a fit from scratch.
    pattern = {} if args.pretokenize is None else {"pretokenize": args.pretokenize}
    # Continuing a SuperBPE model: its transition, stage-2 pattern and word cap are the defaults.
    superbpe = superbpe_options(init.model if init is not None else None, args.superbpe,
                                args.superbpe_pretokenize, args.max_words)
    if superbpe is None:
        for option in ("superbpe_pretokenize", "max_words"):
            if getattr(args, option) is not None:
                raise ValueError(f"--{option.replace('_', '-')}: has no effect without --superbpe")
    tables = _load_counts(args, superbpe is not None) if args.counts else None
    if args.special is not None:
        special = args.special
    else:
        special = list(init.special_tokens) if init is not None else []
    if args.vocab_size is not None:
        # Every size is checked (by the library's spec) before training; one run to the
        # largest serves all.
        requested = {size: TrainSpec(vocab_size=size, special_tokens=special).merges
                     for size in outputs}
        if init is not None and min(requested.values()) < len(init.merges):
            raise ValueError(f"--init: the model already has {len(init.merges):,} merges, more "
                             f"than the {min(requested.values()):,} that --vocab-size asks for")
        largest = max(outputs)
    else:
        requested = {None: args.merges}
        largest = None
    corpus = tables if tables is not None else files_of(args)
    saving = _checkpoint_options(args)
    start = time.perf_counter()
    source = "--counts" if tables is not None else "FILE"
    with cluster(args.scheduler) as client, _skip_hint(args), _named(source), \
            _resume_in_units_given(args, outputs):
        trained = train(
            corpus,
            vocab_size=largest,
            merges=args.merges,
            special_tokens=special,
            min_frequency=args.min_frequency,
            workers=args.workers,
            progress=not args.quiet and sys.stderr.isatty(),
            init=init,
            client=client,
            **saving,
            max_memory=args.max_memory,
            **pattern,
            **({"ties": args.ties} if args.ties != "bytepair" else {}),
            **(dict(superbpe=superbpe.transition, superbpe_pretokenize=superbpe.pretokenize,
                    max_words=superbpe.max_words) if superbpe is not None else {}),
        )
    _write_models(trained, outputs, requested, args, time.perf_counter() - start)


def _write_models(trained, outputs: dict, requested: dict, args, seconds: float) -> None:
    """Each size's model to its file (a smaller size truncates the largest), and a summary."""
    for vocab_size, output in outputs.items():
        # A smaller size is the first rules of the largest; where training
        # stopped early, a separate run would have stopped at the same rule. The largest is
        # the model trained (a copy would hold its tables twice, past a memory limit).
        smaller = vocab_size is not None and vocab_size < trained.vocab_size
        tokenizer = trained.truncate(vocab_size) if smaller else trained
        tokenizer.save(output)
        if args.quiet:
            continue
        learned = len(tokenizer.merges)
        print(
            f"bytepair: wrote {output!r}: vocabulary {tokenizer.vocab_size:,} = 256 bytes + "
            f"{plural(learned, 'merge')} + {plural(len(tokenizer.special_tokens), 'special token')} "
            f"({seconds:.1f} s)",
            file=sys.stderr,
        )
        if requested[vocab_size] == 0:
            print(f"bytepair: warning: {output!r} has no merges: a vocabulary of "
                  f"{tokenizer.vocab_size:,} is the 256 bytes"
                  + (" and the special tokens" if tokenizer.special_tokens else "")
                  + " alone, so it encodes each byte as itself; give "
                  + ("a larger --vocab-size" if args.vocab_size is not None else "--merges N")
                  + " to learn merges", file=sys.stderr)
        elif learned < requested[vocab_size]:
            print(
                f"bytepair: stopped after {learned:,} of {plural(requested[vocab_size], 'merge')}: no pair "
                f"left that is seen at least {plural(args.min_frequency, 'time')}",
                file=sys.stderr,
            )


#: Parity options that take a number; None when not given.
_PARITY_NUMBERS = ("global_merges", "window_size", "alpha")


def _by_language(option: str, values: list[str] | None) -> dict[str, str]:
    """``LANG=VALUE`` arguments as a dict; a language given twice is refused."""
    given: dict[str, str] = {}
    for value in values or ():
        language, sep, text = value.partition("=")
        if not sep or not language or not text:
            raise ValueError(f"{option}: expected LANG=VALUE, got {value!r}")
        if language in given:
            raise ValueError(f"{option}: {language} is given twice")
        given[language] = text
    return given


def _run_parity(args, outputs: dict) -> None:
    """``train --parity``: one corpus per ``--language``, a ``--dev`` set or ``--ratio``s."""
    if args.parity is None:
        given = ("--language" if args.language else "--dev" if args.dev else "--ratio"
                 if args.ratio else "--" + next(n for n in _PARITY_NUMBERS
                                               if getattr(args, n) is not None).replace("_", "-"))
        raise ValueError(f"{given}: a parity option; give --parity base or window with it")
    if not args.language:
        raise ValueError("--parity: give each language's corpus with --language LANG=CORPUS")
    from bytepair.read.corpus import files_named
    from bytepair.training import train

    init = (load_tokenizer(args.init, args.trust_pattern, "--init", need=" to continue from")
            if args.init is not None else None)
    reading = dict(per_line=args.per_line, jsonl_field=args.jsonl_field,
                   text_column=args.text_column, skip_unreadable=args.skip_unreadable)
    corpus = {language: files_named(f"--language {language}", path, **reading)
              for language, path in _by_language("--language", args.language).items()}
    dev = ratio = None
    if args.dev:
        dev = {language: files_named(f"--dev {language}", path, **reading)
               for language, path in _by_language("--dev", args.dev).items()}
    if args.ratio:
        ratio = {}
        for language, text in _by_language("--ratio", args.ratio).items():
            try:
                ratio[language] = float(text)
            except ValueError:
                raise ValueError(f"--ratio: {language}'s target must be a number, "
                                 f"got {text!r}") from None
    numbers = {name: getattr(args, name) for name in _PARITY_NUMBERS
               if getattr(args, name) is not None}
    special = (args.special if args.special is not None else
               list(init.special_tokens) if init is not None else [])
    pattern = {} if args.pretokenize is None else {"pretokenize": args.pretokenize}
    start = time.perf_counter()
    # What parity does not take (superbpe) is passed on for the library to refuse.
    with _language_named(), _resume_in_units_given(args, outputs):
        trained = train(corpus, vocab_size=max(outputs) if args.vocab_size is not None else None,
                        merges=args.merges, special_tokens=special, min_frequency=args.min_frequency,
                        workers=args.workers, progress=not args.quiet and sys.stderr.isatty(),
                        parity=args.parity, dev=dev, ratio=ratio, ties=args.ties, init=init,
                        superbpe=args.superbpe, max_memory=args.max_memory,
                        **_checkpoint_options(args), **pattern, **numbers)
    seconds = time.perf_counter() - start
    for vocab_size, output in outputs.items():
        tokenizer = trained if vocab_size is None else trained.truncate(min(vocab_size, trained.vocab_size))
        tokenizer.save(output)
        if not args.quiet:
            print(f"bytepair: wrote {output!r}: vocabulary {tokenizer.vocab_size:,} = 256 bytes + "
                  f"{plural(len(tokenizer.merges), 'merge')} + "
                  f"{plural(len(tokenizer.special_tokens), 'special token')}, parity-aware over "
                  f"{plural(len(corpus), 'language')} ({seconds:.1f} s)", file=sys.stderr)


@contextlib.contextmanager
def _resume_in_units_given(args, outputs: dict):
    """A checkpoint ahead of the size asked for, told in the unit the user gave
    (``--vocab-size`` or ``--merges``), with the way to the smaller model: truncation."""
    from bytepair.counts.checkpoint import CheckpointAhead
    from bytepair.model.models import BYTE_TOKENS

    try:
        yield
    except CheckpointAhead as exc:
        if args.vocab_size is None:
            raise ValueError(
                f"--resume: the checkpoint in {args.checkpoint!r} already holds {exc.held:,} "
                f"merges, more than --merges {exc.requested:,}; resume with --merges "
                f"{exc.held:,} or more, and truncate that model to its first "
                f"{exc.requested:,} rules (bytepair.load(MODEL).truncate("
                f"{BYTE_TOKENS + exc.requested + exc.special}))") from None
        held = BYTE_TOKENS + exc.held + exc.special
        largest = max(outputs)
        root, extension = os.path.splitext(args.output)
        output = args.output if SIZE_FIELD in args.output else f"{root}-{SIZE_FIELD}{extension}"
        raise ValueError(
            f"--resume: the checkpoint in {args.checkpoint!r} already holds a vocabulary of "
            f"{held:,} ({exc.held:,} merges), larger than --vocab-size {largest:,}; resume "
            f"with --vocab-size {largest},{held} -o '{output}' (the smaller model is the "
            f"first rules of the larger, cut off by truncation)") from None


#: The hint for files that are not text (shared with the other commands that read FILEs).
_skip_hint = skip_hint


@contextlib.contextmanager
def _named(argument: str):
    """The library's messages about its ``corpus`` (``corpus: no text to train on``) name
    the argument that gave it."""
    try:
        yield
    except ValueError as exc:
        first, *rest = parts_of(exc)
        if not (isinstance(first, str) and first.startswith("corpus: ")):
            raise
        raise InputError(f"{argument}: {first.removeprefix('corpus: ')}", *rest) from None


@contextlib.contextmanager
def _language_named():
    """The library names a language's texts by its argument (``corpus: l1 has no text``), the
    command line by the option that gave them (``--language l1: has no text``)."""
    from bytepair.training.parity import LanguageWithoutText  # at first use, as train is
    try:
        yield
    except LanguageWithoutText as exc:
        option = {"corpus": "--language", "dev": "--dev"}[exc.argument]
        why = " (every language needs some, with --ratio too)" if exc.argument == "corpus" else ""
        raise InputError(f"{option} {exc.language}: has no text{why}") from None


def _check_train_usage(args, parser: argparse.ArgumentParser) -> None:
    # FILEs and --counts exclude each other; argparse's groups cannot hold a
    # positional when options and positionals are intermixed.
    if args.language:  # parity-aware: the languages are the corpus
        if args.files or args.counts:
            parser.error("argument --language: not allowed with FILE or --counts")
        return
    if not args.files and not args.counts:
        parser.error("the following arguments are required: FILE (or --counts COUNTS)")
    if args.files and args.counts:
        parser.error("argument --counts: not allowed with FILE")


def _load_counts(args, superbpe: bool) -> list[PieceCounts]:
    """The ``--counts`` tables; they replace FILEs and the options that read them. With
    ``superbpe`` they hold two patterns, one per stage, which the library tells apart."""
    from bytepair.counts.piece_counts import PieceCounts

    for option in ("per_line", "jsonl_field", "text_column", "scheduler", "skip_unreadable",
                   "count_memory"):
        if getattr(args, option):
            raise ValueError(f"--{option.replace('_', '-')}: has no effect with --counts "
                             "(the counts are already made)")
    with naming("--counts"):
        tables = [PieceCounts.load(path, trust_pattern=args.trust_pattern) for path in args.counts]
    if superbpe:
        return tables  # train checks each stage's tables before any work
    try:
        sum(tables)  # mixed patterns or a total beyond 64 bits fail here, before any work
    except ValueError as exc:
        raise ValueError(f"--counts {' '.join(map(repr, args.counts))}: {exc}") from None
    return tables


def run_count(args) -> None:
    from bytepair.training import count as count_corpus

    output = check_target(args.output, "-o")
    corpus = files_of(args)
    saving = _checkpoint_options(args)
    start = time.perf_counter()
    with cluster(args.scheduler) as client, _skip_hint(args), _named("FILE"):
        table = count_corpus(corpus, pretokenize=args.pretokenize, workers=args.workers,
                             client=client, progress=not args.quiet and sys.stderr.isatty(),
                             **saving)
    table.save(output)
    if not args.quiet:
        print(
            f"bytepair: wrote {str(output)!r}: {plural(len(table), 'distinct piece')}, "
            f"{table.total():,} in all, pattern {pattern_name(table.pattern)} "
            f"({time.perf_counter() - start:.1f} s)",
            file=sys.stderr,
        )


def _add_scale_options(command: argparse.ArgumentParser, result: str) -> None:
    """--count-memory, --checkpoint and --resume."""
    command.add_argument("--count-memory", type=memory_size, metavar="BYTES",
                         help="bound the counting tables of all workers together (e.g. 2G): a "
                         "table past its share goes to a temporary file in TMPDIR as a sorted "
                         f"run, merged at the end; the {result} is the same (default: no bound)")
    command.add_argument("--checkpoint", metavar="DIR",
                         help="keep the run's progress in DIR (each counted part of the files"
                         + (", the table, then the rules learned so far, every minute" if result == "model"
                            else ", then the table") + ") so that an interrupted run can be resumed")
    command.add_argument("--resume", action="store_true",
                         help=f"continue the run in --checkpoint DIR; the {result} is the same as "
                         "an uninterrupted run's (the corpus and options must be the same)")


def special_token(text: str) -> str:
    """A ``--special`` token: its own text, never the name of an existing file."""
    if os.path.lexists(text):
        raise argparse.ArgumentTypeError(f"{text!r} names an existing file; give the token's text")
    return text


def add_commands(commands) -> None:
    """Register ``train`` and ``count``."""
    train = commands.add_parser(
        "train", help="train a tokenizer from files",
        description="Train a byte-level BPE tokenizer from text files, directories (read "
        "recursively), globs, JSON Lines (.jsonl/.ndjson) and their .gz versions; save it to -o. "
        "IDs: 0-255 bytes, then one per merge, then the special tokens in the order given. "
        "With --sentencepiece it trains spm_train's BPE instead, from FILEs or --counts, with "
        "spm_train's options (see docs/sentencepiece.md and 'bytepair train --sentencepiece --help').",
    )
    train.add_argument("files", nargs="*", metavar="FILE",
                       help="corpus files, directories, globs or fsspec URLs (or use --counts)")
    train.add_argument("--counts", nargs="+", metavar="COUNTS",
                       help="train from piece-count tables written by 'bytepair count' (added up) "
                       "instead of FILEs; with --superbpe, tables of both stages' patterns (each "
                       "stage adds up those cut with its own)")
    amount = train.add_mutually_exclusive_group(required=True)
    amount.add_argument("--vocab-size", type=vocab_sizes, metavar="N[,N...]",
                      help="256 bytes + merges + special tokens (at least 256 + the special "
                      "tokens; 32k is 32,000 and 32Ki is 32,768); several sizes, comma-separated, "
                      "write one model each from one run, to -o with {vocab_size} filled in")
    amount.add_argument("--merges", type=size, metavar="N",
                      help="number of merges (total, with --init)")
    train.add_argument("--pretokenize", type=pattern_option, metavar=PATTERN_CHOICES, default=None,
                       help="split pattern; pieces are barriers (default: gpt2, or the --init "
                       "model's); none: byte mode, each document is one piece and any bytes are "
                       "read as they are; other patterns need UTF-8")
    train.add_argument("--superbpe", type=size, default=None, metavar="T",
                       help="SuperBPE superword tokens: train as usual up to vocabulary T (256 "
                       "bytes + merges), then go on over the pieces that --superbpe-pretokenize "
                       "cuts, so that tokens may span spaces (default: none, or the --init model's)")
    train.add_argument("--superbpe-pretokenize", type=pattern_option, metavar=PATTERN_CHOICES,
                       default=None,
                       help="stage-2 split pattern with --superbpe; a match is a piece and so is "
                       "the text between two matches (default: superbpe)")
    train.add_argument("--max-words", type=integer, default=None, metavar="N",
                       help="with --superbpe: no token holds more than N words, runs of bytes "
                       "that are not ASCII white space (default: 4)")
    train.add_argument("--ties", choices=("bytepair", "tokenizers"), default="bytepair",
                       help="how equal counts are broken: bytepair's order (default), or Hugging "
                            "Face BpeTrainer's, so that `export --to tokenizers` writes its "
                            "tokenizer.json (see docs/from-tokenizers.md)")
    _add_parity_options(train)
    train.add_argument("--special", action="append", type=special_token, metavar="TOKEN",
                       help="a special token (repeatable; default: none, or the --init model's)")
    train.add_argument("--min-frequency", type=integer, default=1, metavar="N",
                       help="stop when the best pair is seen fewer than N times (1)")
    train.add_argument("--workers", type=integer, default=None, metavar="N",
                       help="threads (plain and .gz text) or processes (JSON Lines, Parquet, URLs, "
                       "a custom regex) counting pieces (default: all cores); the model is the same")
    train.add_argument("--max-memory", type=memory_size, default=None, metavar="SIZE",
                       help="keep training within SIZE of memory (4GiB, 512MiB, 2GB), or stop "
                       "with one line saying how much it needs: before any work when a forecast "
                       "from a sample of the files does not fit, after counting (which spills to "
                       "TMPDIR to stay within it) when the estimate for learning does not, and "
                       "while learning if it passes SIZE (the model is the same when it fits)")
    train.add_argument("--init", metavar="MODEL",
                       help="continue from this model; when it was trained on the same FILEs with "
                       "the same options, the result equals training from scratch to the larger "
                       "size (on other text it is another model)")
    train.add_argument("--jsonl-field", metavar="NAME",
                       help="text field of JSON Lines records (default: text)")
    train.add_argument("--per-line", action="store_true",
                       help="each line of a text file is a document (default: each file)")
    corpus_options(train)
    _add_scale_options(train, "model")
    train.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summary")
    train.add_argument("-o", "--output", required=True, metavar="MODEL",
                       help="model file to write ({vocab_size} in it is replaced by the size)")
    add_trust_pattern(train)
    train.set_defaults(run=run_train, check_usage=_check_train_usage)
    _add_count_command(commands)


def _add_count_command(commands) -> None:
    counter = commands.add_parser(
        "count", help="count the pieces of files into a table to train from later",
        description="Count the pre-tokenized pieces of text files, directories, globs, JSON Lines, "
        "Parquet files (.parquet: one document per row of --text-column) or fsspec URLs, and save "
        "the table to -o. Tables of shards add up: 'bytepair train --counts A B ...' trains on "
        "all of them and gives the model of training on all the shards at once. With --sentencepiece it "
        "counts spm_train's words instead, for 'bytepair train --counts ... --sentencepiece' (see "
        "docs/sentencepiece.md and 'bytepair count --sentencepiece --help').",
    )
    counter.add_argument("files", nargs="+", metavar="FILE",
                         help="corpus files, directories, globs or fsspec URLs")
    counter.add_argument("--pretokenize", type=pattern_option, metavar=PATTERN_CHOICES,
                         default="gpt2",
                         help="split pattern (default: gpt2); none: each document is one piece; "
                         "a SuperBPE run trains from two tables, one counted with its stage-1 "
                         "pattern and one with superbpe (its stage-2 pattern)")
    counter.add_argument("--per-line", action="store_true",
                         help="each line of a text file is a document (default: each file)")
    counter.add_argument("--jsonl-field", metavar="NAME",
                         help="text field of JSON Lines records (default: text)")
    counter.add_argument("--workers", type=integer, default=None, metavar="N",
                         help="threads (plain and .gz text) or processes (JSON Lines, Parquet, "
                         "URLs, a custom regex) counting pieces (default: all cores); the table "
                         "is the same")
    corpus_options(counter)
    _add_scale_options(counter, "table")
    counter.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    counter.add_argument("-o", "--output", required=True, metavar="COUNTS", help="table file to write")
    counter.set_defaults(run=run_count)


def _add_parity_options(train) -> None:
    """The options of parity-aware training (one corpus per language)."""
    parity = train.add_argument_group(
        "parity-aware BPE", "one corpus per language instead of FILEs; each merge is the best "
        "pair of the language that needs one most (see docs/parity.md)")
    parity.add_argument("--parity", choices=("base", "window"), default=None,
                        help="base: the language with the longest dev text in tokens (or the "
                        "lowest compression for its --ratio) chooses each merge; window: the "
                        "same, but no language wins more than ALPHA/languages of the last "
                        "WINDOW_SIZE merges")
    parity.add_argument("--language", action="append", metavar="LANG=CORPUS",
                        help="a language's training text (a file, directory or glob; repeatable)")
    parity.add_argument("--dev", action="append", metavar="LANG=FILE",
                        help="a language's dev text, parallel across languages (one per --language)")
    parity.add_argument("--ratio", action="append", metavar="LANG=R",
                        help="instead of --dev: a language's target compression, relative to "
                        "the others' (one per --language)")
    parity.add_argument("--global-merges", type=integer, default=None, metavar="N",
                        help="the first N merges from all languages' counts together (0)")
    parity.add_argument("--window-size", type=integer, default=None, metavar="N",
                        help="with --parity window: merges the window holds (100)")
    parity.add_argument("--alpha", type=float, default=None, metavar="A",
                        help="with --parity window: a language may win A/languages of the "
                        "window (2.0)")
