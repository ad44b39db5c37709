"""Other languages (``LANGUAGES``, recipe ``WORLD_RECIPE``): Debian's translated
documentation (LibreOffice and GIMP help, man pages, the Debian manuals, GNOME
help, KiCad, GnuCash, LilyPond, aptitude, Debian Edu), every package fetched
with ``apt-get download`` and unpacked into the cache. HTML and GNOME help
pages give their visible text without navigation, one line per block; man
pages give their prose, one paragraph per line. A translation keeps only its
own lines: lines without a letter, lines equal to a line of the English
original (untranslated strings, commands) and lines that look English are
dropped, a source that keeps less than ``MIN_TRANSLATED`` of its text is a
stub and left out, and a line already taken for the language is not taken
again (the help systems repeat their boilerplate on every page; the manifest
counts what was dropped). A language's text is its sources round robin as
in the English recipe, ``{language}-v2-all.txt``; a smaller size is a prefix of it. The
``multilingual`` text takes every language round robin in ``LANGUAGES``
order, about ``BLOCK`` bytes at a time, each line once overall.
"""

from __future__ import annotations

from pathlib import Path

from benches.corpora.build import BLOCK, _fraction, _interleave, _write_built, manifest
from benches.corpora.cache import cache_dir
from benches.corpora.debian import Source, _glob, _package_version, _root
from benches.corpora.pages import _clean, _looks_english, _read_page, _read_roff


# The non-English recipe: Debian's translated documentation, one language at a time, then all
# languages mixed. Every package is fetched with `apt-get download` and unpacked into the cache
# (many depend on a whole application: LibreOffice, GIMP, KiCad), except the Debian
# Administrator's Handbook, which the English recipe installs already.

#: Bump when the non-English recipe or its sources change: part of every cache name.
#: (Version 1 was benches/split_throughput.py's few Debian manuals per language.)
WORLD_RECIPE = 2
#: A source is left out when less than this share of its text survives the line filters
#: (a stub translation: the English original with a few translated titles).
MIN_TRANSLATED = 0.2

