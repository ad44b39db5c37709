"""The large corpus (``language="large"``, for sizes the English recipe cannot
fill): all of the English recipe, then the multilingual text, then
``EXTRA_SOURCES`` (more Debian documentation, each line once and none that
the English recipe holds), and only then the same text again from its start;
its manifest gives ``distinct_bytes`` and ``repeated_bytes``. Its first
100 MB are the English 100 MB corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from benches.corpora.build import (BLOCK, _digest, _fraction, _interleave, _write_built,
                                   manifest)
from benches.corpora.cache import cache_dir
from benches.corpora.debian import Source, _glob, _package_version, _root
from benches.corpora.english import _english_all
from benches.corpora.pages import _DoxygenText, _clean, _read_page, _read_roff, _read_text
from benches.corpora.world import _REFERENCES, _multilingual_all


# Above the English recipe's ~100 MB: first distinct text (all of the English recipe, then the
# multilingual text, then more Debian documentation, English mostly), and only then the
# same text again from its start. The manifest says how many bytes are distinct.

#: Bump when the large recipe or the extra sources change: part of every cache name.
LARGE_RECIPE = 1


def _sphinx(package: str, directory: str) -> Source:
    """A Sphinx manual's html pages, without its index, search and highlighted-source pages."""
    return Source(package, package, f"{package}: {directory}/**/*.html, visible text (not "
                  "_modules/, _sources/, genindex, search, py-modindex)",
                  _glob(directory, "/**/*.html",
                        exclude=r"/_(modules|sources|static)/|/(genindex|search|py-modindex)"
                                r"(-[a-z]+)?\.html$"),
                  _read_page, extract=True)


#: Doxygen's pages that are listings or indexes, not documentation.
_DOXYGEN_SKIP = (r"_source\.html$|-members\.html$|/dir_[0-9a-f]+\.html$|/(globals|functions|"
                 r"namespacemembers|files|annotated|hierarchy|classes|modules|pages|inherits|"
                 r"namespaces|deprecated|todo|bug)(_[a-z0-9_]+)?\.html$")


def _read_doxygen(path: Path) -> Iterator[str]:
    return _read_page(path, _DoxygenText)


def _doxygen(name: str, package: str, directory: str, what: str) -> Source:
    return Source(name, package, f"{what}, {directory}/**/*.html (not source listings, "
                  "member lists and indexes)",
                  _glob(directory, "/**/*.html", exclude=_DOXYGEN_SKIP), _read_doxygen,
                  extract=True)


