"""Reading a training corpus: files, globs, directories, JSON Lines, gzip, iterables.

:func:`read_corpus` is where training starts: it turns what the caller gave
into :class:`Files` (read later, in parts, by whoever counts them) or
:class:`Documents` (an iterable read once). Counting consumes what this stage
yields: the documents of a corpus or of one file part (:meth:`Files.documents`,
:meth:`Documents.documents`, :func:`read_file`), or the blocks of local text
files with their offsets (:meth:`Files.blocks`,
:func:`bytepair.read.blocks.file_blocks`).

Documents are streamed: only the document being read is held in memory (and,
when worker processes count an iterable corpus, the batches in flight). A plain text file is one document, or one document per line with
``per_line=True``; a JSON Lines file (``.jsonl``, ``.ndjson``, optionally
``.gz``) gives one document per record, taken from ``jsonl_field``; a
Parquet file (``.parquet``, read with the optional ``pyarrow``, one row group
at a time) gives one document per row of the string column ``text_column``.

A path may also be an fsspec URL (``s3://bucket/shards/*.parquet``,
``file:///data/a.txt``, ...) when ``fsspec`` and the file system's own
package are installed; globs and directories work as for local paths.

Encoding policy: without a pre-tokenizer (byte mode) a document's bytes are
used as they are. With a pre-tokenizer the text must be UTF-8; invalid bytes
raise ``ValueError`` naming the file and the byte offset.
"""

from __future__ import annotations

import codecs
import contextlib
import glob
import gzip
import json
import os
import zlib
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import Iterable, Iterator

