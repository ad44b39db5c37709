"""The English recipe: real English text from Debian documentation packages.

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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Iterator

from benches.corpora.build import BLOCK, _write_built
from benches.corpora.cache import cache_dir
from benches.corpora.debian import Source, _glob, _log, _package_version, _root
from benches.corpora.pages import _read_html, _read_text


#: Bump when the recipe or the sources change: it is part of every cache name.
RECIPE = 1
#: The sizes the benchmarks use, in bytes.
STANDARD_SIZES = (100_000, 1_000_000, 10_000_000, 100_000_000)


_VERSE_REF = re.compile(r"^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ ")


def _read_kjv(bible: Path) -> Iterator[str]:
    # `bible -f` prints one verse per line, prefixed by its reference ("Ge1:1 ").
    out = subprocess.run(
        [str(bible), "-f", "Genesis 1:1-Revelation 22:21"],
        check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    ).stdout
    for line in out.split("\n"):
        yield _VERSE_REF.sub("", line, count=1)


def _bible_command(root: Path) -> list[Path]:
    found = shutil.which("bible")
    return [Path(found)] if found else []


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


def english_path(size: int, *, rebuild: bool = False) -> Path:
    """Path of the English recipe's corpus of ``size`` bytes, built and cached on first use."""
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


def _english_all() -> Path:
    """All of the English recipe (every source to its end), cached like its corpora."""
    path = cache_dir() / f"english-v{RECIPE}-all.txt"
    if path.exists() and path.with_suffix(".json").exists():
        return path

    def write(out) -> dict:
        total, lines, stats = _assemble(None, out)
        return dict(bytes=total, lines=lines, sources=stats)

    return _write_built(path, write, dict(recipe=RECIPE, language="english", block=BLOCK))
