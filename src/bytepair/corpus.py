"""Reading a training corpus: files, globs, directories, JSON Lines, gzip, iterables.

Documents are streamed: only the document being read is held in memory (and,
when worker processes count an iterable corpus, the batches in flight). A plain text file is one document, or one document per line with
``per_line=True``; a JSON Lines file (``.jsonl``, ``.ndjson``, optionally
``.gz``) gives one document per record, taken from ``jsonl_field``.

Encoding policy: without a pre-tokenizer (byte mode) a document's bytes are
used as they are. With a pre-tokenizer the text must be UTF-8; invalid bytes
raise ``ValueError`` naming the file and the byte offset.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
from pathlib import Path
from typing import Iterable, Iterator

JSONL_SUFFIXES = (".jsonl", ".ndjson")


class Files:
    """A corpus of files, directories (read recursively) and glob patterns.

    Paths are resolved at once, so a missing file is reported before any
    work starts.

    >>> Files("no/such/file.txt")
    Traceback (most recent call last):
    ...
    FileNotFoundError: corpus: no such file or directory: 'no/such/file.txt'
    """

    def __init__(self, *patterns: str | os.PathLike, per_line: bool = False,
                 jsonl_field: str | None = None):
        if not patterns:
            raise ValueError("corpus: no files given")
        self.per_line = per_line
        self.jsonl_field = jsonl_field or "text"
        self.paths: list[Path] = []
        for pattern in patterns:
            self.paths.extend(_expand(pattern))
        if jsonl_field is not None and not any(map(is_jsonl, self.paths)):
            raise ValueError(
                "jsonl_field: no input is a JSON Lines file (.jsonl or .ndjson, optionally .gz)"
            )

    def __repr__(self) -> str:
        return f"Files({len(self.paths)} files, per_line={self.per_line})"

    def total_bytes(self) -> int:
        """Size on disk of all files (compressed size for gzip files)."""
        return sum(path.stat().st_size for path in self.paths)

    def documents(self, text: bool) -> Iterator[str | bytes]:
        """Documents as ``str`` (``text=True``) or ``bytes``."""
        for path in self.paths:
            yield from read_file(path, text=text, per_line=self.per_line,
                                 jsonl_field=self.jsonl_field)

    def parts(self, size: int) -> list[tuple[Path, int, int | None]]:
        """Byte ranges ``(path, start, end)`` of about ``size`` bytes, cut at line ends.

        Files whose documents span lines (whole-file documents) and gzip
        files are one part each (``end`` None: to the end of the file).
        """
        out: list[tuple[Path, int, int | None]] = []
        for path in self.paths:
            by_line = self.per_line or _base_suffix(path) in JSONL_SUFFIXES
            total = path.stat().st_size
            if not by_line or path.suffix == ".gz" or total <= size:
                out.append((path, 0, None))
                continue
            start = 0
            with open(path, "rb") as handle:
                while start < total:
                    handle.seek(min(start + size, total))
                    handle.readline()  # move on to the next line end
                    end = min(handle.tell(), total)
                    out.append((path, start, end))
                    start = end
        return out


def _expand(pattern: str | os.PathLike) -> list[Path]:
    name = os.fspath(pattern)
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


def _walk(directory: Path) -> list[Path]:
    # Sorted so that every run reads the same files in the same order.
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def is_jsonl(path: Path) -> bool:
    """Whether ``path`` is read as JSON Lines: ``.jsonl`` or ``.ndjson``, optionally ``.gz``."""
    return _base_suffix(path) in JSONL_SUFFIXES


def _base_suffix(path: Path) -> str:
    return Path(path.stem).suffix if path.suffix == ".gz" else path.suffix


def _decode(data: bytes, path: Path, offset: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: invalid UTF-8 at byte offset {offset + exc.start}"
            " (only byte mode, pretokenize=None, accepts any bytes)"
        ) from None


def read_file(path: Path, *, text: bool, per_line: bool = False,
              jsonl_field: str = "text", start: int = 0,
              end: int | None = None) -> Iterator[str | bytes]:
    """The documents of one file, or of the lines in bytes ``start`` to ``end``."""
    try:
        handle = _open(path)
        with handle:
            if start:
                handle.seek(start)
            lines = _lines(handle, start, end)
            if _base_suffix(path) in JSONL_SUFFIXES:
                yield from _read_jsonl(lines, path, jsonl_field, text)
            elif per_line:
                for offset, line in lines:
                    body = line.rstrip(b"\r\n") if line.endswith(b"\n") else line
                    yield _decode(body, path, offset) if text else body
            else:
                data = handle.read()
                yield _decode(data, path, 0) if text else data
    except (gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"{path}: not a readable gzip file: {exc}") from None


def _lines(handle, offset: int, end: int | None) -> Iterator[tuple[int, bytes]]:
    """``(byte offset, line)`` pairs up to byte ``end``."""
    for line in handle:
        if end is not None and offset >= end:
            return
        yield offset, line
        offset += len(line)


def _line_number(path: Path, offset: int) -> int:
    # Only on an error: count the lines before the bad one.
    with _open(path) as handle:
        return handle.read(offset).count(b"\n") + 1


def _read_jsonl(lines, path: Path, field: str, text: bool) -> Iterator[str | bytes]:
    for offset, line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}:{_line_number(path, offset)}: not a JSON line: {exc}") from None
        if not isinstance(record, dict) or field not in record:
            raise ValueError(f"{path}:{_line_number(path, offset)}: the record has no field {field!r}")
        value = record[field]
        if not isinstance(value, str):
            raise ValueError(
                f"{path}:{_line_number(path, offset)}: field {field!r} is "
                f"{type(value).__name__}, not a string"
            )
        yield value if text else value.encode("utf-8")


#: Suffixes that make a short string with no white space look like a file name.
PATH_SUFFIXES = (".txt", ".gz", ".jsonl", ".ndjson", ".json", ".parquet", ".csv", ".md", ".text")


def _looks_like_a_path(item) -> bool:
    if isinstance(item, os.PathLike):
        return True
    if not isinstance(item, str) or not item or len(item) > 4096 or any(c.isspace() for c in item):
        return False
    return item.lower().endswith(PATH_SUFFIXES) or os.path.exists(item)


def as_files(corpus, *, per_line: bool = False, jsonl_field: str | None = None):
    """``corpus`` as :class:`Files` when it names files, else unchanged.

    A path or glob (``str`` or ``os.PathLike``) and a list of ``Path`` objects
    name files. A list or tuple of strings that all look like file paths
    (existing paths, or names such as ``a.txt`` / ``b.txt.gz`` without white
    space) is refused rather than trained on as text: it is ambiguous, and
    :class:`Files` says it plainly.
    """
    if isinstance(corpus, (str, os.PathLike)):
        return Files(corpus, per_line=per_line, jsonl_field=jsonl_field)
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, Path) for c in corpus):
        return Files(*corpus, per_line=per_line, jsonl_field=jsonl_field)
    if isinstance(corpus, (list, tuple)) and corpus and all(map(_looks_like_a_path, corpus)):
        shown = ", ".join(repr(os.fspath(c)) for c in corpus[:2]) + (", ..." if len(corpus) > 2 else "")
        raise ValueError(
            f"corpus: a list of file paths ({shown}) is ambiguous (texts or files?); "
            f"to read the files pass bytepair.Files({shown}), or a list of Path objects; to train "
            f"on the strings themselves pass them as a generator"
        )
    return corpus


def iter_documents(corpus, *, text: bool, per_line: bool = False,
                   jsonl_field: str | None = None) -> Iterator[str | bytes]:
    """Documents of any supported corpus.

    ``corpus`` is a :class:`Files`, a path or glob (``str`` or ``os.PathLike``),
    a list of ``pathlib.Path``, or an iterable of ``str``/``bytes`` documents.
    """
    corpus = as_files(corpus, per_line=per_line, jsonl_field=jsonl_field)
    if isinstance(corpus, Files):
        yield from corpus.documents(text)
        return
    if isinstance(corpus, (bytes, bytearray)):
        raise TypeError("corpus must be an iterable of documents, a path or Files, not bytes")
    if not isinstance(corpus, Iterable):
        raise TypeError(f"corpus must be a path, Files or an iterable of str/bytes, got {type(corpus).__name__}")
    for index, doc in enumerate(corpus):
        if isinstance(doc, str):
            try:
                data = doc.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"corpus[{index}] is not text: {exc.reason} at {exc.start}") from None
            yield doc if text else data
        elif isinstance(doc, (bytes, bytearray, memoryview)):
            data = bytes(doc)
            yield _decode_item(data, index) if text else data
        else:
            raise TypeError(f"corpus[{index}] must be str or bytes, got {type(doc).__name__}")


def _decode_item(data: bytes, index: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"corpus[{index}]: invalid UTF-8 at byte offset {exc.start}") from None