#: Languages, each with the code that names its package or directory in each family of
#: sources (``_family_sources``); ``manpages`` may be ``package/directory``. (Debian's
#: Hebrew, Hindi, Kannada and Punjabi documentation is all stubs: not listed.)
LANGUAGES = {
    "arabic": dict(handbook="ar-MA"),
    "assamese": dict(gnome="as"),
    "basque": dict(libreoffice="eu"),
    "brazilian": dict(libreoffice="pt-br", handbook="pt-BR", manpages="pt-br/pt_BR",
                      reference="pt-br", gnome="pt_BR", gimp="pt-br", edu="pt-br"),
    "catalan": dict(libreoffice="ca", handbook="ca-ES", maint="ca", install="ca", gnome="ca",
                    gimp="ca", kicad="ca", lilypond="ca"),
    "chinese": dict(libreoffice="zh-cn", handbook="zh-CN", manpages="zh/zh_CN", reference="zh-cn",
                    maint="zh-cn", faq="zh-cn", install="zh_CN", gnome="zh_CN", gimp="zh-cn",
                    kicad="zh", lilypond="zh", edu="zh-cn"),
    "chinese-traditional": dict(libreoffice="zh-tw", handbook="zh-TW", manpages="zh/zh_TW",
                                reference="zh-tw", maint="zh-tw"),
    "croatian": dict(handbook="hr-HR", gnome="hr", gimp="hr"),
    "czech": dict(libreoffice="cs", handbook="cs-CZ", manpages="cs", install="cs", gnome="cs",
                  gimp="cs", lilypond="cs", aptitude="cs"),
    "danish": dict(libreoffice="da", handbook="da-DK", manpages="da", install="da", gnome="da",
                   gimp="da", edu="da"),
    "dutch": dict(libreoffice="nl", handbook="nl-NL", manpages="nl", faq="nl", install="nl",
                  gnome="nl", gimp="nl", lilypond="nl", aptitude="nl", edu="nl"),
    "dzongkha": dict(libreoffice="dz"),
    "estonian": dict(libreoffice="et"),
    "finnish": dict(libreoffice="fi", manpages="fi", gnome="fi", gimp="fi", aptitude="fi"),
    "french": dict(libreoffice="fr", handbook="fr-FR", manpages="fr", reference="fr",
                   developers="fr", maint="fr", faq="fr", install="fr", gnome="fr", gimp="fr",
                   kicad="fr", lilypond="fr", aptitude="fr", edu="fr"),
    "galician": dict(libreoffice="gl", gnome="gl"),
    "german": dict(libreoffice="de", handbook="de-DE", manpages="de", reference="de",
                   developers="de", maint="de", faq="de", install="de", gnome="de", gimp="de",
                   kicad="de", gnucash="de", lilypond="de", edu="de"),
    "greek": dict(libreoffice="el", handbook="el-GR", manpages="el", install="el", gnome="el",
                  gimp="el"),
    "gujarati": dict(gnome="gu"),
    "hungarian": dict(libreoffice="hu", manpages="hu", gnome="hu", gimp="hu", lilypond="hu"),
    "indonesian": dict(libreoffice="id", handbook="id-ID", manpages="id", reference="id",
                       install="id", gnome="id", kicad="id"),
    "italian": dict(libreoffice="it", handbook="it-IT", manpages="it", reference="it",
                    developers="it", maint="it", faq="it", install="it", gnome="it", gimp="it",
                    kicad="it", gnucash="it", lilypond="it", aptitude="it", edu="it"),
    "japanese": dict(libreoffice="ja", handbook="ja-JP", manpages="ja", reference="ja",
                     developers="ja", maint="ja", faq="ja", install="ja", gnome="ja", gimp="ja",
                     kicad="ja", gnucash="ja", lilypond="ja", aptitude="ja", edu="ja"),
    "khmer": dict(libreoffice="km"),
    "korean": dict(libreoffice="ko", handbook="ko-KR", faq="ko", install="ko", gnome="ko",
                   gimp="ko"),
    "latvian": dict(gnome="lv"),
    "lithuanian": dict(gnome="lt", gimp="lt"),
    "macedonian": dict(manpages="mk"),
    "marathi": dict(gnome="mr"),
    "norwegian": dict(handbook="nb-NO", manpages="nb", edu="nb-no"),
    "nynorsk": dict(gimp="nn"),
    "oromo": dict(libreoffice="om"),
    "persian": dict(handbook="fa-IR", gnome="fa", gimp="fa"),
    "polish": dict(libreoffice="pl", handbook="pl-PL", manpages="pl", gnome="pl", kicad="pl"),
    "portuguese": dict(libreoffice="pt", reference="pt", faq="pt", install="pt", gnome="pt",
                       gimp="pt", gnucash="pt", lilypond="pt", edu="pt-pt"),
    "romanian": dict(handbook="ro-RO", manpages="ro", install="ro", gnome="ro", gimp="ro"),
    "russian": dict(libreoffice="ru", handbook="ru-RU", manpages="ru", developers="ru", maint="ru",
                    faq="ru", install="ru", gnome="ru", gimp="ru", kicad="ru", aptitude="ru"),
    "serbian": dict(manpages="sr", gnome="sr"),
    "slovenian": dict(libreoffice="sl", gnome="sl", gimp="sl"),
    "spanish": dict(libreoffice="es", handbook="es-ES", manpages="es", reference="es", maint="es",
                    install="es", gnome="es", gimp="es", kicad="es", lilypond="es", aptitude="es",
                    edu="es"),
    "swedish": dict(libreoffice="sv", handbook="sv-SE", manpages="sv", install="sv", gnome="sv",
                    gimp="sv"),
    "tamil": dict(gnome="ta"),
    "telugu": dict(gnome="te"),
    "turkish": dict(libreoffice="tr", handbook="tr-TR", manpages="tr", gnome="tr"),
    "ukrainian": dict(manpages="uk", gnome="uk", gimp="uk"),
    "vietnamese": dict(libreoffice="vi", handbook="vi-VN", manpages="vi", maint="vi", install="vi",
                       gnome="vi"),
}
#: Languages whose man pages come in two packages, ``manpages-X`` and ``manpages-X-dev``.
_MANPAGES_DEV = {"cs", "da", "de", "es", "fr", "it", "ja", "nl", "pl", "pt-br", "ru", "uk"}


def _dir(code: str, sep: str) -> str:
    """``pt-br`` -> ``pt-BR`` / ``pt_BR``: a language code as a directory name."""
    lang, _, region = code.partition("-")
    return f"{lang}{sep}{region.upper()}" if region else lang


