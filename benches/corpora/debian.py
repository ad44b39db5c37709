"""The Debian packages the corpora are read from: ``Source`` (one stream of lines from a
package's files), apt-get only with the user's word (``--fetch-corpora``), and packages
downloaded and unpacked into the cache instead of installed."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from benches.corpora.cache import cache_dir


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
