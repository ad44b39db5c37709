"""The README's headline figures are rendered from the committed results (benches/readme.py),
the files docs/benchmarks.md reads: they cannot drift apart."""

from __future__ import annotations

import re

from benches import readme


def test_the_readme_table_is_the_rendering_of_the_results():
    text = readme.README.read_text(encoding="utf-8")
    assert readme.replaced(text, readme.render()) == text, "run: python -m benches.readme"
    assert readme.main(["--check"]) == 0


def test_a_figure_edited_by_hand_is_caught(monkeypatch, tmp_path):
    text = readme.README.read_text(encoding="utf-8")
    edited = text.replace("| 0.95 s, 120 MiB |", "| 0.90 s, 120 MiB |", 1)
    assert edited != text
    fake = tmp_path / "README.md"
    fake.write_text(edited, encoding="utf-8")
    monkeypatch.setattr(readme, "README", fake)
    assert readme.main(["--check"]) == 1


def test_every_figure_of_the_table_stands_in_docs_benchmarks():
    """The README shows nothing that docs/benchmarks.md does not have too."""
    docs = (readme.ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    table = readme.render().split("\n\n")[0]
    for row in table.splitlines()[2:]:
        for figure in re.findall(r"\d[\d,.]* (?:s|MiB|MB/s)\b", row):
            assert figure in docs, figure
