"""Real text for the benchmarks, assembled from Debian packages: English, other
languages, and a large corpus of both.

Never random letters: byte-pair statistics of random text look nothing like
those of prose, so every benchmark trains on text people wrote. The sources
(see ``SOURCES`` and docs/benchmarks.md) are Debian packages: documentation
packages installed with ``apt-get`` when missing, and one dictionary that is
downloaded with ``apt-get download`` and unpacked into the cache instead of
installed (its package would pull in a dictionary server).

The recipe, so that a corpus of a given size is the same bytes on every
machine with the same package versions:

* each source is a stream of lines from its files in sorted path order;
  trailing whitespace is stripped and blank lines are dropped;
* the corpus takes whole lines from each source in turn, about ``BLOCK``
  bytes at a time (round robin in ``SOURCES`` order, a source that runs dry
  drops out), so small and large corpora hold a similar mix;
* it stops before the first line that would pass the requested size: the
  corpus is cut at a line boundary, every line ends with ``\\n``, and each
  corpus is a prefix of every larger one.

Corpora are cached as ``english-v{RECIPE}-{bytes}.txt`` with a JSON manifest
(packages, versions, files, SHA-256) beside them, under
``$BYTEPAIR_BENCH_CACHE`` or ``~/.cache/bytepair-bench/``; a cached corpus is
returned without touching apt or the sources. Any other text file can stand in
with ``--corpus PATH`` (cut at a line boundary when a size is given).

Other languages (``LANGUAGES``, recipe ``WORLD_RECIPE``): Debian's translated
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
above, ``{language}-v2-all.txt``; a smaller size is a prefix of it. The
``multilingual`` text takes every language round robin in ``LANGUAGES``
order, about ``BLOCK`` bytes at a time, each line once overall.

The large corpus (``language="large"``, for sizes the English recipe cannot
fill): all of the English recipe, then the multilingual text, then
``EXTRA_SOURCES`` (more Debian documentation, each line once and none that
the English recipe holds), and only then the same text again from its start;
its manifest gives ``distinct_bytes`` and ``repeated_bytes``. Its first
100 MB are the English 100 MB corpus.

Command line (prints one path per size)::

    python -m benches.corpus --size 10MB
    python -m benches.corpus --size 0.1MB --size 1MB --size 10MB --size 100MB
    python -m benches.corpus --size 1MB --corpus my-text.txt
    python -m benches.corpus --size 1MB --info     # the manifest too
    python -m benches.corpus --language russian --size 10MB
    python -m benches.corpus --language japanese --size all --info
    python -m benches.corpus --language multilingual --size 100MB
    python -m benches.corpus --language large --size 1GB --info
    python -m benches.corpus --language synthetic --size 10GB   # SIMULATED text, any size
    python -m benches.corpus --list                # every language and its size
    python -m benches.corpus --parallel --info     # parallel text of eight languages

Sizes are decimal: ``1MB`` is 1,000,000 bytes, ``1MiB`` is 1,048,576.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from benches.corpora.cache import cache_dir, format_size, parse_size

#: Bump when the recipe or the sources change: it is part of every cache name.
RECIPE = 1
#: Bytes of whole lines taken from one source before moving to the next.
BLOCK = 16_384
#: The sizes the benchmarks use, in bytes.
STANDARD_SIZES = (100_000, 1_000_000, 10_000_000, 100_000_000)

# --------------------------------------------------------------------------- sources


class _Lines(html.parser.HTMLParser):
    """What the page parsers share: text gathered into ``lines``, one per block, white space
    folded, except inside verbatim elements (``_verbatim`` > 0), kept line by line."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._text: list[str] = []
        self._verbatim = 0

    def _flush(self) -> None:
        text = "".join(self._text)
        self._text = []
        if self._verbatim:
            self.lines.extend(text.split("\n"))
        else:
            self.lines.append(" ".join(text.split()))


def _read_page(path: Path, parser_class: type | None = None) -> Iterator[str]:
    """The lines of an HTML page, as ``parser_class`` (default ``_PageText``) finds them."""
    parser = (parser_class or _PageText)()
    with open(path, encoding="utf-8", errors="replace") as f:
        parser.feed(f.read())
    parser.close()
    parser._flush()
    return iter(parser.lines)


class _HTMLText(_Lines):
    """Visible text of an HTML page: one line per block element, <pre> kept verbatim."""

    BLOCKS = {"p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4",
              "h5", "h6", "table", "tr", "td", "th", "pre", "blockquote", "section", "title",
              "caption", "figcaption", "hr"}
    HIDDEN = {"script", "style", "head", "nav"}

    def __init__(self):
        super().__init__()
        self._hidden = 0
        self._anchor_hidden: list[bool] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            # Sphinx's "¶" permalinks are not text.
            hide = "headerlink" in (dict(attrs).get("class") or "")
            self._anchor_hidden.append(hide)
            self._hidden += hide
        elif tag in self.HIDDEN:
            self._hidden += 1
        elif tag in self.BLOCKS:
            self._flush()
        if tag == "pre":
            self._verbatim += 1

    def handle_endtag(self, tag):
        if tag == "a":
            if self._anchor_hidden and self._anchor_hidden.pop():
                self._hidden -= 1
        elif tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self.BLOCKS:
            self._flush()
        if tag == "pre":
            self._verbatim = max(0, self._verbatim - 1)

    def handle_data(self, data):
        if not self._hidden:
            self._text.append(data)


