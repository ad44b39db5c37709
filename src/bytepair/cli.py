"""Command line: ``bytepair COMMAND ...`` (also ``python -m bytepair``)."""

from __future__ import annotations

import argparse
import sys


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bytepair", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="fit rules on the shipped public-domain text")
    demo.add_argument("--merges", type=_positive_int, default=300, help="merges to learn (300)")
    demo.add_argument("--show", type=_positive_int, default=20, help="rules to print (20)")
    demo.add_argument("--engine", choices=["incremental", "naive"], default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            from .demo import run_demo

            run_demo(args.merges, args.show, args.engine)
    except (OSError, ValueError, TypeError) as exc:
        print(f"bytepair: error: {exc}", file=sys.stderr)
        return 2
    return 0
