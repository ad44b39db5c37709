"""A corpus of files (:class:`Files`): found once, then read whole, in parts or in blocks.

Counting reads a :class:`Files` in parts of about a given size, cut at line
ends or record boundaries (:meth:`Files.parts`), or in blocks with their
offsets (:meth:`Files.blocks`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from bytepair._util.errors import ArgumentError
from bytepair.read import blocks
from bytepair.read.paths import (JSONL_SUFFIXES, base_suffix, expand, is_jsonl, is_parquet, open_raw,
                                 reads_in_blocks)
from bytepair.read.text import read_file, unreadable
from bytepair.read.parquet import parquet_row_groups


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
            self.paths.extend(expand(pattern))
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
            raise ArgumentError(
                "jsonl_field", ": no input is a JSON Lines file (.jsonl or .ndjson, optionally .gz)")
        if text_column is not None and not any(map(is_parquet, self.paths)):
            raise ArgumentError("text_column", ": no input is a Parquet file (.parquet)")
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
            by_line = self.per_line or base_suffix(path) in JSONL_SUFFIXES
            total = path.stat().st_size
            if (not by_line and not cut_documents) or path.suffix == ".gz" or total <= size:
                out.append((path, 0, None))
                continue
            start = 0
            with open_raw(path) as handle:
                while start < total:
                    end = next_boundary(handle, min(start + size, total), total, by_line)
                    out.append((path, start, end))
                    start = end
        return out


def next_boundary(handle, offset: int, total: int, by_line: bool) -> int:
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
