"""Command line: ``bytepair COMMAND ...`` (also ``python -m bytepair``).

Commands: ``train``, ``count``, ``extend``, ``learn-words``, ``export``, ``encode``, ``decode``,
``inspect``, ``vocab``, ``evaluate``, ``trace``, ``demo``, ``workbench`` and ``exercise``;
``bytepair COMMAND --help`` describes each. Each command group is a module of its own (``training``, ``extending``, ``words``,
``export``, ``encoding``, ``inspection``, ``evaluation``, ``teaching``) that registers its subcommands;
this module builds the parser from them and runs one command. ``bytepair COMMAND ...`` imports and
registers only the group of COMMAND, and a group imports what its commands run only when one
runs, so that a command starts without the others' stages (and ``--help`` starts at once).

Bad input (a missing or unreadable file, an empty corpus, invalid UTF-8 in
text mode, a bad JSON line, an unknown pattern, a corrupt model, ...) ends
with one line ``bytepair: error: ...`` on stderr and exit code 2, as do
usage errors. No partial output is left behind: output directories are
checked (with a probe write) before any work starts, models are written
through a temporary file and a rename, and a failed export's new file is
removed. SIGTERM is handled as Ctrl-C is (the clean-up runs, workers end),
with exit code 143 instead of 130.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading

from bytepair import __version__
from bytepair.cli.common import CommandLineError, Parser, one_line, resume_hint

#: Each command's group (a module of :mod:`bytepair.cli`), in the order ``--help`` lists them.
COMMANDS = {"train": "training", "count": "training", "extend": "extending",
            "learn-words": "words", "export": "export", "encode": "encoding", "decode": "encoding",
            "inspect": "inspection", "vocab": "inspection", "evaluate": "evaluation",
            "trace": "teaching", "demo": "teaching", "workbench": "workbench",
            "exercise": "exercise"}

EXAMPLES = """examples:
  bytepair train corpus/*.txt.gz --per-line --vocab-size 32000 --special '<|endoftext|>' -o tok.json
  bytepair train data.jsonl --merges 1000 --pretokenize none -o bytes.json
  bytepair train corpus.txt --vocab-size 8192,16384,32768 -o 'tok-{vocab_size}.json'
  bytepair count shards/*.parquet --text-column text -o shards.counts
  bytepair train --counts a.counts b.counts --vocab-size 32000 -o tok.json
  bytepair extend tokenizer.json corpus/*.txt --per-line --vocab-size 60000 -o extended.json
  bytepair learn-words corpus.txt --merges 32000 --end-of-word '</w>' -o words.model
  bytepair encode tok.json 'Hello world'
  bytepair encode tok.json 'Hello world' | bytepair decode tok.json
  bytepair encode tok.json corpus/*.txt --per-line --append '<|endoftext|>' --dtype uint16 -o train.bin
  bytepair decode tok.json --dtype uint16 train.bin
  bytepair inspect tok.json --sample held-out.txt
  bytepair vocab tok.json > vocab.tsv
  bytepair evaluate tok.json --sample en.txt=en --sample de.txt=de --sizes all:4096 --checks
  bytepair export tok.json --to tokenizers -o tokenizer.json
  bytepair trace aaab abab --merges 3
  bytepair workbench tok.json cl100k_base.tiktoken:cl100k
"""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread as SIGINT raises KeyboardInterrupt, so that the same
    clean-up runs: the temporary output file is removed and worker processes are ended."""


def _terminate(signum, frame) -> None:
    if os.getpid() != _terminate.owner:
        # A worker forked before it installed its own handler: just end.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up
    raise Terminated


_terminate.owner = os.getpid()


def _build(command: str | None = None) -> tuple[argparse.ArgumentParser,
                                               dict[str, argparse.ArgumentParser]]:
    """The parser and its commands' parsers: all of them, or only those of the group of
    ``command`` (a name of :data:`COMMANDS`), which parse its arguments alike."""
    parser = Parser(
        prog="bytepair", description="Exact, deterministic byte-pair-encoding training.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    groups = [COMMANDS[command]] if command is not None else dict.fromkeys(COMMANDS.values())
    for group in groups:
        importlib.import_module(f"bytepair.cli.{group}").add_commands(commands)
    return parser, commands.choices


def _exit_code(code) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 2


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code (usage errors and bad input: 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, commands = _build(argv[0] if argv[:1] and argv[0] in COMMANDS else None)
    if argv[:1] in (["train"], ["count"]) and "--sentencepiece" in argv:  # spm_train's options
        from bytepair.cli.sentencepiece import count_parser, parser as sentencepiece_parser

        commands = dict(commands, **{argv[0]: sentencepiece_parser() if argv[0] == "train" else count_parser()})
    try:
        if argv and argv[0] in commands:
            commands[argv[0]].check_options(argv[1:])
            # Intermixed: options may sit between FILEs, DOCs and IDS.
            args = commands[argv[0]].parse_intermixed_args(argv[1:])
            args.command = argv[0]
            if getattr(args, "check_usage", None) is not None:
                args.check_usage(args, commands[argv[0]])
        else:
            args = parser.parse_args(argv)
    except CommandLineError as exc:
        print(f"bytepair: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help and --version
        return _exit_code(exc.code)
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        _terminate.owner = os.getpid()
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        status = args.run(args)  # a command may return an exit code (exercise check: 1 = a failure)
        sys.stdout.flush()
    except KeyboardInterrupt:
        print(f"bytepair: interrupted{resume_hint(args, argv)}", file=sys.stderr)
        return 130
    except Terminated:
        print(f"bytepair: terminated{resume_hint(args, argv)}", file=sys.stderr)
        return 128 + signal.SIGTERM
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python's
        # final flush from failing on the closed pipe.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except (OSError, ValueError, TypeError, ImportError) as exc:
        print(f"bytepair: error: {one_line(exc)}", file=sys.stderr)
        return 2
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
    return status if isinstance(status, int) else 0
