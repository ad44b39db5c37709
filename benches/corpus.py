"""Real English text for the benchmarks, assembled from Debian packages.

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

Command line (prints one path per size)::

    python -m benches.corpus --size 10MB
    python -m benches.corpus --size 0.1MB --size 1MB --size 10MB --size 100MB
    python -m benches.corpus --size 1MB --corpus my-text.txt
    python -m benches.corpus --size 1MB --info     # the manifest too

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

#: Bump when the recipe or the sources change: it is part of every cache name.
RECIPE = 1
#: Bytes of whole lines taken from one source before moving to the next.
BLOCK = 16_384
#: The sizes the benchmarks use, in bytes.
STANDARD_SIZES = (100_000, 1_000_000, 10_000_000, 100_000_000)

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
          "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_size(text: str | int) -> int:
    """Bytes from ``"0.1MB"``, ``"10 MB"``, ``"512KiB"`` or a plain number.

    >>> parse_size("0.1MB"), parse_size("1 MiB"), parse_size("250")
    (100000, 1048576, 250)
    """
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (try 0.1MB, 10MB, 512KiB)")
    size = round(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError(f"size must be positive, got {text!r}")
    return size


def format_size(size: int) -> str:
    """``100000`` -> ``"0.1 MB"``; decimal megabytes, as in the tables.

    >>> format_size(100_000), format_size(10_000_000), format_size(1234)
    ('0.1 MB', '10 MB', '0.001234 MB')
    """
    return f"{size / 10**6:g} MB"


def cache_dir() -> Path:
    """``$BYTEPAIR_BENCH_CACHE``, else ``~/.cache/bytepair-bench``."""
    override = os.environ.get("BYTEPAIR_BENCH_CACHE")
    return Path(override).expanduser() if override else Path.home() / ".cache" / "bytepair-bench"


# --------------------------------------------------------------------------- sources


class _HTMLText(html.parser.HTMLParser):
    """Visible text of an HTML page: one line per block element, <pre> kept verbatim."""

    BLOCKS = {"p", "div", "br", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4",
              "h5", "h6", "table", "tr", "td", "th", "pre", "blockquote", "section", "title",
              "caption", "figcaption", "hr"}
    HIDDEN = {"script", "style", "head", "nav"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._text: list[str] = []
        self._hidden = 0
        self._pre = 0
        self._anchor_hidden: list[bool] = []

    def _flush(self) -> None:
        text = "".join(self._text)
        self._text = []
        if self._pre:
            self.lines.extend(text.split("\n"))
        else:
            self.lines.append(" ".join(text.split()))

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
            self._pre += 1

    def handle_endtag(self, tag):
        if tag == "a":
            if self._anchor_hidden and self._anchor_hidden.pop():
                self._hidden -= 1
        elif tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self.BLOCKS:
            self._flush()
        if tag == "pre":
            self._pre = max(0, self._pre - 1)

    def handle_data(self, data):
        if not self._hidden:
            self._text.append(data)


def _read_text(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix in (".gz", ".dz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        yield from f


def _read_html(path: Path) -> Iterator[str]:
    parser = _HTMLText()
    with open(path, encoding="utf-8", errors="replace") as f:
        parser.feed(f.read())
    parser.close()
    parser._flush()
    return iter(parser.lines)


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


def _apt(args: list[str], **kwargs) -> None:
    """``apt-get ARGS``, after one ``apt-get update`` if the first try fails."""
    global _updated
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


def _root(source: Source) -> Path:
    """Where the source's files are, installing or unpacking its package if needed."""
    if not source.extract:
        if _installed_version(source.package) is None or not source.files(Path("/")):
            _log(f"installing {source.package} with apt-get (source {source.name!r})")
            _apt(["install", "-y", "--no-install-recommends", source.package])
        return Path("/")
    root = cache_dir() / "debs" / source.package
    if not source.files(root):
        debs = cache_dir() / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        _log(f"downloading {source.package} with apt-get download (unpacked, not installed)")
        _apt(["download", source.package], cwd=debs)
        deb = sorted(debs.glob(f"{source.package}_*.deb"), key=lambda p: _version_key(p.name))[-1]
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
        (root / ".version").write_text(
            _run(["dpkg-deb", "-f", str(deb), "Version"]).stdout.strip() + "\n")
    return root


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


def _assemble(size: int, out) -> tuple[int, int, list[dict]]:
    """Write the first ``size`` bytes (cut at a line boundary) of the recipe to ``out``."""
    stats = [dict(name=s.name) for s in SOURCES]
    streams = [(_lines(s, st), st) for s, st in zip(SOURCES, stats)]
    total = lines = 0
    while streams:
        alive = []
        for stream, st in streams:
            taken = 0
            for data in stream:
                if total + len(data) > size:
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
    raise RuntimeError(
        f"the sources hold only {total:,} bytes; {size:,} were requested "
        "(pass --corpus PATH to use other text)")


def corpus_path(size: int | str | None, corpus: str | os.PathLike | None = None,
                *, rebuild: bool = False) -> Path:
    """Path of the corpus of ``size`` bytes, built and cached on first use.

    With ``corpus``, that file stands in for the English recipe: returned as
    is when ``size`` is None or covers it, else its first ``size`` bytes cut
    at a line boundary, cached.
    """
    size = None if size is None else parse_size(size)
    if corpus is not None:
        return _custom_prefix(Path(corpus), size)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.corpus",
        description="Build (once) and print the path of real-English benchmark corpora.")
    parser.add_argument("--size", action="append", default=[],
                        help="corpus size, e.g. 0.1MB, 10MB, 100MB (repeatable)")
    parser.add_argument("--corpus", help="use this text file instead of the English recipe")
    parser.add_argument("--rebuild", action="store_true", help="ignore the cache")
    parser.add_argument("--info", action="store_true", help="print the manifest after each path")
    args = parser.parse_args(argv)
    sizes = args.size or ([None] if args.corpus else [])
    if not sizes:
        parser.error("give --size (and/or --corpus)")
    for size in sizes:
        path = corpus_path(size, args.corpus, rebuild=args.rebuild)
        print(path, flush=True)
        if args.info:
            print(json.dumps(manifest(path), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
