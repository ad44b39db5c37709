"""docs/superbpe.md shows what bytepair does: its examples run as written."""

import doctest
import re
from pathlib import Path

import pytest

from helpers import run

PAGE = Path(__file__).parents[2] / "docs" / "superbpe.md"


def test_the_python_examples_run_as_written():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 1 and result.failed == 0


def test_the_tokens_shown_are_the_tokens_trained(tmp_path, capsys):
    page = PAGE.read_text(encoding="utf-8")
    corpus = re.search(r"```text\n(.*?)```", page, re.S).group(1)
    shown = re.search(r"grep -F '\. The'\n```\n\n```\n(.*?)```", page, re.S).group(1)
    (tmp_path / "sb.txt").write_text(corpus)
    code, _, err = run(capsys, "train", tmp_path / "sb.txt", "--vocab-size", "330", "--superbpe",
                       "300", "-o", tmp_path / "sb.json")
    assert code == 0, err
    code, out, err = run(capsys, "vocab", tmp_path / "sb.json")
    assert code == 0, err
    listed = "".join(line + "\n" for line in out.splitlines() if ". The" in line)
    assert listed == shown
    assert "b'. The kernel'" in page


@pytest.mark.parametrize("single", [".", ",", "!", '"'])
def test_a_single_punctuation_character_is_not_cut_as_the_page_says(single):
    from bytepair.split.pretokenize import PATTERNS, splitter
    text = f"It boots{single} The kernel"
    assert splitter(PATTERNS["superbpe"])(text) == [text]
    assert splitter(PATTERNS["superbpe"])(f"It boots{single * 2} The kernel") == \
        ["It boots", f"{single * 2}", " The kernel"]