#: The families whose pages are html (or Mallard) read by ``_read_page``: the source's name,
#: package, description, directory, file pattern and excluded paths, with ``{code}`` the
#: language code, ``{code_us}`` / ``{code_dash}`` it as a directory name (``pt_BR`` / ``pt-BR``).
_HTML_FAMILIES = {
    "libreoffice": ("libreoffice-{code}", "libreoffice-help-{code}",
                    "LibreOffice help pages (visible text)",
                    "/usr/share/libreoffice/help/{code_dash}", "/text/**/*.html", None),
    "reference": ("debian-reference-{code}", "debian-reference-{code}", "Debian Reference, html",
                  "/usr/share/debian-reference", "/*.{code}.html", None),
    "developers": ("developers-reference-{code}", "developers-reference-{code}",
                   "Debian Developer's Reference, html",
                   "/usr/share/developers-reference/{code}", "/*.html",
                   r"/(genindex|search)\.html$"),
    "maint": ("maint-guide-{code}", "maint-guide-{code}", "Debian New Maintainers' Guide, html",
              "/usr/share/doc/maint-guide-{code}/html", "/*.html", None),
    "faq": ("debian-faq-{code}", "debian-faq-{code}", "Debian FAQ, html",
            "/usr/share/doc/debian/FAQ/{code}", "/*.html", None),
    "install": ("installation-guide-{code}", "installation-guide-amd64",
                "Debian installation guide for amd64, {code} html",
                "/usr/share/doc/installation-guide-amd64/{code}", "/*.html", None),
    "gnome": ("gnome-help-{code}", "gnome-user-docs",
              "GNOME help and system administration guide, {code} Mallard pages",
              "/usr/share/help/{code}", "/*/*.page", None),
    "gimp": ("gimp-help-{code}", "gimp-help-{code}", "GIMP help pages, html",
             "/usr/share/gimp/2.0/help/{code_us}", "/**/*.html", None),
    "kicad": ("kicad-doc-{code}", "kicad-doc-{code}", "KiCad manuals, html",
              "/usr/share/doc/kicad/help/{code}", "/*.html", None),
    "gnucash": ("gnucash-{code}", "gnucash-docs", "GnuCash guide and help, {code} html",
                "/usr/share/doc/gnucash-docs", "/gnucash-*-{code}/*.html", None),
    "lilypond": ("lilypond-{code}", "lilypond-doc-html-{code}",
                 "LilyPond manuals, the one-page html of each",
                 "/usr/share/doc/lilypond/html/Documentation", "/*-big-page.{code}.html", None),
    "aptitude": ("aptitude-doc-{code}", "aptitude-doc-{code}", "aptitude user's manual, html",
                 "/usr/share/doc/aptitude/html/{code}", "/*.html", None),
    "edu": ("debian-edu-doc-{code}", "debian-edu-doc-{code}", "Debian Edu bookworm manual, html",
            "/usr/share/doc/debian-edu-doc-{code}", "/*-bookworm-manual.html", None),
}


def _family_sources(family: str, code: str) -> list[Source]:
    """The sources of one family (see ``LANGUAGES``) for one language code."""
    html = dict(read=_read_page, extract=True)
    if family == "handbook":
        return [Source(f"handbook-{code}", "debian-handbook",
                       f"The Debian Administrator's Handbook, {code} html",
                       _glob(f"/usr/share/doc/debian-handbook/html/{code}", "/*.html"),
                       _read_page, reference=_REFERENCES["handbook"])]
    if family == "manpages":
        package, _, directory = code.partition("/")
        directory = directory or _dir(package, "_")
        packages = [f"manpages-{package}"] + (
            [f"manpages-{package}-dev"] if package in _MANPAGES_DEV else [])
        return [Source(f"{p}-{directory}" if "/" in code else p, p,
                       f"man pages, /usr/share/man/{directory}/man*/* (roff, prose only)",
                       _glob(f"/usr/share/man/{directory}", "/man*/*"), _read_roff,
                       extract=True) for p in packages]
    if family in _HTML_FAMILIES:
        fields = dict(code=code, code_us=_dir(code, "_"), code_dash=_dir(code, "-"))
        name, package, what, directory, pattern, exclude = (
            None if field is None else field.format(**fields)
            for field in _HTML_FAMILIES[family])
        return [Source(name, package, what, _glob(directory, pattern, exclude=exclude),
                       reference=_REFERENCES[family], **html)]
    raise ValueError(f"no family of sources {family!r}")


