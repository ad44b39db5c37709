"""Reading text files: plain text (one document, or one per line) and JSON Lines records.

Encoding policy: without a pre-tokenizer (byte mode) a document's bytes are
used as they are. With a pre-tokenizer the text must be UTF-8; invalid bytes
raise ``ValueError`` naming the file and the byte offset.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import zlib
from pathlib import Path
from typing import Iterator

from bytepair._util.errors import Advice, InputError
from bytepair.read.paths import JSONL_SUFFIXES, RemoteFile, base_suffix, file_of, is_parquet, open_file
from bytepair.read.parquet import read_parquet


def decode_text(data: bytes, path: Path, offset: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: invalid UTF-8 at byte offset {offset + exc.start} (only byte mode, ",
            Advice("pretokenize=None"), ", accepts any bytes)"
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
        handle = open_file(path)
        with handle:
            if start:
                handle.seek(start)
            lines = lines_from(handle, start, end)
            if base_suffix(path) in JSONL_SUFFIXES:
                yield from read_jsonl(lines, path, jsonl_field, text)
            elif per_line:
                for offset, line in lines:
                    body = line if keep_line_ends else strip_line_end(line)
                    yield decode_text(body, path, offset) if text else body
            else:
                # A whole-file document cut at a cut point (Files.parts): its bytes up to ``end``.
                data = handle.read() if end is None else handle.read(end - start)
                yield decode_text(data, path, start) if text else data
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
        with open_file(path) as handle:
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


def lines_from(handle, offset: int, end: int | None) -> Iterator[tuple[int, bytes]]:
    """``(byte offset, line)`` pairs up to byte ``end``."""
    for line in handle:
        if end is not None and offset >= end:
            return
        yield offset, line
        offset += len(line)


def decode_lines(data: bytes, path: Path, offset: int, keep_line_ends: bool) -> list[str]:
    r"""The lines of a block of ``path`` that starts at byte ``offset``, as :func:`read_file`
    gives them with ``per_line``: invalid UTF-8 raises ValueError naming the file and offset.

    >>> decode_lines(b"a\r\nb", Path("f"), 0, False)
    ['a', 'b']
    """
    return [decode_text(line if keep_line_ends else strip_line_end(line), path, at)
            for at, line in lines_from(io.BytesIO(data), offset, None)]


def _line_number(path: Path, offset: int) -> int:
    # Only on an error: count the lines before the bad one.
    with open_file(path) as handle:
        return handle.read(offset).count(b"\n") + 1


def read_jsonl(lines, path: Path, field: str, text: bool) -> Iterator[str | bytes]:
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