#: More Debian documentation for the large corpus, in recipe order: the English originals of
#: the translations, English man pages, dictionaries, then API manuals (their repeated
#: boilerplate is removed by the line deduplication).
EXTRA_SOURCES = (
    *(_REFERENCES[family] for family in (
        "libreoffice", "gimp", "lilypond", "gnome", "reference", "developers", "maint", "faq",
        "install", "kicad", "gnucash", "aptitude", "edu")),
    Source("manpages-en", "manpages", "Linux man pages, English (roff, prose only)",
           _glob("/usr/share/man", "/man[1-8]/*"), _read_roff, extract=True),
    Source("manpages-dev-en", "manpages-dev", "Linux man pages for developers, English",
           _glob("/usr/share/man", "/man[1-8]/*"), _read_roff, extract=True),
    Source("wordnet", "dict-wn", "WordNet (English lexical database), wn.dict.dz",
           _glob("/usr/share/dictd", "/wn.dict.dz"), _read_text, extract=True),
    Source("foldoc", "dict-foldoc", "Free On-line Dictionary of Computing, foldoc.dict.dz",
           _glob("/usr/share/dictd", "/foldoc.dict.dz"), _read_text, extract=True),
    Source("jargon", "dict-jargon", "The Jargon File, jargon.dict.dz",
           _glob("/usr/share/dictd", "/jargon.dict.dz"), _read_text, extract=True),
    Source("rust", "rust-doc", "Rust documentation: books and library reference, html "
           "(not src/)", _glob("/usr/share/doc/rust-doc/html", "/**/*.html",
                              exclude=r"/html/src/|/(search|settings|help|all)\.html$"),
           _read_page, extract=True),
    Source("cppreference", "cppreference-doc-en-html", "cppreference.com C and C++ reference, "
           "html", _glob("/usr/share/cppreference/doc/html/en", "/**/*.html"), _read_page,
           extract=True),
    Source("openjdk", "openjdk-17-doc", "Java 17 API documentation (javadoc html, not the "
           "index)", _glob("/usr/share/doc/openjdk-17-jre-headless/api", "/**/*.html",
                           exclude=r"/index-files/|-(tree|use|summary)\.html$|/class-use/"),
           _read_page, extract=True),
    _sphinx("python-pandas-doc", "/usr/share/doc/python-pandas-doc/html"),
    _sphinx("python-scipy-doc", "/usr/share/doc/python-scipy-doc/html"),
    _sphinx("python-sklearn-doc", "/usr/share/doc/python-sklearn-doc/html"),
    _sphinx("python-statsmodels-doc", "/usr/share/doc/python-statsmodels-doc/html"),
    Source("sagemath", "sagemath-doc", "SageMath documentation, English html",
           _glob("/usr/share/doc/sagemath/html/en", "/**/*.html",
                 exclude=r"/_(modules|sources|static)/|/(genindex|search|py-modindex)"
                         r"(-[a-z]+)?\.html$"), _read_page, extract=True),
    Source("erlang", "erlang-doc", "Erlang/OTP documentation, html",
           _glob("/usr/share/doc/erlang-doc", "/**/*.html"), _read_page, extract=True),
    Source("racket", "racket-doc", "Racket documentation, html",
           _glob("/usr/share/doc/racket", "/**/*.html", exclude=r"/(doc-index|search)"),
           _read_page, extract=True),
    Source("ghc", "ghc-doc", "GHC user's guide and Haskell library documentation, html "
           "(not the highlighted sources)",
           _glob("/usr/share/doc/ghc-doc/html", "/**/*.html",
                 exclude=r"/src/|/doc-index|/(genindex|search)\.html$"),
           _read_page, extract=True),
    Source("scala", "scala-doc", "Scala 2.11 library API (scaladoc html)",
           _glob("/usr/share/doc/scala-2.11/api", "/**/*.html", exclude=r"/index(\.html|/)"),
           _read_page, extract=True),
    Source("lazarus", "lazarus-doc-2.2", "Lazarus and Free Pascal component reference (fpdoc "
           "html)", _glob("/usr/share/doc/lazarus/2.[0-9]*", "/**/*.html"), _read_page,
           extract=True),
    Source("petsc", "petsc3.18-doc", "PETSc manual pages and manual, html (not the "
           "source listings of src/ and include/)",
           _glob("/usr/share/doc/petsc3.18-doc/docs", "/**/*.html",
                 exclude=r"/docs/(src|include)/|/_(modules|sources|static)/|"
                         r"/(genindex|search)\.html$"),
           _read_page, extract=True),
    _doxygen("wxwidgets", "wx3.2-doc", "/usr/share/doc/wx3.2-doc/html", "wxWidgets 3.2 manual"),
    _doxygen("libstdc++", "libstdc++-12-doc", "/usr/share/doc/gcc-12-base/libstdc++",
             "GNU C++ library manual and API"),
    _doxygen("gnuradio", "gnuradio-doc", "/usr/share/doc/gnuradio-doc/html", "GNU Radio API"),
    _doxygen("libsbml", "libsbml5-doc", "/usr/share/doc/libsbml5", "libSBML API"),
    _doxygen("sumo", "sumo-doc", "/usr/share/doc/sumo/doxygen", "SUMO traffic simulation API"),
    _doxygen("trilinos", "trilinos-doc", "/usr/share/doc/trilinos", "Trilinos API"),
    _doxygen("vtk", "vtk9-doc", "/usr/share/doc/vtk9/doxygen", "VTK 9 API"),
)


