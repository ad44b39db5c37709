"""``bytepair extend``: add tokens to an existing tokenizer, keeping every ID it has."""

from __future__ import annotations

import os
import sys
import time

from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import (add_trust_pattern, corpus_options, files_of, integer,
                                 memory_size, skip_hint, special_tokens_option, vocab_sizes)

#: The formats ``--to`` writes (:data:`bytepair.formats.extended.FORMATS`; the command's
#: modules are imported when it runs, not when the parser is built). A sentencepiece base
#: takes ``sentencepiece`` too (:data:`bytepair.cli.spm_extending.FORMATS`).
FORMATS = ("tokenizers", "transformers", "tiktoken", "bytepair")


def run_extend(args) -> None:
    from bytepair.training.extend import as_base, extend, is_sentencepiece_base  # see FORMATS

    if is_sentencepiece_base(args.base):
        from bytepair.cli.spm_extending import run_extend_sentencepiece

        run_extend_sentencepiece(args)
        return
    if args.character_coverage is not None:
        raise ValueError("--character-coverage: only for a sentencepiece base (.model)")
    if args.to == "sentencepiece":
        raise ValueError("--to sentencepiece: only for a sentencepiece base (.model); this base's "
                         "tokens are byte-level")
    sizes = args.vocab_size
    if len(sizes) != 1:
        raise ValueError("--vocab-size: give one size (the whole vocabulary after extending)")
    if args.resume and args.checkpoint is None:
        raise ValueError("--resume: needs --checkpoint DIR (the checkpoint to continue)")
    base = as_base(args.base, pattern=args.pattern, special_tokens=special_tokens_option(args.special),
                   trust_pattern=args.trust_pattern)
    to = args.to or base.kind
    if to in ("tiktoken", "bytepair") and (base.normalizer or base.then):
        raise ValueError(f"--to {to}: this base's pipeline ({base.normalizer or 'several splits'})"
                         f" has no {to} spelling; write it as tokenizers or transformers")
    if to != "transformers":
        check_target(args.output, "-o")
    elif os.path.exists(args.output) and (not os.path.isdir(args.output) or os.listdir(args.output)):
        raise ValueError(f"-o: {args.output!r} exists and is not an empty directory (a "
                         f"transformers tokenizer is written as a directory)")
    if args.counts:
        from bytepair.counts.piece_counts import PieceCounts

        corpus = [PieceCounts.load(path) for path in args.counts]
    elif args.files:
        corpus = files_of(args)
    else:
        raise ValueError("CORPUS: give files to learn from, or --counts tables")
    start = time.perf_counter()
    with skip_hint(args):
        extension = extend(base, corpus, vocab_size=sizes[0], min_frequency=args.min_frequency,
                           workers=args.workers, progress=not args.quiet and sys.stderr.isatty(),
                           max_memory=args.max_memory, checkpoint=args.checkpoint,
                           resume=args.resume)
    written = extension.save(args.output, to=args.to)
    seconds = time.perf_counter() - start
    if not args.quiet:
        print(f"bytepair: wrote {args.output!r} ({written}): {base.size:,} + "
              f"{plural(extension.added, 'new token')} = {extension.vocab_size:,}, from "
              f"{plural(len(extension.rules), 'new merge')}; the embedding matrix needs "
              f"{extension.embedding_rows:,} rows ({seconds:.1f} s)", file=sys.stderr)
        middle = extension.intermediate()
        if middle:
            print(f"bytepair: {plural(len(middle), 'new token')} never given when encoding the "
                  f"corpus (each was made only to be joined again)", file=sys.stderr)
        if extension.vocab_size < sizes[0]:
            print(f"bytepair: stopped at {extension.vocab_size:,} of {sizes[0]:,} tokens: no "
                  f"pair is seen {args.min_frequency} times or more", file=sys.stderr)
    for label, path in _eval_samples(args.eval or []):
        _report_eval(label, path, args, base, extension)


def _eval_samples(specs: list[str]) -> list[tuple[str, str]]:
    samples = []
    for spec in specs:
        path, label = spec, spec
        if "=" in spec and not os.path.exists(spec):
            path, label = spec.rsplit("=", 1)
            if not path or not label:
                raise ValueError(f"--eval: expected FILE or FILE=LABEL, got {spec!r}")
        samples.append((label, path))
    return samples