from bytepair.read import blocks

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
                 jsonl_field: str | None = None, text_column: str | None = None,
                 skip_unreadable: bool = False):
        """Resolve ``patterns`` to files, sorted within each directory and glob.

        ``patterns``
            Paths, directories (read recursively; hidden files are left out),
            glob patterns (``**`` recurses) or fsspec URLs.
        ``per_line``
            Each line of a plain text file is a document; otherwise each file is one.
        ``jsonl_field``
            The field of JSON Lines records that holds the text (default ``"text"``).
        ``text_column``
            The string column of Parquet files that holds the text (default ``"text"``).
        ``skip_unreadable``
            Leave out the files that are not UTF-8 text or not readable gzip
            (Parquet files are kept); :attr:`skipped` lists them with the
            reason. This reads every other file once more, here.
        """
        if not patterns:
            raise ValueError("corpus: no files given")
        self.per_line = per_line
        self.jsonl_field = jsonl_field or "text"
        self.text_column = text_column or "text"
        self.paths: list[Path] = []
        for pattern in patterns:
            self.paths.extend(_expand(pattern))
        #: ``(path, reason)`` of each file left out by ``skip_unreadable``, in corpus order.
        self.skipped: list[tuple[Path, str]] = []
        if skip_unreadable:
            reasons = {path: unreadable(path) for path in self.paths}
            self.skipped = [(path, why) for path, why in reasons.items() if why is not None]
            self.paths = [path for path, why in reasons.items() if why is None]
            if not self.paths:
                raise ValueError(f"corpus: no file is UTF-8 text (skipped {len(self.skipped)}: "
                                 f"{self.skipped[0][0]}: {self.skipped[0][1]}, ...)")
        if jsonl_field is not None and not any(map(is_jsonl, self.paths)):
            raise ValueError(
                "jsonl_field: no input is a JSON Lines file (.jsonl or .ndjson, optionally .gz)"
            )
        if text_column is not None and not any(map(is_parquet, self.paths)):
            raise ValueError("text_column: no input is a Parquet file (.parquet)")
        # Parquet footers are read now: a wrong column or a file that is not
        # Parquet is reported before any work starts.
        self._row_groups = {path: parquet_row_groups(path, self.text_column)
                            for path in self.paths if is_parquet(path)}

    def __repr__(self) -> str:
        return f"Files({len(self.paths)} files, per_line={self.per_line})"

    def total_bytes(self) -> int:
        """Size on disk of all files (compressed size for gzip files)."""
        return sum(path.stat().st_size for path in self.paths)

    def documents(self, text: bool, *, keep_line_ends: bool = False) -> Iterator[str | bytes]:
        r"""Documents as ``str`` (``text=True``) or ``bytes`` (``text=False``).

        ``keep_line_ends``
            With ``per_line``, each line keeps its ``\n`` or ``\r\n``, so
            that the documents joined are the files' text byte for byte
            (training drops them: a line ending is not part of a line's text).
        """
        for path in self.paths:
            yield from read_file(path, text=text, per_line=self.per_line,
                                 jsonl_field=self.jsonl_field, text_column=self.text_column,
                                 keep_line_ends=keep_line_ends)

    def texts(self, cut_bytes: int | None = None) -> Iterator[tuple[str, bool]]:
        """Every document as ``str``, each with whether it starts a document.

        With ``cut_bytes``, a whole-file document of local plain or gzip text
        comes in blocks of about that size that end at cut points
        (:func:`bytepair.read.blocks.is_cut`: the named patterns split each
        block as they split it in the whole file), and only its first block
        starts a document. For readers that encode (held-out samples).
        Invalid UTF-8 raises ValueError naming the file and the byte offset.
        """
        for path in self.paths:
            if cut_bytes is None or self.per_line or not reads_in_blocks(path):
                for text in read_file(path, text=True, per_line=self.per_line,
                                      jsonl_field=self.jsonl_field, text_column=self.text_column):
                    yield text, True
                continue
            for offset, data, _ in blocks.file_blocks(path, 0, None, per_line=False,
                                                      cut_documents=True, block_bytes=cut_bytes):
                if data:  # an empty file, or the progress block of a gzip file, holds no text
                    try:
                        yield data.decode("utf-8"), offset == 0
                    except UnicodeDecodeError as exc:
                        raise ValueError(f"{path}: invalid UTF-8 at byte offset "
                                         f"{offset + exc.start}") from None

    def blocks(self, block_bytes: int, *, cut_documents: bool,
               per_line: bool | None = None,
               mapped: bool = False) -> Iterator[tuple[Path, int, bytes | memoryview, int]]:
        """``(path, offset, block, progress)`` over every file, file after file, in blocks
        of about ``block_bytes``.

        Every file must be local plain or gzip text (:func:`reads_in_blocks`).
        Per-line files are cut at line ends; a whole-file document at cut
        points when ``cut_documents`` (the named patterns allow it), else it
        is one block (see :func:`bytepair.read.blocks.file_blocks`).
        ``per_line`` overrides how the files hold documents (None: as they
        were given), for a reader that only needs blocks to end at line ends,
        such as word counting. The
        progress of a file adds up to its size on disk: what the blocks do not
        account for (an empty gzip file has a size) comes with a last empty
        block. O(total bytes); memory: one block plus the carried tail.
        ``mapped``: a plain file's blocks are views of its mapped pages
        (:func:`bytepair.read.blocks.mapped_blocks`), not copies.
        """
        for path in self.paths:
            left = path.stat().st_size
            for offset, data, progress in blocks.file_blocks(
                    path, 0, None, per_line=self.per_line if per_line is None else per_line,
                    cut_documents=cut_documents, block_bytes=block_bytes, mapped=mapped):
                left -= progress
                yield path, offset, data, progress
            if left > 0:
                yield path, 0, b"", left

    def row_groups(self, path: Path) -> int | None:
        """The number of row groups of the Parquet file ``path`` of the corpus; None for other files."""
        return self._row_groups.get(path)

    def part_size(self, path: Path, start: int, end: int | None) -> int:
        """The share of :meth:`total_bytes` of the part ``start`` to ``end`` of ``path``, for progress bars.

        A Parquet row group counts as an even share of its file.
        """
        groups = self._row_groups.get(path)
        if groups is not None:
            return path.stat().st_size // max(groups, 1)
        return (path.stat().st_size if end is None else end) - start

    def parts(self, size: int, *, cut_documents: bool = False) -> list[tuple[Path, int, int | None]]:
        """Byte ranges ``(path, start, end)`` of about ``size`` bytes, cut at line ends.

        Gzip files are one part each (``end`` None: to the end of the file).
        A file read as one document is one part too, unless ``cut_documents``
        (for the named patterns): then it is cut at cut points
        (:func:`bytepair.read.blocks.is_cut`), where the pieces of the parts are
        those of the whole document. A Parquet file's parts are its row
        groups: ``start`` and ``end`` count row groups, not bytes.
        O(number of parts) small reads.
        """
        out: list[tuple[Path, int, int | None]] = []
        for path in self.paths:
            if path in self._row_groups:
                out.extend((path, group, group + 1) for group in range(self._row_groups[path]))
                continue
            by_line = self.per_line or _base_suffix(path) in JSONL_SUFFIXES
            total = path.stat().st_size
            if (not by_line and not cut_documents) or path.suffix == ".gz" or total <= size:
                out.append((path, 0, None))
                continue
            start = 0
            with _open_raw(path) as handle:
                while start < total:
                    end = _next_boundary(handle, min(start + size, total), total, by_line)
                    out.append((path, start, end))
                    start = end
        return out