def _extra_lines(source: Source, stats: dict) -> Iterator[bytes]:
    """The source's lines with a letter in them (cleaned as for other languages)."""
    root = _root(source)
    files = list(dict.fromkeys(source.files(root)))
    stats.update(name=source.name, package=source.package, what=source.what,
                 files=len(files), lines=0, bytes=0)
    if not files:
        stats["skipped"] = "no files"
        return
    stats["package"], stats["version"] = _package_version(source, root, files)
    for path in files:
        for line in source.read(path):
            line = _clean(line)
            if line and "\ufffd" not in line and any(ch.isalpha() for ch in line):
                yield line.encode("utf-8") + b"\n"


def _extra_all() -> Path:
    """``EXTRA_SOURCES`` round robin, each line once and none that the English recipe holds."""
    path = cache_dir() / f"extra-v{LARGE_RECIPE}-all.txt"
    if path.exists() and path.with_suffix(".json").exists():
        return path
    english = _english_all()

    def write(out) -> dict:
        seen = set()
        with open(english, "rb") as f:
            for data in f:
                seen.add(_digest(data))
        stats = [dict(name=s.name) for s in EXTRA_SOURCES]
        streams = [_extra_lines(s, st) for s, st in zip(EXTRA_SOURCES, stats)]
        total, count, counts, blocks = _interleave(streams, out, seen)
        for st, (n, size, dup_lines, dup_bytes) in zip(stats, counts):
            st.update(lines=n, bytes=size, duplicate_lines=dup_lines, duplicate_bytes=dup_bytes)
        dup_lines = sum(st["duplicate_lines"] for st in stats)
        dup_bytes = sum(st["duplicate_bytes"] for st in stats)
        return dict(bytes=total, lines=count, duplicate_lines=dup_lines,
                    duplicate_bytes=dup_bytes,
                    duplicate_line_fraction=_fraction(dup_lines, count + dup_lines),
                    duplicate_byte_fraction=_fraction(dup_bytes, total + dup_bytes),
                    sources=stats, blocks=[[EXTRA_SOURCES[i].name, end] for i, end in blocks])

    return _write_built(path, write, dict(recipe=LARGE_RECIPE, language="extra", block=BLOCK))


def _large(size: int) -> Path:
    """The first ``size`` bytes of: the English recipe, the multilingual text, the extra
    documentation, then all three again (and again) from the start; cut at a line boundary."""
    path = cache_dir() / f"large-v{LARGE_RECIPE}-{size}.txt"
    if path.exists() and path.with_suffix(".json").exists():
        return path
    parts = [_english_all(), _multilingual_all(), _extra_all()]
    distinct = sum(p.stat().st_size for p in parts)

    def write(out) -> dict:
        total = lines = 0
        used = []
        while True:
            for part in parts:
                room = size - total
                with open(part, "rb") as f:
                    if part.stat().st_size <= room:
                        while block := f.read(1 << 24):
                            out.write(block)
                            lines += block.count(b"\n")
                        taken = part.stat().st_size
                    else:
                        head = f.read(room)
                        taken = head.rfind(b"\n") + 1
                        out.write(head[:taken])
                        lines += head.count(b"\n", 0, taken)
                total += taken
                used.append(dict(name=part.name, bytes=taken))
                if taken < part.stat().st_size:
                    return dict(bytes=total, lines=lines, distinct_bytes=min(total, distinct),
                                repeated_bytes=max(0, total - distinct),
                                repeated_fraction=_fraction(max(0, total - distinct), total),
                                parts=used)

    info = dict(recipe=LARGE_RECIPE, language="large", requested=size,
                recipe_text="the English recipe (all of it), then the multilingual text, then "
                            "extra Debian documentation; then the same again from the start",
                sources=[dict(name=p.name, bytes=p.stat().st_size, sha256=manifest(p)["sha256"])
                         for p in parts])
    return _write_built(path, write, info)
