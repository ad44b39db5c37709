"""``bytepair learn-words``: from a corpus to word-mode rules in one command."""

from __future__ import annotations

import sys
import time

from bytepair._util.atomic import check_target
from bytepair._util.validate import plural
from bytepair.cli.common import files_of, integer, reading_options, size, skip_hint


def run_learn_words(args) -> None:
    from bytepair.training import learn_words

    output = check_target(args.output, "-o")
    corpus = files_of(args)
    start = time.perf_counter()
    with skip_hint(args):
        model = learn_words(corpus, args.merges, end_of_word=args.end_of_word,
                            min_frequency=args.min_frequency, workers=args.workers,
                            progress=not args.quiet and sys.stderr.isatty())
    model.save(output)
    if args.quiet:
        return
    learned = len(model.merges)
    print(f"bytepair: wrote {str(output)!r}: {plural(learned, 'word-mode rule')} "
          f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    if learned < args.merges:
        print(f"bytepair: stopped after {learned} of {plural(args.merges, 'merge')}: no pair "
              f"left that is seen at least {plural(args.min_frequency, 'time')}", file=sys.stderr)


def add_commands(commands) -> None:
    """Register ``learn-words``."""
    command = commands.add_parser(
        "learn-words", help="learn word-mode rules from text files",
        description="Learn word-mode BPE rules (symbols are strings; a word starts as its "
        "characters) from text files, directories, globs and their .gz versions, and save them "
        "to -o. Words are white-space separated (as Python's str.split() cuts text) and counted; "
        "ties go to the smallest (left, right) in string order. Read the model with "
        "bytepair.load.",
    )
    command.add_argument("files", nargs="+", metavar="FILE",
                         help="corpus files, directories, globs, JSON Lines or Parquet files "
                         "(UTF-8 text)")
    command.add_argument("--merges", type=size, required=True, metavar="N",
                         help="number of rules to learn")
    command.add_argument("--end-of-word", metavar="SYMBOL", default=None,
                         help="symbol appended to every word, such as '</w>' (default: none)")
    command.add_argument("--min-frequency", type=integer, default=1, metavar="N",
                         help="stop when the best pair is seen fewer than N times (1)")
    command.add_argument("--workers", type=integer, default=None, metavar="N",
                         help="threads counting words (default: all cores); the model is the same")
    reading_options(command)
    command.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    command.add_argument("-o", "--output", required=True, metavar="MODEL", help="model file to write")
    command.set_defaults(run=run_learn_words)