def _next_boundary(handle, offset: int, total: int, by_line: bool) -> int:
    """The first line end (``by_line``) or document cut point at or after ``offset``, else ``total``."""
    if offset >= total:
        return total
    if by_line:
        handle.seek(offset)
        handle.readline()  # move on to the next line end
        return min(handle.tell(), total)
    window = 1 << 16
    # A cut point reads up to 5 bytes before it: start the search that far back.
    at = max(0, offset - 5)
    while at < total:
        handle.seek(at)
        data = handle.read(window + 16)
        cut = blocks.first_cut(data, max(offset - at - 1, 4))
        if cut >= 0:
            return at + cut
        if at + len(data) >= total:
            return total
        at += window
    return total


def reads_in_blocks(path: Path | RemoteFile) -> bool:
    """Whether ``path`` is local plain or gzip text, which
    :func:`bytepair.read.blocks.file_blocks` reads (JSON Lines, Parquet and
    URLs are read as documents, with :func:`read_file`)."""
    return isinstance(path, Path) and not is_jsonl(path) and not is_parquet(path)


def portable_name(path: Path | RemoteFile) -> str:
    """A name every machine resolves to the same file: the URL, or an absolute path."""
    return str(path) if isinstance(path, RemoteFile) else os.path.abspath(path)


def files_named(name: str, *patterns: str | os.PathLike, **options) -> Files:
    """``Files(*patterns, **options)`` for an argument that is not called ``corpus``:
    a missing or unreadable file is reported under ``name``.

    >>> files_named("--sample", "no/such/file.txt")
    Traceback (most recent call last):
    ...
    FileNotFoundError: --sample: no such file or directory: 'no/such/file.txt'
    """
    try:
        return Files(*patterns, **options)
    except (OSError, ValueError, ImportError) as exc:
        message = str(exc)
        if not message.startswith("corpus: "):
            raise
        raise type(exc)(f"{name}: {message.removeprefix('corpus: ')}") from None


def _expand(pattern: str | os.PathLike) -> list[Path]:
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


def _open_raw(path: Path | RemoteFile):
    return path.open() if isinstance(path, RemoteFile) else open(path, "rb")


def _open(path: Path | RemoteFile):
    if path.suffix == ".gz":
        return path.open("gzip") if isinstance(path, RemoteFile) else gzip.open(path, "rb")
    return _open_raw(path)


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
              end: int | None = None, text_column: str = "text",
              keep_line_ends: bool = False) -> Iterator[str | bytes]:
    """The documents of one file, or of the lines in bytes ``start`` to ``end``.

    For a Parquet file ``start`` and ``end`` are row-group indices. With
    ``per_line``, a line's ending is dropped unless ``keep_line_ends``.
    """
    path = file_of(path)
    if is_parquet(path):
        yield from read_parquet(path, text_column, text=text, start=start, end=end)
        return
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
                    body = line if keep_line_ends else strip_line_end(line)
                    yield _decode(body, path, offset) if text else body
            else:
                # A whole-file document cut at a cut point (Files.parts): its bytes up to ``end``.
                data = handle.read() if end is None else handle.read(end - start)
                yield _decode(data, path, start) if text else data
    except (gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"{path}: not a readable gzip file: {exc}") from None


#: Bytes read at a time when a file is checked to be UTF-8 text.
CHECK_CHUNK = 1 << 20


def unreadable(path: Path | RemoteFile) -> str | None:
    """Why ``path`` cannot be read as text (not UTF-8, or a broken gzip file), or None.

    Parquet files are not checked (their text column is typed). O(file size)
    in chunks of :data:`CHECK_CHUNK`, memory O(chunk).
    """
    path = file_of(path)
    if is_parquet(path):
        return None
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    try:
        with _open(path) as handle:
            while chunk := handle.read(CHECK_CHUNK):
                # The decoder holds back the first bytes of a character cut by the last chunk.
                held = len(decoder.getstate()[0])
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    return f"invalid UTF-8 at byte offset {offset - held + exc.start}"
                offset += len(chunk)
            held = len(decoder.getstate()[0])
            if held:
                return f"invalid UTF-8 at byte offset {offset - held} (a character cut at the end)"
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        return f"not a readable gzip file: {exc}"
    return None


