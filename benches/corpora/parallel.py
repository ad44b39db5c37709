"""The parallel corpus: LibreOffice's help and interface strings and the translation
catalogs, the same units in every language, with each language's translated documentation as
further training text (``parallel``)."""

from __future__ import annotations

import hashlib
import html.parser
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Iterator

from benches.corpora.build import BLOCK, _digest
from benches.corpora.cache import cache_dir
from benches.corpora.catalogs import (CATALOG_ENGLISH_FROM, LOCALE_DIR, _catalog_messages,
                                      read_mo)
from benches.corpora.debian import _log, unpacked
from benches.corpora.large import _extra_lines
from benches.corpora.pages import _PageText, _clean, _looks_english
from benches.corpora.world import _REFERENCES, _dir, _language_all


# Larger parallel text than the catalogs alone: the same messages and paragraphs translated into
# every chosen language, from three families of Debian packages, each unit named by an identifier
# that is the same in every language:
#
# * LibreOffice's help (``libreoffice-help-CODE``): every paragraph and heading of every help page
#   carries an id (``par_id…``, ``hd_id…``), the same in every language; a unit is (page, id).
# * LibreOffice's interface strings (``libreoffice-l10n-CODE``, gettext ``.mo`` files): a unit is
#   (catalog, context and msgid); English is the msgid.
# * The installed packages' gettext catalogs, as ``catalogs`` reads them.
#
# Training text per language adds that language's translated documentation (the ``LANGUAGES``
# recipe without its LibreOffice help, which the units already hold), or, for English, the English
# originals of the same documentation.

#: Bump when the parallel recipe or its sources change: part of its cache name.
PARALLEL_RECIPE = 2
#: The parallel set's default languages: English, three more Latin-script languages, Russian
#: (Cyrillic), Chinese and Japanese (Han, Kana), Greek.
PARALLEL_LOCALES = ("en", "fr", "de", "es", "ru", "zh_CN", "ja", "el")
#: Per locale: the LibreOffice package code and the ``LANGUAGES`` key of its documentation.
PARALLEL_CODES = {
    "en": ("en-us", None), "fr": ("fr", "french"), "de": ("de", "german"),
    "es": ("es", "spanish"), "it": ("it", "italian"), "pt": ("pt", "portuguese"),
    "pt_BR": ("pt-br", "brazilian"), "nl": ("nl", "dutch"), "ru": ("ru", "russian"),
    "zh_CN": ("zh-cn", "chinese"), "zh_TW": ("zh-tw", "chinese-traditional"),
    "ja": ("ja", "japanese"), "ko": ("ko", "korean"), "el": ("el", "greek"),
}
#: One in ``PARALLEL_SHARE`` units goes to the dev set, one in ``PARALLEL_SHARE`` to the held-out.
PARALLEL_SHARE = 16
#: Training bytes per language (each language gets the same number, cut at a line boundary).
PARALLEL_TRAIN_BYTES = 10_000_000
_HELP_ID = re.compile(r"(par|hd)_id")