def _read_text(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix in (".gz", ".dz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        yield from f


def _read_html(path: Path) -> Iterator[str]:
    return _read_page(path, _HTMLText)


_VERSE_REF = re.compile(r"^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ ")


def _read_kjv(bible: Path) -> Iterator[str]:
    # `bible -f` prints one verse per line, prefixed by its reference ("Ge1:1 ").
    out = subprocess.run(
        [str(bible), "-f", "Genesis 1:1-Revelation 22:21"],
        check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    ).stdout
    for line in out.split("\n"):
        yield _VERSE_REF.sub("", line, count=1)


def _version_key(path: str):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


def _glob(directory: str, pattern: str, *, include: str | None = None,
          exclude: str | None = None):
    """Files matching ``pattern`` under ``directory`` (a glob such as
    ``/usr/share/doc/python3.[0-9]*``), sorted by path; when several
    directories match, the highest version that holds such files wins."""

    def files(root: Path) -> list[Path]:
        # Debian links some packages' doc directories to others' (python3.11-venv
        # -> python3.11): only real directories count.
        dirs = sorted((d for d in glob.glob(os.path.join(root, directory.lstrip("/")))
                       if os.path.isdir(d) and not os.path.islink(d)), key=_version_key)
        for d in reversed(dirs):
            found = sorted(p for p in glob.glob(d + pattern, recursive=True) if os.path.isfile(p))
            if include:
                found = [p for p in found if re.search(include, p)]
            if exclude:
                found = [p for p in found if not re.search(exclude, p)]
            if found:
                # Name each file by its real path (the one its package lists).
                return [Path(os.path.realpath(p)) for p in found]
        return []

    return files


def _bible_command(root: Path) -> list[Path]:
    found = shutil.which("bible")
    return [Path(found)] if found else []


@dataclass(frozen=True)
class Source:
    """One stream of lines: the Debian package that holds it, its files, their reader."""

    name: str
    package: str
    what: str
    files: Callable[[Path], list[Path]]
    read: Callable[[Path], Iterator[str]]
    #: Unpack the .deb into the cache instead of installing it.
    extract: bool = False
    #: Other languages only: the English original, whose lines are dropped from this one.
    reference: "Source | None" = None


SOURCES = (
    Source("kjv", "bible-kjv", "King James Bible, one verse per line, references stripped "
           "(the `bible -f` command)", _bible_command, _read_kjv),
    Source("python", "python3-doc", "Python documentation, reStructuredText sources "
           "(html/_sources/**/*.rst.txt)",
           _glob("/usr/share/doc/python3.[0-9]*", "/html/_sources/**/*.rst.txt"), _read_text),
    Source("linux", "linux-doc", "Linux kernel documentation, Documentation/**/*.rst.gz "
           "and *.txt.gz",
           _glob("/usr/share/doc/linux-doc-*", "/Documentation/**/*.gz",
                 include=r"\.(rst|txt)\.gz$"), _read_text),
    Source("perl", "perl-doc", "Perl documentation, pod/*.pod",
           _glob("/usr/share/perl/5.*", "/pod/*.pod"), _read_text),
    Source("postgresql", "postgresql-doc", "PostgreSQL manual, html/*.html (visible text)",
           _glob("/usr/share/doc/postgresql-doc-*", "/html/*.html"), _read_html),
    Source("vim", "vim-runtime", "Vim help files, doc/*.txt",
           _glob("/usr/share/vim/vim[0-9]*", "/doc/*.txt"), _read_text),
    Source("django", "python-django-doc", "Django documentation, html/**/*.html (visible "
           "text; not _modules/, genindex, search, py-modindex)",
           _glob("/usr/share/doc/python-django-doc", "/html/**/*.html",
                 exclude=r"/_modules/|/(genindex|search|py-modindex)\.html$"), _read_html),
    Source("git", "git-doc", "Git documentation, AsciiDoc sources (**/*.txt)",
           _glob("/usr/share/doc/git-doc", "/**/*.txt"), _read_text),
    Source("handbook", "debian-handbook", "The Debian Administrator's Handbook, en-US html",
           _glob("/usr/share/doc/debian-handbook/html/en-US", "/*.html"), _read_html),
    Source("gcide", "dict-gcide", "GNU Collaborative International Dictionary of English "
           "(Webster's 1913 and additions), gcide.dict.dz; unpacked, not installed",
           _glob("/usr/share/dictd", "/gcide.dict.dz"), _read_text, extract=True),
)


# --------------------------------------------------------------------------- packages


def _log(message: str) -> None:
    print(f"[benches.corpus] {message}", file=sys.stderr, flush=True)


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(cmd, capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, **kwargs)


def _installed_version(package: str) -> str | None:
    result = _run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package])
    status, _, version = result.stdout.partition("\t")
    return version if result.returncode == 0 and status.endswith(" installed") else None


def _owner(path: Path) -> tuple[str, str] | None:
    """The installed package holding ``path`` and its version (a metapackage's dependency)."""
    result = _run(["dpkg-query", "-S", str(path)])
    if result.returncode != 0:
        return None
    package = result.stdout.split(":", 1)[0].strip()
    return package, _installed_version(package) or "?"


_updated = False
#: Building a corpus may run apt-get only when this is "1": ``--fetch-corpora`` sets it. An
#: environment variable, so that the processes a benchmark starts inherit the user's answer.
FETCH_ENV = "BYTEPAIR_BENCH_FETCH"


class FetchNotAllowed(RuntimeError):
    """A corpus needs apt-get and the user did not pass ``--fetch-corpora``."""


def add_fetch_option(parser) -> None:
    """Add ``--fetch-corpora`` to a benchmark's argument parser (see :func:`apply_fetch_option`)."""
    parser.add_argument("--fetch-corpora", action="store_true",
                        help="let missing corpora be built with apt-get (installs or downloads "
                        "Debian documentation packages; may need root); without it a missing "
                        "corpus is an error. Corpora and downloaded packages are kept in "
                        "$BYTEPAIR_BENCH_CACHE, by default ~/.cache/bytepair-bench in your home "
                        "directory")