def strip_line_end(line: bytes) -> bytes:
    r"""``line`` without its one line ending, ``\n`` or ``\r\n``; a lone ``\r`` is text.

    >>> strip_line_end(b"ef\r\r\n"), strip_line_end(b"a\r"), strip_line_end(b"b\n")
    (b'ef\r', b'a\r', b'b')
    """
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith(b"\n"):
        return line[:-1]
    return line


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


def as_files(corpus, *, per_line: bool = False, jsonl_field: str | None = None,
             text_column: str | None = None):
    """``corpus`` as :class:`Files` when it names files, else unchanged.

    A path or glob (``str`` or ``os.PathLike``) and a list of ``Path`` objects
    name files. A list or tuple of strings that all look like file paths
    (existing paths, or names such as ``a.txt`` / ``b.txt.gz`` without white
    space) is refused rather than trained on as text: it is ambiguous, and
    :class:`Files` says it plainly.
    """
    if isinstance(corpus, (str, os.PathLike)):
        return Files(corpus, per_line=per_line, jsonl_field=jsonl_field, text_column=text_column)
    if isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, Path) for c in corpus):
        return Files(*corpus, per_line=per_line, jsonl_field=jsonl_field, text_column=text_column)
    if isinstance(corpus, (list, tuple)) and corpus and all(map(_looks_like_a_path, corpus)):
        shown = ", ".join(repr(os.fspath(c)) for c in corpus[:2]) + (", ..." if len(corpus) > 2 else "")
        raise ValueError(
            f"corpus: a list of file paths ({shown}) is ambiguous (texts or files?); "
            f"to read the files pass bytepair.Files({shown}), or a list of Path objects; to train "
            f"on the strings themselves pass them as a generator"
        )
    return corpus


class Documents:
    """A corpus given as an iterable of ``str`` or ``bytes`` documents, read once, as a stream.

    >>> list(Documents(["a", b"b"]).documents(text=False))
    [b'a', b'b']
    """

    def __init__(self, iterable):
        if isinstance(iterable, (bytes, bytearray)):
            raise TypeError("corpus must be an iterable of documents, a path or Files, not bytes")
        if not isinstance(iterable, Iterable):
            raise TypeError(f"corpus must be a path, Files or an iterable of str/bytes, "
                            f"got {type(iterable).__name__}")
        self.iterable = iterable

    def __repr__(self) -> str:
        return f"Documents({type(self.iterable).__name__})"

    def documents(self, text: bool) -> Iterator[str | bytes]:
        """Documents as ``str`` (``text=True``) or ``bytes``. A document that is not
        text (a ``str`` that UTF-8 cannot hold, bytes that are not UTF-8 when
        ``text``) raises ValueError, an item that is neither ``str`` nor bytes
        TypeError, each naming ``corpus[index]``."""
        return _checked(self.iterable, text)


def read_corpus(corpus, *, per_line: bool = False, jsonl_field: str | None = None,
                text_column: str | None = None) -> Files | Documents:
    """The start of training: ``corpus`` as :class:`Files` or as :class:`Documents`.

    ``corpus`` is a :class:`Files`, a path or glob (``str`` or ``os.PathLike``),
    a list of ``pathlib.Path``, or an iterable of ``str``/``bytes`` documents
    (see :func:`as_files` for lists of strings that look like paths).
    ``per_line``, ``jsonl_field`` and ``text_column`` say how files hold
    documents. Files are found (and Parquet footers read) now, so that a
    missing file is reported before any work starts; nothing else is read.
    """
    corpus = as_files(corpus, per_line=per_line, jsonl_field=jsonl_field, text_column=text_column)
    return corpus if isinstance(corpus, (Files, Documents)) else Documents(corpus)


def iter_documents(corpus, *, text: bool, per_line: bool = False,
                   jsonl_field: str | None = None,
                   text_column: str | None = None) -> Iterator[str | bytes]:
    """Documents of any supported corpus (see :func:`read_corpus`), as ``str`` or ``bytes``."""
    yield from read_corpus(corpus, per_line=per_line, jsonl_field=jsonl_field,
                           text_column=text_column).documents(text)


def _checked(iterable, text: bool) -> Iterator[str | bytes]:
    for index, doc in enumerate(iterable):
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


# -- Parquet ----------------------------------------------------------------