class _HelpParagraphs(html.parser.HTMLParser):
    """The paragraphs and headings of a LibreOffice help page that carry an id: ``units`` is
    ``[(id, text)]`` in page order, white space folded (nested elements' text included)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.units: list[tuple[str, str]] = []
        self._open: tuple[str, str] | None = None  # (tag, id) of the element being read
        self._depth = 0
        self._text: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._hidden += 1
        if self._open is not None:
            self._depth += tag == self._open[0]
            return
        ident = dict(attrs).get("id") or ""
        if _HELP_ID.match(ident) and tag not in _PageText.VOID:
            self._open, self._depth, self._text = (tag, ident), 1, []

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._hidden = max(0, self._hidden - 1)
        if self._open is not None and tag == self._open[0]:
            self._depth -= 1
            if not self._depth:
                self.units.append((self._open[1], " ".join("".join(self._text).split())))
                self._open = None

    def handle_data(self, data):
        if self._open is not None and not self._hidden:
            self._text.append(data)


def help_paragraphs(path: Path) -> list[tuple[str, str]]:
    """``[(id, text)]`` of a LibreOffice help page, an id seen twice numbered (``id#2``).

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "p.html"
    >>> _ = page.write_text('<h1 id="hd_id1">Table</h1><p id="par_id2" class="paragraph">'
    ...                     'Inserts <a href="x">a</a>\\n table.</p><p id="par_id2">Again</p>')
    >>> help_paragraphs(page)
    [('hd_id1', 'Table'), ('par_id2', 'Inserts a table.'), ('par_id2#2', 'Again')]
    """
    parser = _HelpParagraphs()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    seen: dict[str, int] = {}
    out = []
    for ident, text in parser.units:
        seen[ident] = seen.get(ident, 0) + 1
        out.append((ident if seen[ident] == 1 else f"{ident}#{seen[ident]}", text))
    return out


def _help_units(locale: str) -> dict[tuple[str, ...], str]:
    """("help", page, id) -> text of the locale's LibreOffice help."""
    code = PARALLEL_CODES[locale][0]
    root = unpacked(f"libreoffice-help-{code}") / "usr/share/libreoffice/help" / _dir(code, "-")
    out = {}
    for path in sorted(root.glob("text/**/*.html")):
        page = path.relative_to(root).as_posix()
        for ident, text in help_paragraphs(path):
            out[("help", page, ident)] = text
    return out


def _interface_units(locale: str) -> dict[tuple[str, ...], str]:
    """("ui", catalog, context + msgid) -> text of LibreOffice's interface strings. The English
    text is the msgid of the French package's catalogs (the same in every package)."""
    code = PARALLEL_CODES["fr" if locale == "en" else locale][0]
    root = unpacked(f"libreoffice-l10n-{code}") / "usr/lib/libreoffice/program/resource"
    out = {}
    for path in sorted(root.glob("*/LC_MESSAGES/*.mo")):
        for msgid, msgstr in read_mo(path).items():
            if not msgid or not msgstr or b"\x00" in msgid:  # header, plural forms
                continue
            english = msgid.partition(b"\x04")[2] or msgid  # after the context, if any
            text = english if locale == "en" else msgstr
            out[("ui", path.stem, msgid.decode("utf-8", "replace"))] = text.decode(
                "utf-8", "replace")
    return out


#: Packages downloaded (not installed) for their gettext catalogs, read like the installed ones.
PARALLEL_CATALOG_PACKAGES = ("gcc-12-locales",)


def _gettext_units(locale: str) -> dict[tuple[str, ...], str]:
    """("po", domain, msgid) -> text of the installed packages' catalogs (see ``catalogs``) and
    of ``PARALLEL_CATALOG_PACKAGES``' (English: the msgids of the French catalogs)."""
    out = {("po", domain, msgid.decode("utf-8", "replace")): text.decode("utf-8", "replace")
           for (domain, msgid), text in _catalog_messages(locale).items()}
    source = CATALOG_ENGLISH_FROM if locale == "en" else locale
    for package in PARALLEL_CATALOG_PACKAGES:
        directory = unpacked(package) / "usr/share/locale" / source / "LC_MESSAGES"
        for path in sorted(directory.glob("*.mo")):
            for msgid, msgstr in read_mo(path).items():
                if not msgid or not msgstr or b"\x00" in msgid or b"\x04" in msgid:
                    continue
                out[("po", path.stem, msgid.decode("utf-8", "replace"))] = (
                    msgid if locale == "en" else msgstr).decode("utf-8", "replace")
    return out


def _unit_lines(text: str) -> list[bytes]:
    return [line.encode() for line in (_clean(part).strip() for part in text.split("\n")) if line]


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _read_fortunes(path: Path) -> Iterator[str]:
    """A fortune file's paragraphs, one per line: colour escapes dropped, the hard-wrapped
    lines of a paragraph joined (without a space after a non-ASCII character: Chinese).

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "fortunes"
    >>> _ = f.write_text("要有礼貌\\n\\n在项目中，很难\\n避免。\\n  \\x1b[33m-- Debian\\x1b[m\\n%\\nB\\n")
    >>> list(_read_fortunes(f))
    ['要有礼貌', '在项目中，很难避免。-- Debian', 'B']
    """
    paragraph = ""
    for line in _ANSI.sub("", path.read_text(encoding="utf-8", errors="replace")).split("\n"):
        line = line.strip()
        if not line or line == "%":
            if paragraph:
                yield paragraph
            paragraph = ""
        elif not paragraph or not paragraph[-1].isascii():
            paragraph += line
        else:
            paragraph += " " + line
    if paragraph:
        yield paragraph


#: More training text for a locale whose documentation falls short of the budget: (package,
#: files in it, reader). Chinese: the Chinese fortunes (modern prose, Tang and Song poems).
PARALLEL_MORE_TEXT = {
    "zh_CN": [("fortunes-zh", [f"usr/share/games/fortunes/{name}"
                               for name in ("chinese", "tang300", "song100")], _read_fortunes)],
}


def _documentation_lines(locale: str) -> Iterator[bytes]:
    """The locale's other translated documentation, a line at a time: the ``LANGUAGES`` text
    without its LibreOffice help blocks; for English, the English originals (``_REFERENCES``)
    of the documentation families, LibreOffice's help left out too. Then
    ``PARALLEL_MORE_TEXT``'s, lines that look English left out."""
    language = PARALLEL_CODES[locale][1]
    if language is None:
        for family, source in _REFERENCES.items():
            if family != "libreoffice":
                yield from _extra_lines(source, {})
    else:
        path = _language_all(language)
        blocks = json.loads(path.with_suffix(".blocks.json").read_text())
        with open(path, "rb") as f:
            start = 0
            for name, end in blocks:
                data = f.read(end - start)
                start = end
                if not name.startswith("libreoffice-"):
                    yield from data.splitlines(keepends=True)
    for package, files, read in PARALLEL_MORE_TEXT.get(locale, ()):
        root = unpacked(package)
        for name in files:
            for line in read(root / name):
                line = _clean(line)
                if any(ch.isalpha() for ch in line) and not _looks_english(line):
                    yield line.encode() + b"\n"


def parallel(locales: list[str] | tuple[str, ...] = PARALLEL_LOCALES,
             train_bytes: int = PARALLEL_TRAIN_BYTES, directory: Path | None = None) -> Path:
    """Training, dev and held-out text per locale, parallel across locales, from LibreOffice's
    help and interface strings and the installed packages' catalogs, with each language's other
    translated documentation as further training text. Returns the directory holding
    ``train/LOCALE.txt``, ``dev/LOCALE.txt``, ``heldout/LOCALE.txt`` (one line per line of a
    unit) and ``manifest.json``; same layout as :func:`catalogs`.

    A *unit* (a help paragraph, an interface string, a catalog message) is parallel when every
    locale has it, each text holds a letter, and no locale's text equals the English one (not
    translated). Units whose texts are all equal to an earlier unit's are dropped. A SHA-256
    digest of the unit's identifier sends one in ``PARALLEL_SHARE`` to the dev set and one in
    ``PARALLEL_SHARE`` to the held-out set: the same units in every locale. Training text is
    every other unit's lines (parallel or not) and the locale's documentation, round robin
    about ``BLOCK`` bytes at a time, each line once, no line of a dev or held-out unit, cut at
    ``train_bytes``. Nothing is repeated or machine-translated.
    """
    unknown = [loc for loc in locales if loc not in PARALLEL_CODES]
    if unknown or "en" not in locales:
        raise ValueError(f"locales must include en and be among {', '.join(PARALLEL_CODES)}; "
                         f"got {', '.join(locales)}")
    name = f"parallel-v{PARALLEL_RECIPE}-{'-'.join(locales)}-{train_bytes}"
    directory = directory or cache_dir() / name
    if (directory / "manifest.json").exists():
        return directory
    started = time.perf_counter()
    units = {loc: {**_help_units(loc), **_interface_units(loc), **_gettext_units(loc)}
             for loc in locales}
    held: dict[str, list] = {"dev": [], "heldout": []}
    seen_texts = set()
    parallel_units = 0
    for key in sorted(set.intersection(*(set(u) for u in units.values()))):
        texts = tuple(units[loc][key] for loc in locales)
        english = units["en"][key]
        if (texts in seen_texts or not all(any(ch.isalpha() for ch in t) for t in texts)
                or any(units[loc][key] == english for loc in locales if loc != "en")):
            continue
        seen_texts.add(texts)
        parallel_units += 1
        digest = hashlib.sha256("\0".join(key).encode()).digest()[0] % PARALLEL_SHARE
        if digest < 2:
            held["dev" if digest == 0 else "heldout"].append(key)
    held_keys = {key for keys in held.values() for key in keys}
    stats = {}
    tmp = directory.with_name(f".{directory.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for part in ("train", "dev", "heldout"):
        (tmp / part).mkdir(parents=True)
    # No line of any locale's dev or held-out units in any locale's training text (plain BPE
    # trains on all languages at once; an untranslated line may sit in another language's text).
    kept_out = {_digest(b"\n")}
    for loc in locales:
        for part, keys in held.items():
            lines = [line for key in keys for line in _unit_lines(units[loc][key])]
            kept_out.update(_digest(line + b"\n") for line in lines)
            (tmp / part / f"{loc}.txt").write_bytes(b"".join(line + b"\n" for line in lines))
    for loc in locales:
        mine = units[loc]
        english = units["en"]
        # A unit left in English (equal to the English text, or looking English) is not this
        # language's text.
        own = (line + b"\n" for key in sorted(mine) if key not in held_keys
               and (loc == "en" or (mine[key] != english.get(key)
                                    and not _looks_english(mine[key])))
               for line in _unit_lines(mine[key]))
        docs = (_clean(data.decode("utf-8", "replace")).strip().encode() + b"\n"
                for data in _documentation_lines(loc))
        seen = set(kept_out)
        with open(tmp / "train" / f"{loc}.txt", "wb") as out:
            written, lines, counts = _take_round_robin([own, docs], out, seen, train_bytes)
        stats[loc] = {
            "train": written, "train_lines": lines,
            "train_from_units": counts[0], "train_from_documentation": counts[1],
            "dev": (tmp / "dev" / f"{loc}.txt").stat().st_size,
            "heldout": (tmp / "heldout" / f"{loc}.txt").stat().st_size,
            "units": len(mine), "short_of_train_bytes": max(0, train_bytes - written)}
    info = {"recipe": PARALLEL_RECIPE, "locales": list(locales), "train_bytes": train_bytes,
            "share": PARALLEL_SHARE,
            "sources": {
                "help": "LibreOffice help, libreoffice-help-CODE: paragraphs and headings by "
                        "(page, id)",
                "ui": "LibreOffice interface strings, libreoffice-l10n-CODE .mo files; "
                      "English: their msgids",
                "po": f"installed packages' catalogs, {LOCALE_DIR}/LOCALE/LC_MESSAGES/*.mo; "
                      f"English: the msgids of {CATALOG_ENGLISH_FROM}'s",
                "documentation": "the LANGUAGES recipe of each language without its "
                                 "LibreOffice help; English: the originals (_REFERENCES)"},
            "packages": _parallel_packages(locales),
            "parallel_units": parallel_units,
            "dev_units": len(held["dev"]), "heldout_units": len(held["heldout"]),
            "heldout_units_by_source": {s: sum(k[0] == s for k in held["heldout"])
                                        for s in ("help", "ui", "po")},
            "bytes": stats, "built_seconds": round(time.perf_counter() - started, 1)}
    (tmp / "manifest.json").write_text(json.dumps(info, indent=1))
    shutil.rmtree(directory, ignore_errors=True)
    os.replace(tmp, directory)
    _log(f"built {directory} in {info['built_seconds']} s")
    return directory


def _parallel_packages(locales) -> dict[str, str]:
    """The versions of the packages the units come from (downloaded into the cache)."""
    packages = list(PARALLEL_CATALOG_PACKAGES)
    packages += [package for loc in locales for package, _, _ in PARALLEL_MORE_TEXT.get(loc, ())]
    for loc in locales:
        code = PARALLEL_CODES[loc][0]
        packages += [f"libreoffice-help-{code}"] + ([] if loc == "en" else
                                                    [f"libreoffice-l10n-{code}"])
    out = {}
    for package in packages:
        version = cache_dir() / "debs" / package / ".version"
        out[package] = version.read_text().strip() if version.exists() else "?"
    return out


def _take_round_robin(streams: list[Iterator[bytes]], out, seen: set,
                      limit: int) -> tuple[int, int, list[int]]:
    """Like ``_interleave`` (each line once, none in ``seen``), stopping before the first line
    that would pass ``limit`` bytes. Returns bytes and lines written and bytes per stream."""
    counts = [0] * len(streams)
    total = lines = 0
    alive = list(enumerate(streams))
    while alive:
        still = []
        for index, stream in alive:
            taken = 0
            for data in stream:
                key = _digest(data)
                if key in seen:
                    continue
                if total + len(data) > limit:
                    return total, lines, counts
                seen.add(key)
                out.write(data)
                total += len(data)
                lines += 1
                taken += len(data)
                counts[index] += len(data)
                if taken >= BLOCK:
                    still.append((index, stream))
                    break
        alive = still
    return total, lines, counts
