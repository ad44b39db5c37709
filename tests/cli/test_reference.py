"""docs/command-line.md lists every command and option: its reference section is the parser's
own rendering (bytepair.cli.reference), checked here to be current."""

from __future__ import annotations

from pathlib import Path

from bytepair.cli import reference
from bytepair.cli.main import _build

PAGE = Path(__file__).resolve().parents[2] / "docs" / "command-line.md"


def test_the_page_holds_the_current_reference():
    text = PAGE.read_text(encoding="utf-8")
    assert reference.replaced(text, reference.render()) == text, \
        "run: python -m bytepair.cli.reference --write docs/command-line.md"


def test_every_command_and_option_is_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    _, commands = _build()
    for name, parser in commands.items():
        assert f"### `bytepair {name}`" in text
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert option in text, (name, option)


def test_an_option_added_to_the_parser_makes_the_page_stale(monkeypatch):
    real = reference._build

    def with_one_more():
        parser, commands = real()
        commands["train"].add_argument("--brand-new", help="an option the page does not list")
        return parser, commands

    monkeypatch.setattr(reference, "_build", with_one_more)
    text = PAGE.read_text(encoding="utf-8")
    assert reference.replaced(text, reference.render()) != text