#: Per family, the English original of the translations (its lines are dropped from them).
_REFERENCES = {
    "libreoffice": Source("libreoffice-en", "libreoffice-help-en-us", "LibreOffice help, en-US",
                          _glob("/usr/share/libreoffice/help/en-US", "/text/**/*.html"),
                          _read_page, extract=True),
    "handbook": Source("handbook-en", "debian-handbook", "Debian Administrator's Handbook, en-US",
                       _glob("/usr/share/doc/debian-handbook/html/en-US", "/*.html"), _read_page),
    "reference": Source("debian-reference-en", "debian-reference-en", "Debian Reference, en",
                        _glob("/usr/share/debian-reference", "/*.en.html"), _read_page,
                        extract=True),
    "developers": Source("developers-reference-en", "developers-reference",
                         "Debian Developer's Reference, en",
                         _glob("/usr/share/developers-reference", "/*.html",
                               exclude=r"/(genindex|search)\.html$"), _read_page, extract=True),
    "maint": Source("maint-guide-en", "maint-guide", "Debian New Maintainers' Guide, en",
                    _glob("/usr/share/doc/maint-guide/html", "/*.html"), _read_page,
                    extract=True),
    "faq": Source("debian-faq-en", "debian-faq", "Debian FAQ, en",
                  _glob("/usr/share/doc/debian/FAQ", "/*.html"), _read_page, extract=True),
    "install": Source("installation-guide-en", "installation-guide-amd64",
                      "Debian installation guide for amd64, en",
                      _glob("/usr/share/doc/installation-guide-amd64/en", "/*.html"),
                      _read_page, extract=True),
    "gnome": Source("gnome-help-en", "gnome-user-docs", "GNOME help, C (English)",
                    _glob("/usr/share/help/C", "/*/*.page"), _read_page, extract=True),
    "gimp": Source("gimp-help-en", "gimp-help-en", "GIMP help, en",
                   _glob("/usr/share/gimp/2.0/help/en", "/**/*.html"), _read_page,
                   extract=True),
    "kicad": Source("kicad-doc-en", "kicad-doc-en", "KiCad manuals, en",
                    _glob("/usr/share/doc/kicad/help/en", "/*.html"), _read_page, extract=True),
    "gnucash": Source("gnucash-en", "gnucash-docs", "GnuCash guide and help, en",
                      _glob("/usr/share/doc/gnucash-docs", "/gnucash-*-en/*.html"), _read_page,
                      extract=True),
    "aptitude": Source("aptitude-doc-en", "aptitude-doc-en", "aptitude user's manual, en",
                       _glob("/usr/share/doc/aptitude/html/en", "/*.html"), _read_page,
                       extract=True),
    "edu": Source("debian-edu-doc-en", "debian-edu-doc-en", "Debian Edu bookworm manual, en",
                  _glob("/usr/share/doc/debian-edu-doc-en", "/*-bookworm-manual.html"),
                  _read_page, extract=True),
    "lilypond": Source("lilypond-en", "lilypond-doc-html", "LilyPond manuals, en",
                       _glob("/usr/share/doc/lilypond/html/Documentation", "/*-big-page.html"),
                       _read_page, extract=True),
}


def language_sources(language: str) -> list[Source]:
    """The sources of ``language`` (a key of ``LANGUAGES``), in recipe order."""
    if language not in LANGUAGES:
        raise ValueError(f"no language {language!r}; known: {', '.join(LANGUAGES)}")
    return [source for family, code in LANGUAGES[language].items()
            for source in _family_sources(family, code)]


_reference_lines: dict[str, tuple[set[str], dict]] = {}


def _reference(source: Source) -> tuple[set[str], dict]:
    """The English original's lines (cleaned) and what it is, read once per process."""
    if source.name not in _reference_lines:
        root = _root(source)
        files = list(dict.fromkeys(source.files(root)))  # links resolved: each file once
        lines = {line for path in files for line in map(_clean, source.read(path)) if line}
        package, version = _package_version(source, root, files)
        _reference_lines[source.name] = lines, dict(
            name=source.name, package=package, version=version, files=len(files),
            lines=len(lines))
    return _reference_lines[source.name]


