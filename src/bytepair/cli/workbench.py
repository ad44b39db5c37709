"""``bytepair workbench``: the merge workbench and the tokenizer viewer, in the browser."""

from __future__ import annotations

import argparse
import json
import sys

from bytepair.cli.common import add_trust_pattern, int_at_least, special_tokens_option


def port_number(text: str) -> int:
    """``--port``: 0 (a free port) to 65535."""
    port = int_at_least(0)(text)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, got {port}")
    return port


def run_workbench(args) -> None:
    from bytepair.teach.server import TeachServer
    from bytepair.teach.viewer import Viewer, curves_of_evaluation, load_viewer_models

    # Everything is loaded and checked before the server starts: a bad argument is one line.
    models = load_viewer_models(args.models, pattern=args.pattern,
                                special_tokens=special_tokens_option(args.special),
                                trust_pattern=args.trust_pattern)
    curves = None
    if args.curves is not None:
        try:
            with open(args.curves, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError as exc:
            raise ValueError(f"--curves: cannot read {args.curves!r}: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"--curves: {args.curves!r} is not JSON: {exc}") from None
        curves = curves_of_evaluation(data, f"--curves: {args.curves!r}")
    learner = None
    if args.exercise is not None:
        from bytepair.teach.exercise import load_learner

        try:
            learner = load_learner(args.exercise)
        except ValueError as exc:
            raise ValueError(f"--exercise: {exc}") from None
    try:
        server = TeachServer(Viewer(models, curves), port=args.port, learner=learner)
    except OSError as exc:
        raise ValueError(f"--port: cannot listen on 127.0.0.1:{args.port}: "
                         f"{exc.strerror or exc}") from None
    try:
        print(f"bytepair workbench: serving on {server.url} (Ctrl-C stops it)", flush=True)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(server.url)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass  # Ctrl-C is how the server is meant to stop: exit 0
    finally:
        # Ctrl-C or SIGTERM: close the listening socket; open connections' threads are daemons.
        server.server_close()
        if learner is not None:
            learner.close()  # its process
        print("bytepair workbench: stopped", file=sys.stderr, flush=True)


def add_commands(commands) -> None:
    """Register ``workbench``."""
    command = commands.add_parser(
        "workbench", help="the merge workbench and tokenizer viewer, in the browser",
        description="Start a local web server (127.0.0.1 only, nothing loaded from the network) "
        "with two pages: the merge workbench, which learns BPE one merge at a time beside the "
        "course's broken variants, and the tokenizer viewer, which shows how each MODEL "
        "tokenizes text and where every token came from in training. MODEL is a bytepair model, "
        "a tokenizer.json, a transformers directory, or a tiktoken ranks file with its pattern "
        "(FILE:PATTERN, e.g. cl100k_base.tiktoken:cl100k, or --pattern).",
    )
    command.add_argument("models", nargs="*", metavar="MODEL")
    command.add_argument("--port", type=port_number, default=0,
                         help="the port to listen on (default: a free one)")
    command.add_argument("--no-browser", action="store_true",
                         help="only print the URL; do not open a browser")
    command.add_argument("--curves", metavar="FILE.json",
                         help="draw these bytes-per-token curves in the viewer: the output of "
                         "'bytepair evaluate MODEL --sample FILE --sizes ... --json'")
    command.add_argument("--exercise", metavar="FILE.py",
                         help="run the learner's count_pairs and merge from FILE.py beside the "
                         "reference in the workbench")
    command.add_argument("--pattern", metavar="NAME|REGEX",
                         help="the pattern of each tiktoken ranks file given without one")
    command.add_argument("--special", action="append", metavar="TOKEN|FILE.json",
                         help="the special tokens of each tiktoken ranks file, which holds none: "
                         "this one (repeatable; IDs after the ranks, in order), or the JSON file "
                         "of token -> ID that 'export --to tiktoken' writes beside the ranks "
                         "(MODEL.special_tokens.json)")
    add_trust_pattern(command)
    command.set_defaults(run=run_workbench)
