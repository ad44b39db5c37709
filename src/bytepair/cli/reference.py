"""Every command and option, as Markdown, rendered from the parser itself.

docs/command-line.md holds this rendering between ``<!-- commands:begin -->`` and
``<!-- commands:end -->``; ``python -m bytepair.cli.reference --write docs/command-line.md``
renews it, and a test checks that it is current, so the page lists what ``--help`` says.
"""

from __future__ import annotations

import argparse
import sys

from bytepair.cli.main import _build

BEGIN, END = "<!-- commands:begin -->", "<!-- commands:end -->"


def _cell(text: str) -> str:
    """``text`` in one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _spelling(action: argparse.Action) -> str:
    """How the option is written: ``-o, --output MODEL``, ``--per-line``, ``FILE ...``."""
    if not action.option_strings:
        name = action.metavar or action.dest
        return f"`{name} ...`" if action.nargs in ("*", "+") else f"`{name}`"
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return f"`{names}`"
    value = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}")
                               if action.choices else action.dest.upper())
    return f"`{names} {value}`"


def _help(formatter: argparse.HelpFormatter, action: argparse.Action) -> str:
    text = formatter._expand_help(action) if action.help else ""
    if action.choices and action.metavar and action.option_strings:
        text = f"one of {', '.join(map(str, action.choices))}; {text}" if text else \
            f"one of {', '.join(map(str, action.choices))}"
    return _cell(text)


def command_reference(name: str, parser: argparse.ArgumentParser) -> str:
    """One command's section: what it does, then a table of its arguments and options."""
    formatter = parser._get_formatter()
    lines = [f"### `bytepair {name}`", "", _cell(parser.description or ""), "",
             "| argument or option | what it does |", "|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        lines.append(f"| {_cell(_spelling(action))} | {_help(formatter, action)} |")
    return "\n".join(lines)


def render() -> str:
    """The reference of every command, in the order ``bytepair --help`` lists them."""
    _, commands = _build()
    parts = [f"`bytepair --help` lists the commands; this section is generated from the same "
             f"parser (`python -m bytepair.cli.reference`), {len(commands)} commands in all.",
             ""]
    parts += [command_reference(name, parser) + "\n" for name, parser in commands.items()]
    return "\n".join(parts).rstrip() + "\n"


def replaced(text: str, reference: str) -> str:
    """``text`` with what stands between the markers replaced by ``reference``."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + reference + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bytepair.cli.reference",
                                     description="Print the command-line reference as Markdown.")
    parser.add_argument("--write", metavar="PAGE",
                        help="replace the reference between the markers of PAGE instead")
    args = parser.parse_args(argv)
    if args.write is None:
        sys.stdout.write(render())
        return 0
    with open(args.write, encoding="utf-8") as file:
        text = file.read()
    with open(args.write, "w", encoding="utf-8") as file:
        file.write(replaced(text, render()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