def apply_fetch_option(args) -> None:
    """Allow apt-get for this process and its children when ``--fetch-corpora`` was given."""
    if getattr(args, "fetch_corpora", False):
        os.environ[FETCH_ENV] = "1"


def _apt(args: list[str], **kwargs) -> None:
    """``apt-get ARGS``, after one ``apt-get update`` if the first try fails.

    Never without the user's word (``--fetch-corpora``): a benchmark must not
    change the machine behind their back.
    """
    global _updated
    if os.environ.get(FETCH_ENV) != "1":
        raise FetchNotAllowed(
            f"this corpus is not in the cache and building it needs `apt-get {' '.join(args)}`; "
            f"pass --fetch-corpora to allow that, or --corpus FILE to use a text file of your own")
    for attempt in range(2):
        result = _run(["apt-get", *args], **kwargs)
        if result.returncode == 0:
            return
        if attempt == 0 and not _updated:
            _log("apt-get failed; running apt-get update once and retrying")
            _run(["apt-get", "update"])
            _updated = True
            continue
        break
    hint = "" if os.geteuid() == 0 else " (not root: run it with sudo, or as root, once)"
    raise RuntimeError(f"`apt-get {' '.join(args)}` failed{hint}:\n{result.stdout[-2000:]}"
                       f"{result.stderr[-2000:]}")


#: Left out when a package is unpacked into the cache: nothing here reads them.
_SKIP_MEMBERS = ("*.png", "*.jpg", "*.jpeg", "*.gif", "*.svg", "*.svgz", "*.ico", "*.pdf",
                 "*.pdf.gz", "*.epub", "*.woff", "*.woff2", "*.ttf", "*.otf", "*.eot", "*.mp4",
                 "*.ogv", "*.webm", "*.zip")


