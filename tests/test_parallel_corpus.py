"""The parallel benchmark text (benches/corpora/parallel.py, ``parallel``): dev and held-out
sets hold the same units in every language, no line of theirs reaches any training text, training
lines are each taken once and cut at the byte budget, and the build is deterministic. The sources
are replaced by small made-up ones (the real ones are Debian packages)."""

from __future__ import annotations

import json

import pytest

from benches.corpora import parallel as corpus

LOCALES = ("en", "fr", "ru")
ENGLISH = {("help", "a.html", f"par_id{i}"): f"Paragraph {i} of the help." for i in range(60)}
ENGLISH |= {("ui", "sw", f"CTX\x04Item {i}"): f"Item {i}" for i in range(60)}
ENGLISH |= {("po", "tar", "Table"): "Table", ("po", "tar", "two\nlines"): "two\nlines"}


def _translate(locale: str, text: str) -> str:
    return {"fr": f"Le {text} traduit", "ru": f"Перевод: {text}"}[locale]


def fake_units(locale: str) -> dict:
    if locale == "en":
        return dict(ENGLISH)
    units = {key: _translate(locale, text) for key, text in ENGLISH.items()}
    del units[("help", "a.html", "par_id7")]  # missing in one language: not parallel
    units[("ui", "sw", "CTX\x04Item 8")] = "Item 8"  # untranslated: not parallel
    units[("help", "b.html", f"par_id_{locale}")] = f"{locale} only"  # training text only
    return units


def fake_documentation(locale: str):
    # Repeats itself, and repeats unit lines (of which some end up held out).
    lines = [f"{locale} documentation line {i % 300}" for i in range(900)]
    for text in ENGLISH.values():
        lines += (_translate(locale, text) if locale != "en" else text).split("\n")
    return (line.encode() + b"\n" for line in lines)


@pytest.fixture
def fake_sources(monkeypatch):
    monkeypatch.setattr(corpus, "_help_units", fake_units)
    monkeypatch.setattr(corpus, "_interface_units", lambda locale: {})
    monkeypatch.setattr(corpus, "_gettext_units", lambda locale: {})
    monkeypatch.setattr(corpus, "_documentation_lines", fake_documentation)
    monkeypatch.setattr(corpus, "PARALLEL_SHARE", 4)  # more held units in a small set
    monkeypatch.setattr(corpus, "_parallel_packages", lambda locales: {})


def read(directory, part, locale) -> list[bytes]:
    return (directory / part / f"{locale}.txt").read_bytes().splitlines()


def test_dev_and_heldout_are_parallel_and_never_trained_on(fake_sources, tmp_path):
    out = corpus.parallel(LOCALES, train_bytes=10**6, directory=tmp_path / "p")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dev_units"] > 5 and manifest["heldout_units"] > 5
    # Two units are not parallel (missing, untranslated): 122 - 2.
    assert manifest["parallel_units"] == len(ENGLISH) - 2
    held_lines = set()
    for part in ("dev", "heldout"):
        english = read(out, part, "en")
        for locale in ("fr", "ru"):
            lines = read(out, part, locale)
            assert len(lines) == len(english)
            for en, other in zip(english, lines):  # the same unit, line for line
                if en not in (b"two", b"lines"):  # the one unit of two lines
                    assert other.decode() == _translate(locale, en.decode())
            held_lines.update(lines)
        held_lines.update(english)
    assert b"Item 8" not in held_lines and b"Paragraph 7 of the help." not in held_lines
    for locale in LOCALES:
        train = read(out, "train", locale)
        assert len(train) == len(set(train)), "a training line twice"
        assert not held_lines & set(train), "a dev or held-out line in training text"
        assert b"" not in train
        assert len(train) > 300  # units not held out and the documentation
    assert b"fr only" in read(out, "train", "fr")
    assert b"Le Item 8 traduit" in read(out, "train", "fr")  # not parallel: still training


def test_training_text_is_cut_at_the_budget_and_the_build_repeats(fake_sources, tmp_path):
    small = corpus.parallel(LOCALES, train_bytes=5000, directory=tmp_path / "a")
    again = corpus.parallel(LOCALES, train_bytes=5000, directory=tmp_path / "b")
    large = corpus.parallel(LOCALES, train_bytes=10**6, directory=tmp_path / "c")
    manifest = json.loads((small / "manifest.json").read_text())
    for locale in LOCALES:
        data = (small / "train" / f"{locale}.txt").read_bytes()
        assert 5000 - 200 < len(data) <= 5000 and data.endswith(b"\n")
        assert manifest["bytes"][locale]["train"] == len(data)
        for part in ("train", "dev", "heldout"):
            assert ((again / part / f"{locale}.txt").read_bytes()
                    == (small / part / f"{locale}.txt").read_bytes())
        # A smaller budget gives a prefix of the larger one's text.
        assert (large / "train" / f"{locale}.txt").read_bytes().startswith(data)
    assert json.loads((large / "manifest.json").read_text())["bytes"]["en"][
        "short_of_train_bytes"] > 0


def test_locales_must_include_english_and_be_known(tmp_path):
    with pytest.raises(ValueError, match="locales must include en"):
        corpus.parallel(("fr", "ru"), directory=tmp_path / "x")
    with pytest.raises(ValueError, match="locales must include en"):
        corpus.parallel(("en", "xx"), directory=tmp_path / "y")


def test_help_paragraphs_are_read_by_id(tmp_path):
    page = tmp_path / "p.html"
    page.write_text('<html><head><script>var x = "<p id=par_id0>no</p>";</script></head>'
                    '<body><h1 id="hd_id1">Table</h1>'
                    '<p id="par_id2" class="paragraph">Inserts <b>a</b>\n  table.</p>'
                    '<p id="other">not a help paragraph</p>'
                    '<div id="par_id3"><p>nested <span>text</span></p> here</div>'
                    '<p id="par_id2">Again</p></body></html>', encoding="utf-8")
    assert corpus.help_paragraphs(page) == [
        ("hd_id1", "Table"), ("par_id2", "Inserts a table."), ("par_id3", "nested text here"),
        ("par_id2#2", "Again")]


def test_fortunes_are_read_a_paragraph_a_line(tmp_path):
    path = tmp_path / "fortunes"
    path.write_text("要有礼貌\n\n在项目中，很难\n避免。\n  \x1b[33m-- Debian\x1b[m 第一条\n%\n"
                    "An English\nline\n%\n", encoding="utf-8")
    assert list(corpus._read_fortunes(path)) == [
        "要有礼貌", "在项目中，很难避免。-- Debian 第一条", "An English line"]