def _report_eval(label: str, path: str, args, base, extension) -> None:
    """Bytes per token of one sample, with the base and with the extension (a line on stdout)."""
    after = extension.as_base()
    size, before_ids, after_ids = 0, 0, 0
    with skip_hint(args):
        for document in files_of(args, [path], "--eval").documents(text=True):
            size += len(document.encode())
            before_ids += len(base.encode(document))
            after_ids += len(after.encode(document))
    if not before_ids:
        raise ValueError(f"--eval: {path!r} holds no text")
    print(f"{label}: {size / before_ids:.3f} -> {size / max(after_ids, 1):.3f} bytes per token "
          f"({before_ids:,} -> {after_ids:,} tokens)")


def add_commands(commands) -> None:
    """Register ``extend``."""
    command = commands.add_parser(
        "extend", help="add tokens to an existing tokenizer, keeping every ID",
        description="Extend a tokenizer (a Hugging Face tokenizer.json or transformers "
        "directory, byte-level BPE; a tiktoken ranks file with --pattern; a bytepair model) on "
        "new text: every token keeps its ID, every merge its rank, and new merges are learned "
        "on the text cut by the base's own pipeline, each piece starting as the base encodes "
        "it. The result is written in the base's format (or --to), and loads wherever the "
        "base did. A sentencepiece BPE base (.model) goes on with spm_train's loop on the "
        "lines of CORPUS, normalised by its own normaliser, and is written as a .model.",
    )
    command.add_argument("base", metavar="BASE", help="the tokenizer to extend (or a sentencepiece "
                         "BPE .model)")
    command.add_argument("files", nargs="*", metavar="CORPUS",
                         help="corpus files, directories, globs or fsspec URLs (or --counts)")
    command.add_argument("--counts", nargs="+", metavar="COUNTS",
                         help="piece-count tables cut with the base's pattern ('bytepair count "
                         "--pretokenize ...'), added up, instead of CORPUS")
    command.add_argument("--vocab-size", type=vocab_sizes, required=True, metavar="N",
                         help="the whole vocabulary after extending: every distinct ID, added "
                         "tokens included")
    command.add_argument("--to", choices=FORMATS + ("sentencepiece",), default=None,
                         help="the format to write (default: the base's own)")
    command.add_argument("--character-coverage", type=float, default=None, metavar="X",
                         help="sentencepiece base only: the characters of CORPUS within this "
                         "coverage that the base lacks become pieces (default: the base's own "
                         "character_coverage; 0 adds none)")
    command.add_argument("--min-frequency", type=integer, default=1, metavar="N",
                         help="stop when the best pair is seen fewer than N times (1)")
    command.add_argument("--workers", type=integer, default=None, metavar="N",
                         help="threads or processes counting pieces (default: all cores)")
    command.add_argument("--max-memory", type=memory_size, default=None, metavar="SIZE",
                         help="stop with one line when the process passes SIZE while learning")
    command.add_argument("--checkpoint", metavar="DIR",
                         help="keep the counts of the files in DIR as they are made, to --resume")
    command.add_argument("--resume", action="store_true",
                         help="continue the count that --checkpoint DIR holds")
    command.add_argument("--per-line", action="store_true",
                         help="each line of a text file is a document (default: each file)")
    command.add_argument("--jsonl-field", metavar="NAME",
                         help="text field of JSON Lines records (default: text)")
    corpus_options(command, cluster=False)
    command.add_argument("--eval", action="append", metavar="FILE[=LABEL]",
                         help="print bytes per token of this sample before and after (repeatable; "
                         "read like CORPUS)")
    command.add_argument("--pattern", metavar="NAME|REGEX",
                         help="BASE is a tiktoken ranks file, which holds no pattern: this one")
    command.add_argument("--special", action="append", metavar="TOKEN|FILE.json",
                         help="BASE is a tiktoken ranks file: its special tokens (repeatable), "
                         "or the JSON file of token -> ID beside it")
    command.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summary")
    command.add_argument("-o", "--output", required=True, metavar="OUT",
                         help="where to write the extended tokenizer (a directory for a "
                         "transformers base)")
    add_trust_pattern(command)
    command.set_defaults(run=run_extend)