def unpacked(package: str) -> Path:
    """The package's files under the cache's ``debs/PACKAGE/``, fetched with ``apt-get
    download`` and unpacked with ``dpkg-deb`` once (not installed; images, fonts and PDFs
    left out). ``.version`` there holds the package's version, ``.deb`` the file and its
    SHA-256."""
    debs = cache_dir() / "debs"
    root = debs / package
    if (root / ".version").exists():
        return root

    def found() -> list[Path]:
        return sorted(debs.glob(f"{package}_*.deb"), key=lambda p: _version_key(p.name))

    debs.mkdir(parents=True, exist_ok=True)
    if not found():
        _log(f"downloading {package} with apt-get download (unpacked, not installed)")
        _apt(["download", package], cwd=debs)
    deb = found()[-1]
    tmp = debs / f".{package}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    dump = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tmp), "--no-same-owner", "--no-same-permissions",
                    *(f"--exclude={pattern}" for pattern in _SKIP_MEMBERS)],
                   stdin=dump.stdout, check=True)
    dump.stdout.close()
    if dump.wait() != 0:
        raise RuntimeError(f"dpkg-deb could not read {deb}")
    version = _run(["dpkg-deb", "-f", str(deb), "Version"]).stdout.strip()
    (tmp / ".version").write_text(version + "\n")
    (tmp / ".deb").write_text(json.dumps(
        dict(file=deb.name, sha256=hashlib.sha256(deb.read_bytes()).hexdigest())) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    os.replace(tmp, root)
    return root


def _root(source: Source) -> Path:
    """Where the source's files are, installing or unpacking its package if needed."""
    if not source.extract:
        if _installed_version(source.package) is None or not source.files(Path("/")):
            _log(f"installing {source.package} with apt-get (source {source.name!r})")
            _apt(["install", "-y", "--no-install-recommends", source.package])
        return Path("/")
    return unpacked(source.package)


def _package_version(source: Source, root: Path, files: list[Path]) -> tuple[str, str]:
    if source.extract:
        return source.package, (root / ".version").read_text().strip()
    if source.name == "kjv":
        return "bible-kjv-text", _installed_version("bible-kjv-text") or "?"
    return _owner(files[0]) or (source.package, _installed_version(source.package) or "?")


def _lines(source: Source, stats: dict) -> Iterator[bytes]:
    """The source's lines, UTF-8 encoded with a final newline; counts what was used."""
    root = _root(source)
    files = source.files(root)
    if not files:
        raise RuntimeError(f"source {source.name!r}: no files found after installing "
                           f"{source.package}")
    package, version = _package_version(source, root, files)
    stats.update(name=source.name, package=package, version=version, what=source.what,
                 files_available=len(files), files_used=0, lines=0, bytes=0)
    for path in files:
        stats["files_used"] += 1
        for line in source.read(path):
            line = line.rstrip()
            if line:
                data = line.encode("utf-8", errors="replace") + b"\n"
                stats["lines"] += 1
                stats["bytes"] += len(data)
                yield data


# --------------------------------------------------------------------------- corpora


def _assemble(size: int | None, out) -> tuple[int, int, list[dict]]:
    """Write the first ``size`` bytes (cut at a line boundary) of the recipe to ``out``;
    ``None``: all of it."""
    stats = [dict(name=s.name) for s in SOURCES]
    streams = [(_lines(s, st), st) for s, st in zip(SOURCES, stats)]
    total = lines = 0
    while streams:
        alive = []
        for stream, st in streams:
            taken = 0
            for data in stream:
                if size is not None and total + len(data) > size:
                    st["lines"] -= 1  # read, but not used
                    st["bytes"] -= len(data)
                    return total, lines, [st for st in stats if "bytes" in st]
                out.write(data)
                total += len(data)
                lines += 1
                taken += len(data)
                if taken >= BLOCK:
                    alive.append((stream, st))
                    break
        streams = alive
    if size is None:
        return total, lines, stats
    raise RuntimeError(
        f"the sources hold only {total:,} bytes; {size:,} were requested "
        "(pass --corpus PATH to use other text)")


def corpus_path(size: int | str | None, corpus: str | os.PathLike | None = None,
                *, rebuild: bool = False, language: str = "english", clip: bool = False) -> Path:
    """Path of the corpus of ``size`` bytes, built and cached on first use.

    With ``corpus``, that file stands in for the English recipe: returned as
    is when ``size`` is None or covers it, else its first ``size`` bytes cut
    at a line boundary, cached.

    ``language``: ``"english"`` (the English recipe), a key of ``LANGUAGES``
    or ``"multilingual"`` (the non-English recipe: ``size`` None means all of
    it; a size beyond it is an error unless ``clip``, which returns all of
    it), or ``"large"`` (the English recipe, then the multilingual text, then
    ``EXTRA_SOURCES``, then the same again: any size).
    """
    size = None if size is None else parse_size(size)
    if corpus is not None:
        return _custom_prefix(Path(corpus), size)
    if language != "english":
        return _other_path(language, size, rebuild=rebuild, clip=clip)
    if size is None:
        raise ValueError("a size is needed for the English corpus")
    path = cache_dir() / f"english-v{RECIPE}-{size}.txt"
    manifest = path.with_suffix(".json")
    if path.exists() and manifest.exists() and not rebuild:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            total, lines, stats = _assemble(size, out)
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info = dict(recipe=RECIPE, block=BLOCK, requested=size, bytes=total, lines=lines,
                sha256=digest, built_seconds=round(time.perf_counter() - started, 2),
                sources=stats)
    manifest.write_text(json.dumps(info, indent=1) + "\n")
    _log(f"built {path} ({total:,} bytes, {lines:,} lines) in {info['built_seconds']} s")
    return path


def _custom_prefix(path: Path, size: int | None) -> Path:
    path = path.expanduser().resolve()
    st = path.stat()
    if size is None or st.st_size <= size:
        return path
    tag = hashlib.sha256(f"{path}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:12]
    out = cache_dir() / f"custom-{path.stem}-{tag}-{size}.txt"
    if out.exists():
        return out
    with open(path, "rb") as f:
        head = f.read(size)
    cut = head.rfind(b"\n")
    if cut < 0:
        raise ValueError(f"{path}: no line ends within the first {size:,} bytes")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(head[: cut + 1])
    os.replace(tmp, out)
    return out


# --------------------------------------------------------------------------- other languages
#
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


class _PageText(_Lines):
    """Visible text of an HTML page or a GNOME help (Mallard) page: one line per block
    element, ``<pre>`` and ``<screen>`` line by line, without headers, footers, navigation
    bars, tables of contents and page metadata."""

    BLOCKS = _HTMLText.BLOCKS | {
        "article", "main", "figure", "details", "summary", "thead", "tbody", "tfoot",
        # Mallard
        "page", "subtitle", "desc", "item", "list", "steps", "terms", "tree", "note",
        "synopsis", "example", "quote", "cite", "media", "links"}
    VERBATIM = {"pre", "screen"}
    HIDDEN = {"script", "style", "head", "nav", "header", "footer", "aside", "noscript",
              "template", "svg", "math", "object", "info", "comment"}
    #: Hidden by class: DocBook's and Texinfo's navigation, Sphinx's sidebars, LibreOffice's
    #: debug footer, tables of contents and indexes.
    HIDDEN_CLASSES = {"navheader", "navfooter", "related", "sphinxsidebar", "footer",
                      "headerlink", "reportbug", "toc", "index", "indexdiv", "breadcrumbs",
                      "nav_table", "footer_version", "footer_report", "debug", "contents",
                      "toc_current", "toc_uplink", "navigation", "nav-bar", "navbar"}
    #: Only elements that are always closed can be hidden by class.
    CLOSED = {"div", "table", "span", "a", "ul", "ol", "section", "nav", "dl"}
    VOID = {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "embed",
            "param", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self._hidden: str | None = None  # the hidden element's tag
        self._depth = 0  # its nesting depth

    def handle_starttag(self, tag, attrs):
        if self._hidden is not None:
            self._depth += tag == self._hidden
            return
        if tag not in self.VOID and (tag in self.HIDDEN or (
                tag in self.CLOSED
                and set((dict(attrs).get("class") or "").split()) & self.HIDDEN_CLASSES)):
            self._hidden, self._depth = tag, 1
            return
        if tag in self.BLOCKS:
            self._flush()
        if tag in self.VERBATIM:
            self._verbatim += 1

    def handle_endtag(self, tag):
        if self._hidden is not None:
            if tag == self._hidden:
                self._depth -= 1
                if not self._depth:
                    self._hidden = None
            return
        if tag in self.BLOCKS:
            self._flush()
        if tag in self.VERBATIM:
            self._flush()
            self._verbatim = max(0, self._verbatim - 1)

    def handle_data(self, data):
        if self._hidden is None:
            self._text.append(data)


class _DoxygenText(_PageText):
    """A Doxygen page's text: its body is ``<div class="contents">``, its navigation tabs."""

    HIDDEN_CLASSES = (_PageText.HIDDEN_CLASSES - {"contents"}) | {"tabs", "navpath", "directory"}


#: roff's named characters (``\\(xx``, ``\\[xx]``) that occur in man pages.
_ROFF_CHARS = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "aq": "'", "dq": '"', "lq": "“", "rq": "”",
    "oq": "‘", "cq": "’", "Bq": "„", "bq": "‚", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›",
    "bu": "•", "co": "©", "rg": "®", "tm": "™", "de": "°", "ga": "`", "aa": "´", "ti": "~",
    "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "br": "|", "lB": "[", "rB": "]", "lC": "{",
    "rC": "}", "la": "⟨", "ra": "⟩", "<=": "≤", ">=": "≥", "!=": "≠", "==": "≡", "mu": "×",
    "di": "÷", "+-": "±", "->": "→", "<-": "←", "ua": "↑", "da": "↓", "sc": "§", "ps": "¶",
    "pc": "·", "at": "@", "sh": "#", "Do": "$", "Eu": "€", "eu": "€", "ct": "¢", "Po": "£",
    "Ye": "¥", "fm": "′", "sd": "″", "dg": "†", "dd": "‡", "no": "¬", "sq": "□", "OK": "✓",
    "ss": "ß", "'e": "é", "`e": "è", ":u": "ü", ":o": "ö", ":a": "ä", "'a": "á", "'o": "ó",
}
#: roff strings (``\\*x``, ``\\*(xx``, ``\\*[xx]``) of man(7) and mdoc(7).
_ROFF_STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™", "Lq": "“", "Rq": "”"}
_ROFF_ESCAPE = re.compile(r"""\\(?:
      \((?P<two>..)
    | \[(?P<bracket>[^\]]*)\]
    | \*(?:\((?P<s2>..)|\[(?P<sb>[^\]]*)\]|(?P<s1>.))
    | [fFgkmnMYV](?:\(..|\[[^\]]*\]|.)
    | s[-+]?(?:\(\d\d|\[\d+\]|\d\d?)
    | [hvwxlLbDoXNRAZCSB]'[^']*'
    | (?P<one>.)
    )""", re.VERBOSE | re.DOTALL)
_ROFF_ONE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t",
             "'": "´", "`": "`", ".": ".", "_": "_"}
#: Requests and macros that end a paragraph and print nothing.
_ROFF_BREAKS = {"PP", "LP", "P", "sp", "br", "RS", "RE", "in", "ti", "bp", "ne", "HP", "PD",
                "Pp", "Lp", "Bl", "El", "Bd", "Ed", "Ss", "YS", "SY", "OP"}
#: Macros whose arguments are text (font changes; mdoc's inline macros).
_ROFF_ALTERNATING = {"BR", "RB", "IR", "RI", "BI", "IB"}
_ROFF_TEXT = {"B", "I", "SM", "SB", "Nm", "Fl", "Ar", "Pa", "Cm", "Xr", "Em", "Sy", "Li", "Ev",
              "Va", "Fn", "Ft", "Dv", "Er", "Ic", "Ql", "Dq", "Sq", "Pq", "Op", "It", "Nd", "An",
              "Ad", "Ms", "Tn", "Ux", "Bx", "Aq", "Brq", "Bq", "Qq", "Lk", "Mt", "UR", "MT"}


def _roff_unescape(text: str) -> str:
    def one(m: re.Match) -> str:
        if m["two"] is not None or m["bracket"] is not None:
            name = m["two"] if m["two"] is not None else m["bracket"]
            if re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
                return chr(int(name[1:], 16))
            return _ROFF_CHARS.get(name, "")
        name = m["s2"] or m["sb"] or m["s1"]
        if name is not None:
            return _ROFF_STRINGS.get(name, "")
        if m["one"] is not None:
            return _ROFF_ONE.get(m["one"], "")
        return ""

    return _ROFF_ESCAPE.sub(one, text)


def _roff_args(args: str) -> list[str]:
    """A macro's arguments: split at spaces, ``"..."`` grouping (``""`` inside is a quote).

    >>> _roff_args('foo "bar baz" "a ""b"" c" d')
    ['foo', 'bar baz', 'a "b" c', 'd']
    """
    return [(m[1].replace('""', '"') if m[1] is not None else m[2])
            for m in re.finditer(r'"((?:[^"]|"")*)"?|(\S+)', args)]


def _read_roff(path: Path) -> Iterator[str]:
    """A man page's prose, one paragraph per line: macros and escapes dropped, the words
    of font macros kept, tables (tbl) row by row, no-fill blocks line by line.

    >>> import tempfile
    >>> page = Path(tempfile.mkdtemp()) / "x.1"
    >>> _ = page.write_text('.TH X 1\\n.SH NAME\\nx \\\\- do\\n.SH DESCRIPTION\\n'
    ...                     '.B x\\nreads\\n.IR file s\\n\\\\(em all of them.\\n.PP\\nNext.\\n')
    >>> list(_read_roff(page))
    ['NAME', 'x - do', 'DESCRIPTION', 'x reads files — all of them.', 'Next.']
    """
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        source = f.read()
    out: list[str] = []
    paragraph: list[str] = []
    nofill = tag_next = False
    table = None  # None, "format" (tbl options and format lines) or "data"
    skip_until = None

    def flush():
        if paragraph:
            out.append(" ".join(" ".join(paragraph).split()))
            paragraph.clear()

    def text(words: str):
        nonlocal tag_next
        if nofill or table:
            out.append(words)
        elif tag_next:
            flush()
            out.append(" ".join(words.split()))
            tag_next = False
        else:
            paragraph.append(words)

    for raw in source.split("\n"):
        line = re.sub(r'\\".*|\\#.*', "", raw)
        if skip_until is not None:
            if line.startswith(skip_until):
                skip_until = None
            continue
        if line[:1] in (".", "'"):
            m = re.match(r"[.'][ \t]*(\S*)[ \t]*(.*)", line)
            name, args = m[1], m[2]
            if name in ("de", "de1", "am", "ig"):
                skip_until = ".."
            elif name == "TS":
                flush()
                table = "format"
            elif name == "TE":
                table = None
            elif name in ("SH", "SS", "Sh"):
                flush()
                if args.strip():
                    out.append(" ".join(_roff_unescape(" ".join(_roff_args(args))).split()))
                else:
                    tag_next = True
            elif name == "TP":
                flush()
                tag_next = True
            elif name == "IP":
                flush()
                words = _roff_args(args)
                if words:
                    out.append(_roff_unescape(words[0]))
            elif name in ("nf", "EX"):
                flush()
                nofill = True
            elif name in ("fi", "EE"):
                flush()
                nofill = False
            elif name in _ROFF_BREAKS:
                flush()
            elif name in _ROFF_ALTERNATING or name in _ROFF_TEXT:
                words = _roff_args(args)
                if words:
                    joined = ("" if name in _ROFF_ALTERNATING else " ").join(words)
                    text(_roff_unescape(joined))
            continue  # any other request prints nothing we want
        if table == "format":
            if line.rstrip().endswith("."):
                table = "data"
            continue
        if table == "data":
            cells = [_roff_unescape(c.replace("T{", "").replace("T}", "")).strip()
                     for c in line.split("\t")]
            out.append(" ".join(c for c in cells if c))
            continue
        if not line.strip():
            if not nofill:
                flush()
            continue
        text(_roff_unescape(line))
    flush()
    return iter(out)


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


#: Words frequent in English and rare elsewhere (none of them a word of the other languages:
#: not "to", "of", "is", "on", "an", "for", "also", "in", "die").
_ENGLISH_WORDS = frozenset(
    "the and that with this are from which you your will be it not or when if has have can "
    "there their they these been would should into only than other such what more about "
    "must does how use used using".split())
_WORD = re.compile(r"\w+")
#: Characters that some readers take for line ends, and other control characters.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]")


def _looks_english(line: str) -> bool:
    """An English sentence left untranslated (or an old English original).

    >>> _looks_english("The source package is the foundation of everything in Debian.")
    True
    >>> _looks_english("Das Quellpaket ist die Grundlage von allem in Debian.")
    False
    """
    words = _WORD.findall(line.lower())
    english = sum(w in _ENGLISH_WORDS for w in words)
    return english >= 2 and english >= 0.15 * len(words)


def _clean(line: str) -> str:
    return _CONTROL.sub(" ", line).rstrip()


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


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=8).digest()


def _interleave(streams: list[Iterator[bytes]], out,
                seen: set | None) -> tuple[int, int, list, list]:
    """Round robin over ``streams``, about ``BLOCK`` bytes of whole lines from each in turn,
    writing each line not in ``seen`` (then adding it) to ``out``. Returns the bytes and
    lines written, per stream ``[lines, bytes, duplicate lines, duplicate bytes]``, and the
    blocks as ``[stream index, end offset]``."""
    counts = [[0, 0, 0, 0] for _ in streams]
    blocks: list[list[int]] = []
    total = lines = 0
    alive = list(enumerate(streams))
    while alive:
        still = []
        for index, stream in alive:
            taken = 0
            for data in stream:
                if seen is not None:
                    key = _digest(data)
                    if key in seen:
                        counts[index][2] += 1
                        counts[index][3] += len(data)
                        continue
                    seen.add(key)
                out.write(data)
                total += len(data)
                lines += 1
                taken += len(data)
                counts[index][0] += 1
                counts[index][1] += len(data)
                if taken >= BLOCK:
                    still.append((index, stream))
                    break
            if taken:
                if blocks and blocks[-1][0] == index:
                    blocks[-1][1] = total
                else:
                    blocks.append([index, total])
        alive = still
    return total, lines, counts, blocks


def _write_built(path: Path, write, info: dict, blocks: list | None = None) -> Path:
    """Build ``path`` with ``write(out) -> dict`` into a temporary file, then its manifest
    (``info``, what ``write`` returned, SHA-256, build time) and block map beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            info.update(write(out))
        info["sha256"] = _sha256(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    info["built_seconds"] = round(time.perf_counter() - started, 2)
    blocks = info.pop("blocks", None)
    if blocks is not None:
        path.with_suffix(".blocks.json").write_text(json.dumps(blocks) + "\n")
    path.with_suffix(".json").write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n")
    _log(f"built {path} ({info['bytes']:,} bytes, {info['lines']:,} lines) in "
         f"{info['built_seconds']} s")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


def _fraction(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


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


def _prefix_of(full: Path, size: int, name: str) -> Path:
    """The first ``size`` bytes of ``full`` cut at a line boundary, cached as ``name``, with
    a manifest that says how many bytes of each block map entry it holds."""
    out = cache_dir() / name
    if out.exists() and out.with_suffix(".json").exists():
        return out
    with open(full, "rb") as f:
        head = f.read(size)
    cut = head.rfind(b"\n") + 1
    if not cut:
        raise ValueError(f"{full}: no line ends within the first {size:,} bytes")
    head = head[:cut]
    whole = manifest(full)
    parts: dict[str, list[int]] = {}
    blocks_file = full.with_suffix(".blocks.json")
    if blocks_file.exists():
        start = 0
        for part, end in json.loads(blocks_file.read_text()):
            if start >= cut:
                break
            piece = parts.setdefault(part, [0, 0])
            piece[0] += head.count(b"\n", start, min(end, cut))
            piece[1] += min(end, cut) - start
            start = end

    def write(f) -> dict:
        f.write(head)
        return dict(bytes=len(head), lines=head.count(b"\n"))

    info = dict(recipe=whole.get("recipe"), language=whole.get("language"), requested=size,
                prefix_of=full.name, prefix_of_sha256=whole.get("sha256"),
                parts=[dict(name=k, lines=v[0], bytes=v[1]) for k, v in parts.items()])
    return _write_built(out, write, info)


# --------------------------------------------------------------------------- the large corpus
#
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


def _english_all() -> Path:
    """All of the English recipe (every source to its end), cached like its corpora."""
    path = cache_dir() / f"english-v{RECIPE}-all.txt"
    if path.exists() and path.with_suffix(".json").exists():
        return path

    def write(out) -> dict:
        total, lines, stats = _assemble(None, out)
        return dict(bytes=total, lines=lines, sources=stats)

    return _write_built(path, write, dict(recipe=RECIPE, language="english", block=BLOCK))


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
def _other_path(language: str, size: int | None, *, rebuild: bool, clip: bool) -> Path:
    cache = cache_dir()
    if language in ("synthetic", "synthetic-web"):  # simulated text: benches/corpora/synthetic.py
        if size is None:
            raise ValueError(f"a size is needed for the {language} corpus")
        from benches.corpora import synthetic
        return synthetic.corpus_path(size, setting=language.partition("-")[2] or "english",
                                     rebuild=rebuild)
    if language == "large":
        if size is None:
            raise ValueError("a size is needed for the large corpus")
        if rebuild:
            _remove(cache / f"large-v{LARGE_RECIPE}-{size}.txt")
        return _large(size)
    if language != "multilingual" and language not in LANGUAGES:
        raise ValueError(f"no language {language!r}: english, multilingual, large or one of "
                         f"{', '.join(LANGUAGES)}")
    if rebuild:
        for old in cache.glob(f"{language}-v{WORLD_RECIPE}-*.txt"):
            _remove(old)
    full = _multilingual_all() if language == "multilingual" else _language_all(language)
    available = full.stat().st_size
    if size is None or size >= available:
        if size is not None and size > available and not clip:
            raise ValueError(f"the {language} sources hold only {available:,} bytes; "
                             f"{size:,} were requested (ask for all of it with size None, "
                             "--size all on the command line)")
        return full
    return _prefix_of(full, size, f"{language}-v{WORLD_RECIPE}-{size}.txt")


def _remove(path: Path) -> None:
    for p in (path, path.with_suffix(".json"), path.with_suffix(".blocks.json")):
        p.unlink(missing_ok=True)


def available(language: str) -> int:
    """Bytes of all of ``language``'s text (a key of ``LANGUAGES``, or ``"multilingual"``),
    built on first use."""
    return corpus_path(None, language=language).stat().st_size


def manifest(path: Path) -> dict:
    """The manifest written beside a built corpus, or a minimal one for any other file."""
    side = Path(path).with_suffix(".json")
    if side.exists():
        return json.loads(side.read_text())
    return dict(recipe=None, bytes=Path(path).stat().st_size, sources=[dict(name=str(path))])


def load(size: int | str | None, corpus: str | os.PathLike | None = None) -> bytes:
    """The corpus's bytes (see :func:`corpus_path`)."""
    return corpus_path(size, corpus).read_bytes()


def documents(data: bytes) -> list[bytes]:
    """One document per line, without the line ends (byte mode's barriers).

    >>> documents(b"In the beginning\\nGod created\\n")
    [b'In the beginning', b'God created']
    """
    docs = data.split(b"\n")
    if docs and not docs[-1]:
        docs.pop()
    return docs


# --------------------------------------------------------------------------- catalogs

#: Parallel text (``catalogs``): Debian's translation catalogs, compiled gettext ``.mo``
#: files under ``/usr/share/locale/LOCALE/LC_MESSAGES`` of the installed packages.
#: English is the catalogs' msgids (taken from one locale's catalogs, ``CATALOG_ENGLISH_FROM``).
LOCALE_DIR = Path("/usr/share/locale")
CATALOG_ENGLISH_FROM = "fr"
CATALOG_RECIPE = 1


def read_mo(path: str | os.PathLike) -> dict[bytes, bytes]:
    """The messages of a compiled gettext catalog, msgid -> msgstr (both UTF-8 as written).

    A ``.mo`` file is a header, then two tables of (length, offset) pairs: the
    originals, then the translations. Plural forms stay joined by NUL bytes.
    """
    import struct

    data = Path(path).read_bytes()
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _, n, originals, translations = struct.unpack(order + "4I", data[4:20])
    messages = {}
    for i in range(n):
        length, offset = struct.unpack(order + "2I", data[originals + 8 * i:originals + 8 * i + 8])
        tlength, toffset = struct.unpack(order + "2I",
                                         data[translations + 8 * i:translations + 8 * i + 8])
        messages[data[offset:offset + length]] = data[toffset:toffset + tlength]
    return messages


def _catalog_messages(locale: str) -> dict[tuple[str, bytes], bytes]:
    """(domain, msgid) -> text of every translated message of ``locale`` ("en": the msgids)."""
    source = CATALOG_ENGLISH_FROM if locale == "en" else locale
    out = {}
    for path in sorted((LOCALE_DIR / source / "LC_MESSAGES").glob("*.mo")):
        for msgid, msgstr in read_mo(path).items():
            # Skip the header (empty msgid), plural and context entries (NUL, EOT inside).
            if not msgid or not msgstr or b"\x00" in msgid or b"\x04" in msgid:
                continue
            out[(path.stem, msgid)] = msgid if locale == "en" else msgstr
    return out


def _catalog_lines(text: bytes) -> list[bytes]:
    return [line.strip() for line in text.decode("utf-8", "replace").encode().split(b"\n")
            if line.strip()]


def catalogs(locales: list[str], directory: Path | None = None) -> Path:
    """Training, dev and held-out text per locale from the translation catalogs; returns the
    directory holding ``train/LOCALE.txt``, ``dev/LOCALE.txt`` and ``heldout/LOCALE.txt``
    (one message line per line) and ``manifest.json``.

    A *parallel* message is one (domain, msgid) that every locale translates. Its
    SHA-256 digest puts one in eight of them in the dev set and one in eight in the
    held-out set, the same message in every locale (parallel text: same content, each
    language's own translation). Everything else each locale has, parallel or not,
    is its training text, with the dev and held-out messages' lines left out wherever
    they occur. Nothing is repeated or machine-translated.
    """
    name = f"catalogs-v{CATALOG_RECIPE}-" + "-".join(locales)
    directory = directory or cache_dir() / name
    if (directory / "manifest.json").exists():
        return directory
    messages = {locale: _catalog_messages(locale) for locale in locales}
    shared = set.intersection(*(set(m) for m in messages.values()))
    held: dict[str, set] = {"dev": set(), "heldout": set()}
    for key in sorted(shared):
        digest = hashlib.sha256(key[0].encode() + b"\0" + key[1]).digest()[0] % 8
        if digest < 2:
            held["dev" if digest == 0 else "heldout"].add(key)
    stats = {}
    for part in ("train", "dev", "heldout"):
        (directory / part).mkdir(parents=True, exist_ok=True)
    for locale in locales:
        kept_out = {line for part in held.values() for key in part
                    for line in _catalog_lines(messages[locale][key])}
        parts = {"train": [], "dev": [], "heldout": []}
        seen = set()
        for key in sorted(messages[locale]):
            lines = _catalog_lines(messages[locale][key])
            part = next((p for p, keys in held.items() if key in keys), "train")
            for line in lines:
                if part == "train" and (line in kept_out or line in seen):
                    continue  # each training line once; no dev or held-out line in training
                seen.add(line)
                parts[part].append(line)
        for part, lines in parts.items():
            (directory / part / f"{locale}.txt").write_bytes(b"".join(l + b"\n" for l in lines))
        stats[locale] = {part: sum(len(l) + 1 for l in lines) for part, lines in parts.items()}
    info = {"recipe": CATALOG_RECIPE, "source": str(LOCALE_DIR) + "/LOCALE/LC_MESSAGES/*.mo",
            "english_from": CATALOG_ENGLISH_FROM, "parallel_messages": len(shared),
            "dev_messages": len(held["dev"]), "heldout_messages": len(held["heldout"]),
            "bytes": stats}
    (directory / "manifest.json").write_text(json.dumps(info, indent=1))
    return directory


# --------------------------------------------------------------------------- parallel documentation
#
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.corpus",
        description="Build (once) and print the path of real-text benchmark corpora. They are "
        "cached in $BYTEPAIR_BENCH_CACHE, by default ~/.cache/bytepair-bench in your home "
        "directory.")
    parser.add_argument("--size", action="append", default=[],
                        help="corpus size, e.g. 0.1MB, 10MB, 100MB, or 'all' (every byte of a "
                             "non-English language); repeatable")
    parser.add_argument("--language", default="english", metavar="NAME",
                        help="english (default), multilingual, large, synthetic, "
                             "synthetic-web (simulated: benches/corpora/synthetic.py), or a language: "
                             + ", ".join(LANGUAGES))
    parser.add_argument("--clip", action="store_true",
                        help="a size beyond a language's text gives all of it, not an error")
    parser.add_argument("--corpus", help="use this text file instead of the English recipe")
    parser.add_argument("--rebuild", action="store_true", help="ignore the cache")
    parser.add_argument("--info", action="store_true", help="print the manifest after each path")
    parser.add_argument("--list", action="store_true",
                        help="build every language's text and print its size")
    parser.add_argument("--parallel", action="store_true",
                        help="build the parallel training, dev and held-out text of "
                             + ", ".join(PARALLEL_LOCALES) + " (see parallel()) and print "
                             "its directory; downloads Debian packages (LibreOffice help and "
                             "translations, gcc-12-locales, fortunes-zh) with apt-get download "
                             "into the cache (needs --fetch-corpora)")
    add_fetch_option(parser)
    args = parser.parse_args(argv)
    apply_fetch_option(args)
    if args.parallel:
        try:
            path = parallel()
        except FetchNotAllowed as e:
            parser.error(str(e))
        print(path, flush=True)
        if args.info:
            print((path / "manifest.json").read_text())
        return 0
    if args.list:
        for language in (*LANGUAGES, "multilingual"):
            path = corpus_path(None, language=language)
            m = manifest(path)
            print(f"{language:20} {m['bytes'] / 1e6:9.2f} MB  {m['lines']:>9,} lines  "
                  f"duplicate lines dropped: {m.get('duplicate_line_fraction', 0):.1%}  {path}",
                  flush=True)
        return 0
    sizes = args.size or ([None] if args.corpus else [])
    if not sizes:
        parser.error("give --size (and/or --corpus), or --list")
    for size in sizes:
        if size == "all":
            size = None
        try:
            path = corpus_path(size, args.corpus, rebuild=args.rebuild,
                               language=args.language, clip=args.clip)
        except (ValueError, FetchNotAllowed) as e:
            parser.error(str(e))
        print(path, flush=True)
        if args.info:
            print(json.dumps(manifest(path), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
