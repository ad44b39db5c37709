"""``bytepair trace`` and ``bytepair demo``: the course's companions."""

from __future__ import annotations

import sys

from bytepair.cli.common import int_at_least, read_input, text_argument


def run_trace(args) -> None:
    from bytepair.teach.trace import trace_lines

    learned = 0
    if not args.docs and not args.file:
        raise ValueError("trace: the following arguments are required: DOC (or --file PATH)")
    documents = [text_argument(doc, "DOC") for doc in args.docs]
    documents += [read_input(path, "--file") for path in args.file]
    for line in trace_lines(documents, args.merges):
        learned += line.startswith("MERGE ")
        print(line)
    if learned < args.merges:
        print(f"bytepair: stopped after {learned} of {args.merges} merges: no adjacent pair left",
              file=sys.stderr)


# -- demo -------------------------------------------------------------------

def run_demo(args) -> None:
    from bytepair.teach.demo import run_demo as demo

    demo(args.merges, args.show, args.engine)


def add_commands(commands) -> None:
    """Register ``trace`` and ``demo``."""
    count = int_at_least(0)
    trace = commands.add_parser(
        "trace", help="print every round of a tiny byte-mode fit",
        description="Fit on a tiny corpus, each DOC one document (byte mode, no pre-tokenizer), "
        "and print the bpe-merges-v1 trace: stages, every candidate pair, each merge. A DOC that "
        "names an existing file or directory is refused; --file reads a file as a document.",
    )
    trace.add_argument("docs", nargs="*", metavar="DOC")
    trace.add_argument("--file", action="append", default=[], metavar="PATH",
                       help="a file whose bytes are one more document, after the DOCs "
                       "('-' is stdin; repeatable)")
    trace.add_argument("--merges", type=count, default=2, metavar="N", help="merges to learn (2)")
    trace.set_defaults(run=run_trace)

    demo = commands.add_parser(
        "demo", help="fit byte-mode rules on the shipped public-domain text",
        description="Fit byte-mode rules (no pre-tokenizer: each line of the text is a document "
        "of bytes, and merges may cross spaces) on Genesis 1-11 (King James Version, shipped "
        "with the package), and print the first rules.")
    demo.add_argument("--merges", type=count, default=300, help="merges to learn (300)")
    demo.add_argument("--show", type=count, default=20, help="rules to print (20)")
    demo.add_argument("--engine", choices=["incremental", "naive"], default=None)
    demo.set_defaults(run=run_demo)