def is_parquet(path: Path | RemoteFile) -> bool:
    return file_of(path).suffix == PARQUET_SUFFIX


def _pyarrow(path: Path):
    """``(pyarrow, pyarrow.parquet)``, or an ImportError that says how to install them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ImportError(
            f"{path}: reading Parquet files needs pyarrow: pip install 'bytepair[parquet]'"
        ) from None
    return pyarrow, pyarrow.parquet


@contextlib.contextmanager
def _open_parquet(path: Path | RemoteFile, column: str):
    """The ``ParquetFile`` of ``path``, checked to hold a string column ``column``."""
    pa, pq = _pyarrow(path)
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(path.open()) if isinstance(path, RemoteFile) else path
        try:
            parquet = pq.ParquetFile(source, buffer_size=1 << 20, pre_buffer=False)
        except pa.ArrowException as exc:
            raise ValueError(f"{path}: not a Parquet file: {exc}") from None
        stack.callback(parquet.close)
        _check_column(pa, parquet, path, column)
        yield parquet


def _check_column(pa, parquet, path, column: str) -> None:
    schema = parquet.schema_arrow
    if column not in schema.names:
        names = ", ".join(repr(n) for n in schema.names) or "none"
        raise ValueError(f"{path}: no column {column!r}; the columns are {names}")
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or getattr(pa.types, "is_string_view", lambda _: False)(kind)):
        raise ValueError(f"{path}: column {column!r} holds {kind}, not strings")


def parquet_row_groups(path: Path, column: str) -> int:
    """The number of row groups of a Parquet file with a string column ``column``.

    Reads only the footer.
    """
    with _open_parquet(path, column) as parquet:
        return parquet.metadata.num_row_groups


#: Rows of a Parquet row group are read in record batches of about this many bytes.
PARQUET_BATCH_BYTES = 1 << 20


def read_parquet(path: Path, column: str, *, text: bool, start: int = 0,
                 end: int | None = None) -> Iterator[str | bytes]:
    """One document per row of ``column``, row groups ``start`` to ``end`` (exclusive).

    A row group is read in record batches of about :data:`PARQUET_BATCH_BYTES`
    (by its average row size), so memory does not grow with the size of the
    row group. A null row, invalid UTF-8 (with ``text``) and a page that does
    not decode raise ValueError naming the file, the row group and, where
    known, the row (counted from 0 over the file).
    """
    pa, _ = _pyarrow(path)
    with _open_parquet(path, column) as parquet:
        metadata = parquet.metadata
        stop = metadata.num_row_groups if end is None else min(end, metadata.num_row_groups)
        first_row = sum(metadata.row_group(g).num_rows for g in range(start))
        for group in range(start, stop):
            where = f"{path}: row group {group}"
            for values in _batches_of(pa, parquet, group, column, where):
                if values.null_count:
                    row = values.is_null().to_pylist().index(True)
                    raise ValueError(f"{where}, row {first_row + row}: column {column!r} is null")
                # Bytes straight from Arrow's buffers: no decode and re-encode in byte mode.
                raw = values.cast(pa.large_binary()).to_pylist()
                yield from (_decoded(raw, f"{where}, row", first_row, column) if text else raw)
                first_row += len(values)


def _batches_of(pa, parquet, group: int, column: str, where: str) -> Iterator:
    """The column ``column`` of row group ``group``, one record batch at a time.

    Damaged pages (bad compression, a stream cut short) raise ValueError
    naming ``where``: Arrow's own message names neither the file nor the group.
    """
    meta = parquet.metadata.row_group(group)
    row_bytes = max(1, meta.total_byte_size // max(meta.num_rows, 1))
    rows = max(1, PARQUET_BATCH_BYTES // row_bytes)
    try:
        batches = parquet.iter_batches(batch_size=rows, row_groups=[group], columns=[column],
                                       use_threads=False)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            yield batch.column(0)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{where} is unreadable: {exc}") from None


def _decoded(raw: list[bytes], where: str, first_row: int, column: str) -> list[str]:
    """``raw`` as text; a row that is not UTF-8 raises ValueError naming it."""
    try:
        return [value.decode("utf-8") for value in raw]
    except UnicodeDecodeError:
        for row, value in enumerate(raw):
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{where} {first_row + row}: column {column!r}: invalid UTF-8 at byte offset "
                    f"{exc.start} (only byte mode, pretokenize=None, accepts any bytes)"
                ) from None
        raise
