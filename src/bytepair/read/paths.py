"""Where a corpus is: local paths, directories and globs, fsspec URLs, and how each file opens.

:func:`expand` turns one pattern into its files (sorted within each directory
and glob; hidden files left out of directories); :class:`RemoteFile` is a
file behind an fsspec URL (``s3://bucket/shards/*.parquet``, ``file:///...``),
usable when ``fsspec`` and the file system's own package are installed.
:func:`open_file` opens any of them, gzip-decompressed by suffix.
"""

from __future__ import annotations

import glob
import gzip
import os
from pathlib import Path, PurePosixPath
from types import SimpleNamespace


JSONL_SUFFIXES = (".jsonl", ".ndjson")


PARQUET_SUFFIX = ".parquet"


URL_MARK = "://"


class RemoteFile:
    """A file named by an fsspec URL; quacks like the parts of ``Path`` that reading uses.

    ``str()`` is the URL, which is what travels to other processes and
    cluster workers: they open it with :func:`file_of`.
    """

    def __init__(self, url: str, fs=None, fs_path: str | None = None):
        if fs is None:
            fs, fs_path = _fsspec(url).core.url_to_fs(url)
        self.url, self.fs, self.fs_path = url, fs, fs_path
        pure = PurePosixPath(fs_path)
        self.name, self.suffix, self.stem = pure.name, pure.suffix, pure.stem

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"RemoteFile({self.url!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RemoteFile) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    def __reduce__(self):
        return (RemoteFile, (self.url,))

    def stat(self) -> SimpleNamespace:
        return SimpleNamespace(st_size=self.fs.size(self.fs_path))

    def open(self, compression: str | None = None):
        """The file, binary (seekable unless ``compression`` is given)."""
        return self.fs.open(self.fs_path, "rb", compression=compression)


def _fsspec(url: str):
    try:
        import fsspec
    except ImportError:
        raise ImportError(f"corpus: reading {url!r} needs fsspec: pip install fsspec") from None
    return fsspec


def file_of(name: str | os.PathLike | RemoteFile) -> Path | RemoteFile:
    """A corpus file from its name: a ``Path``, or a :class:`RemoteFile` for a URL."""
    if isinstance(name, (Path, RemoteFile)):
        return name
    text = os.fspath(name)
    return RemoteFile(text) if URL_MARK in text else Path(text)


def reads_in_blocks(path: Path | RemoteFile) -> bool:
    """Whether ``path`` is local plain or gzip text, which
    :func:`bytepair.read.blocks.file_blocks` reads (JSON Lines, Parquet and
    URLs are read as documents, with :func:`read_file`)."""
    return isinstance(path, Path) and not is_jsonl(path) and not is_parquet(path)


def portable_name(path: Path | RemoteFile) -> str:
    """A name every machine resolves to the same file: the URL, or an absolute path."""
    return str(path) if isinstance(path, RemoteFile) else os.path.abspath(path)


def expand(pattern: str | os.PathLike) -> list[Path]:
    name = os.fspath(pattern)
    if URL_MARK in name:
        return _expand_url(name)
    if glob.has_magic(name):
        matches = sorted(Path(p) for p in glob.glob(name, recursive=True))
        files = [p for m in matches for p in (_walk(m) if m.is_dir() else [m])]
        if not files:
            raise FileNotFoundError(f"corpus: the pattern {name!r} matches no file")
        return files
    path = Path(name)
    if path.is_dir():
        files = _walk(path)
        if not files:
            raise FileNotFoundError(f"corpus: the directory {name!r} holds no file")
        return files
    if not path.exists():
        raise FileNotFoundError(f"corpus: no such file or directory: {name!r}")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"corpus: cannot read {name!r}")
    return [path]


def _expand_url(url: str) -> list[RemoteFile]:
    fs, fs_path = _fsspec(url).core.url_to_fs(url)
    protocol = url.split(URL_MARK, 1)[0]

    def remote(path: str) -> RemoteFile:
        return RemoteFile(fs.unstrip_protocol(path) if protocol else path, fs, path)

    def visible(path: str) -> bool:
        return not PurePosixPath(path).name.startswith(".")

    if glob.has_magic(fs_path):
        matches = sorted(fs.glob(fs_path))
        found = [p for m in matches for p in (sorted(fs.find(m)) if fs.isdir(m) else [m])]
        if not found:
            raise FileNotFoundError(f"corpus: the pattern {url!r} matches no file")
        return [remote(p) for p in found if visible(p)]
    if fs.isdir(fs_path):
        found = [p for p in sorted(fs.find(fs_path)) if visible(p)]
        if not found:
            raise FileNotFoundError(f"corpus: the directory {url!r} holds no file")
        return [remote(p) for p in found]
    if not fs.exists(fs_path):
        raise FileNotFoundError(f"corpus: no such file or directory: {url!r}")
    return [RemoteFile(url, fs, fs_path)]


def _walk(directory: Path) -> list[Path]:
    # Sorted so that every run reads the same files in the same order.
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))


def open_raw(path: Path | RemoteFile):
    return path.open() if isinstance(path, RemoteFile) else open(path, "rb")


def open_file(path: Path | RemoteFile):
    if path.suffix == ".gz":
        return path.open("gzip") if isinstance(path, RemoteFile) else gzip.open(path, "rb")
    return open_raw(path)


def is_jsonl(path: Path) -> bool:
    """Whether ``path`` is read as JSON Lines: ``.jsonl`` or ``.ndjson``, optionally ``.gz``."""
    return base_suffix(path) in JSONL_SUFFIXES


def base_suffix(path: Path) -> str:
    return Path(path.stem).suffix if path.suffix == ".gz" else path.suffix


def is_parquet(path: Path | RemoteFile) -> bool:
    return file_of(path).suffix == PARQUET_SUFFIX
