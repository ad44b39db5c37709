"""Docs are for users: a commit hash appears only in the history section of docs/benchmarks.md,
never in the README or another page (which point to that section instead)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A commit as the docs abbreviate it: 7 to 12 hex digits with at least one digit and one letter
#: (longer ones are the corpora's sha256 prefixes; a results file's name may hold a commit).
HASH = re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}(?![\w/.-])")


def hashes(text: str) -> list[str]:
    return HASH.findall(text)


def test_the_pattern_finds_commits_and_leaves_other_words():
    assert hashes("at commit 8865b0e, then 11896e66fd32") == ["8865b0e", "11896e66fd32"]
    assert hashes("deadbeef facade 1234567 ladder-100MB-7ec3d18.json 4d3c7309a91e801e") == []


def test_no_page_but_the_benchmarks_history_names_a_commit():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if page.name == "benchmarks.md":
            text = text.split("\n## History\n")[0]
        assert hashes(text) == [], page.name


def test_the_history_section_holds_the_commits_the_pages_point_to():
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    history = text.split("\n## History\n", 1)[1]
    for commit in ("256d61a", "873fedc", "8865b0e", "e6f8e3f", "6838dbb", "8dd4350", "11896e6"):
        assert commit in history