def _translated_lines(source: Source) -> tuple[list[bytes], dict]:
    """The source's lines that are its language's own text, UTF-8 with a final newline, and
    counts of what was dropped: blank lines, lines without a letter (markup, numbers,
    navigation arrows), lines not decoded as UTF-8, lines equal to one of the English
    original's, and lines that look English."""
    root = _root(source)
    files = list(dict.fromkeys(source.files(root)))  # links resolved: each file once
    stats = dict(name=source.name, package=source.package, what=source.what,
                 files=len(files), lines_read=0, bytes_read=0, no_letter=0, not_utf8=0,
                 english_original=0, english=0, lines_kept=0, bytes_kept=0)
    if not files:
        stats["skipped"] = "no files"
        return [], stats
    stats["package"], stats["version"] = _package_version(source, root, files)
    english = _reference(source.reference)[0] if source.reference else set()
    if source.reference:
        stats["reference"] = _reference(source.reference)[1]
    kept = []
    for path in files:
        for line in source.read(path):
            line = _clean(line)
            if not line:
                continue
            data = line.encode("utf-8", errors="replace") + b"\n"
            stats["lines_read"] += 1
            stats["bytes_read"] += len(data)
            if "\ufffd" in line:
                stats["not_utf8"] += 1
            elif not any(ch.isalpha() for ch in line):
                stats["no_letter"] += 1
            elif line in english:
                stats["english_original"] += 1
            elif _looks_english(line):
                stats["english"] += 1
            else:
                kept.append(data)
                stats["lines_kept"] += 1
                stats["bytes_kept"] += len(data)
    share = stats["bytes_kept"] / stats["bytes_read"] if stats["bytes_read"] else 0.0
    stats["share_kept"] = round(share, 3)
    if share < MIN_TRANSLATED:
        stats["skipped"] = f"only {share:.0%} of its text is translated (stub)"
        return [], stats
    return kept, stats


def _language_all(language: str, rebuild: bool = False) -> Path:
    """All of ``language``'s text: its sources round robin, each line once."""
    path = cache_dir() / f"{language}-v{WORLD_RECIPE}-all.txt"
    if path.exists() and path.with_suffix(".json").exists() and not rebuild:
        return path
    sources = language_sources(language)

    def write(out) -> dict:
        used, stats = [], []
        for source in sources:
            lines, st = _translated_lines(source)
            stats.append(st)
            if lines:
                used.append((lines, st))
        total, count, counts, blocks = _interleave([iter(lines) for lines, _ in used], out, set())
        for (_, st), (n, size, dup_lines, dup_bytes) in zip(used, counts):
            st.update(lines=n, bytes=size, duplicate_lines=dup_lines, duplicate_bytes=dup_bytes)
        kept_lines = sum(st["lines_kept"] for _, st in used)
        kept_bytes = sum(st["bytes_kept"] for _, st in used)
        return dict(bytes=total, lines=count, duplicate_lines=kept_lines - count,
                    duplicate_bytes=kept_bytes - total,
                    duplicate_line_fraction=_fraction(kept_lines - count, kept_lines),
                    duplicate_byte_fraction=_fraction(kept_bytes - total, kept_bytes),
                    sources=stats, blocks=[[used[i][1]["name"], end] for i, end in blocks])

    info = dict(recipe=WORLD_RECIPE, language=language, block=BLOCK,
                min_translated=MIN_TRANSLATED)
    return _write_built(path, write, info)


def _multilingual_all(rebuild: bool = False) -> Path:
    """Every language's text, round robin in ``LANGUAGES`` order, each line once overall."""
    path = cache_dir() / f"multilingual-v{WORLD_RECIPE}-all.txt"
    if path.exists() and path.with_suffix(".json").exists() and not rebuild:
        return path
    parts = {language: _language_all(language, rebuild) for language in LANGUAGES}

    def write(out) -> dict:
        files = [open(p, "rb") for p in parts.values()]
        try:
            total, count, counts, blocks = _interleave(files, out, set())
        finally:
            for f in files:
                f.close()
        names = list(parts)
        languages = []
        for name, (n, size, dup_lines, dup_bytes) in zip(names, counts):
            m = manifest(parts[name])
            languages.append(dict(language=name, lines=n, bytes=size,
                                  duplicate_lines=dup_lines, duplicate_bytes=dup_bytes,
                                  sha256=m["sha256"],
                                  packages=sorted({f"{s['package']}={s.get('version', '?')}"
                                                   for s in m["sources"]
                                                   if "skipped" not in s})))
        dup_lines = sum(x["duplicate_lines"] for x in languages)
        dup_bytes = sum(x["duplicate_bytes"] for x in languages)
        return dict(bytes=total, lines=count, duplicate_lines_across_languages=dup_lines,
                    duplicate_bytes_across_languages=dup_bytes,
                    duplicate_line_fraction=_fraction(dup_lines, count + dup_lines),
                    duplicate_byte_fraction=_fraction(dup_bytes, total + dup_bytes),
                    languages=languages, blocks=[[names[i], end] for i, end in blocks])

    info = dict(recipe=WORLD_RECIPE, language="multilingual", block=BLOCK)
    return _write_built(path, write, info)
