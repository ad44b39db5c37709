"""Reading a file in large blocks that end where the pre-tokenizer may be cut.

Counting reads a file as blocks of about :data:`BLOCK_BYTES` and hands each
whole block to compiled code, so no Python object is made per line or per
piece. A block must end where splitting the block alone gives the same
pieces as splitting the whole document:

* per-line files (one document per line) end a block after a ``"\\n"``;
* a whole-file document ends a block at a *cut point* (:func:`is_cut`),
  where every named pattern provably yields the same pieces on both sides
  (the proof is in docs/design.md, section "Cut points"). Such a block is
  counted as its own document.

What is carried from one block to the next is the text after the last cut
point (or line end), so memory is bounded by the block size plus the
longest stretch of text without a cut point, not by the file size.
"""

from __future__ import annotations

import gzip
import mmap
import os
import re
import stat
from pathlib import Path
from functools import lru_cache
from typing import Iterator

#: Bytes read at a time; a block handed to compiled code holds about this much.
BLOCK_BYTES = 1 << 22

#: Named patterns whose documents may be cut at :func:`is_cut` points.
CUTTABLE = ("gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "nanochat")

# Candidates for a cut point c, found by the end of a match: a space after an
# ASCII letter or the last byte of a multi-byte character (rule S), or a
# newline after a byte that is not ASCII white space, before an ASCII letter
# or the lead byte of a multi-byte character (rule N). is_cut decides.
_CANDIDATE = re.compile(rb"[A-Za-z\x80-\xbf](?= )|[^\t-\r ]\n(?=[A-Za-z\xc0-\xf4])")
#: How far back from a block's end to look for a cut point, tried in turn.
_WINDOWS = (1 << 12, 1 << 16, 1 << 20)


def _char_before(data, i: int) -> str | None:
    """The character that ends just before byte ``i``, or None (none, or not UTF-8)."""
    j = i - 1
    while j >= 0 and i - j <= 4 and 0x80 <= data[j] < 0xC0:
        j -= 1
    if j < 0:
        return None
    try:
        char = bytes(data[j:i]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return char if len(char) == 1 else None


def _char_at(data, i: int) -> str | None:
    """The character that starts at byte ``i``, or None (none, or not UTF-8)."""
    lead = data[i] if i < len(data) else 0xFF
    width = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    try:
        char = bytes(data[i:i + width]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return char if len(char) == 1 else None


@lru_cache(maxsize=None)
def _classes():
    """``(letter, space)``: regexes for ``\\p{L}`` and ``\\s``, compiled at first use (importing
    ``regex`` costs more than all of bytepair's own modules)."""
    import regex

    return regex.compile(r"\p{L}"), regex.compile(r"\s")


def is_cut(data, c: int) -> bool:
    """Whether the document ``data`` may be cut before byte ``c`` (0 < c < len(data)).

    Rule S: ``data[c]`` is a space (U+0020) and the character before it is a
    letter (``\\p{L}``). Rule N: ``data[c-1]`` is ``"\\n"``, the character
    before that is not white space (``\\s``) and the one at ``c`` is a
    letter. Only the bytes around ``c`` are read, so a cut point of a block
    is a cut point of the whole document. O(1).
    """
    if not 0 < c < len(data):
        return False
    letter, space = _classes()
    if data[c] == 0x20:
        char = _char_before(data, c)
        return char is not None and letter.match(char) is not None
    if data[c - 1] == 0x0A and c >= 2:
        before, after = _char_before(data, c - 1), _char_at(data, c)
        return (before is not None and after is not None and space.match(before) is None
                and letter.match(after) is not None)
    return False


def last_cut(data, start: int, stop: int) -> int:
    """The last cut point ``c`` of ``data`` with ``start < c < stop``, or -1.

    Looks back from ``stop`` in growing windows, so on ordinary text it reads
    a few kilobytes. O(stop - start) at worst.
    """
    for window in _WINDOWS + (stop - start,):
        lo = max(start, stop - window)
        found = -1
        for match in _CANDIDATE.finditer(data, lo, stop):
            c = match.end()
            if c < stop and c > start and is_cut(data, c):
                found = c
        if found >= 0 or lo == start:
            return found
    return -1


def first_cut(data, start: int) -> int:
    """The first cut point ``c > start`` of ``data``, or -1. O(len(data) - start)."""
    for match in _CANDIDATE.finditer(data, start):
        c = match.end()
        if c > start and is_cut(data, c):
            return c
    return -1


def open_binary(path: Path):
    """``path`` opened for reading bytes, decompressed when it ends in ``.gz``."""
    if Path(path).suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def file_blocks(path: Path, start: int, end: int | None, *, per_line: bool, cut_documents: bool,
                block_bytes: int | None = None,
                mapped: bool = False) -> Iterator[tuple[int, bytes | memoryview, int]]:
    """``(offset, block, progress)`` covering bytes ``[start, end)`` of a plain or gzip file.

    Per-line blocks end at line ends (:func:`read_blocks`). A whole-file
    document is cut at cut points when ``cut_documents`` (each block then is
    a document of its own, with the pieces it has in the whole file: only
    the named patterns allow it), else read at once: in byte mode it is one
    piece. ``offset`` is the block's first byte in the (decompressed) file;
    ``progress`` is the block's share of the file on disk (compressed bytes
    for gzip). An unreadable gzip file raises ValueError naming it. Memory:
    one block (about ``block_bytes``) plus the carried tail. O(end - start).

    ``mapped``: a plain regular file's blocks are views of its pages mapped
    in turn (:func:`mapped_blocks`).
    """
    try:
        with open_binary(path) as handle:
            if mapped and (per_line or cut_documents) and _mappable(handle):
                for offset, data in mapped_blocks(handle, start, end, per_line=per_line,
                                                  block_bytes=block_bytes):
                    yield offset, data, len(data)
                return
            if start:
                handle.seek(start)
            if not per_line and not cut_documents:
                data = handle.read() if end is None else handle.read(end - start)
                yield start, data, len(data)
                return
            raw = getattr(handle, "fileobj", None)  # a gzip file's compressed stream
            done = raw.tell() if raw is not None else start
            for offset, data in read_blocks(handle, start, end, per_line=per_line,
                                            block_bytes=block_bytes):
                seen, done = done, raw.tell() if raw is not None else offset + len(data)
                yield offset, data, done - seen
    except (gzip.BadGzipFile, EOFError) as exc:
        raise ValueError(f"{path}: not a readable gzip file: {exc}") from None


def read_blocks(handle, start: int, end: int | None, *, per_line: bool,
                block_bytes: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(offset, block)`` pairs covering bytes ``[start, end)`` of an open file.

    With ``per_line`` each block ends after a ``"\\n"`` (or at the end);
    otherwise at a cut point (:func:`last_cut`) or the end. ``offset`` is the
    block's first byte in the (decompressed) file; ``block_bytes`` defaults
    to :data:`BLOCK_BYTES`. The handle is positioned
    at ``start`` by the caller. Memory: one block plus the carried tail.
    O(end - start).
    """
    block_bytes = block_bytes or BLOCK_BYTES
    offset = start
    carry = b""
    while True:
        want = block_bytes if end is None else min(block_bytes, end - offset - len(carry))
        data = handle.read(want) if want > 0 else b""
        buffer = carry + data if carry else data
        if not data or (end is not None and offset + len(buffer) >= end):
            if buffer:
                yield offset, buffer
            return
        # Only the new bytes can hold a new cut (a cut reads at most 5 bytes around it).
        seen = max(0, len(carry) - 8)
        if per_line:
            cut = buffer.rfind(b"\n", seen) + 1
        else:
            cut = last_cut(buffer, seen, len(buffer))
        if cut <= 0:
            carry = buffer  # no line end or cut point yet: read on
            continue
        yield offset, buffer[:cut]
        offset += cut
        carry = buffer[cut:]


def _mappable(handle) -> bool:
    """Whether ``handle`` is an uncompressed regular file whose pages can be mapped.

    Not when it says it is empty: files in /proc and /sys do, and have text
    all the same (and an empty file has nothing to map). Not when a file
    system refuses to map it: its first page is mapped once to find out."""
    if not hasattr(handle, "raw"):  # gzip and other decoding streams
        return False
    try:
        status = os.fstat(handle.fileno())
        if not (stat.S_ISREG(status.st_mode) and status.st_size > 0):
            return False
        mmap.mmap(handle.fileno(), min(status.st_size, mmap.ALLOCATIONGRANULARITY),
                  access=mmap.ACCESS_READ).close()
    except (OSError, ValueError):
        return False
    return True


def mapped_blocks(handle, start: int, end: int | None, *, per_line: bool,
                  block_bytes: int | None = None) -> Iterator[tuple[int, memoryview]]:
    """:func:`read_blocks` of a regular file, without reading: each block is a view of
    the file's pages in the page cache, mapped for that block alone.

    Reading copies every byte into a new buffer; here the counting threads
    read the pages themselves, and the thread that finds the blocks only
    looks for the last line end or cut point of each. A mapping is dropped
    with the last view of it, so memory is about one block a view held.
    A stretch without a cut point maps a window twice as long. The file
    must not shrink meanwhile (reading mapped pages past a new end of file
    stops the process with SIGBUS). O(end - start).
    """
    block_bytes = block_bytes or BLOCK_BYTES
    size = os.fstat(handle.fileno()).st_size
    stop = size if end is None else min(end, size)
    offset = start
    window = block_bytes
    while offset < stop:
        base = offset - offset % mmap.ALLOCATIONGRANULARITY
        upto = min(stop, offset + window)
        area = mmap.mmap(handle.fileno(), upto - base, access=mmap.ACCESS_READ, offset=base)
        block = memoryview(area)[offset - base:]
        if upto == stop:
            cut = len(block)
        elif per_line:
            cut = area.rfind(b"\n", offset - base) + 1 - (offset - base)
        else:
            cut = last_cut(block, 0, len(block))
        if cut <= 0:  # no line end or cut point in the whole window: map a longer one
            window *= 2
            continue
        yield offset, block[:cut]
        offset += cut
        window = block_bytes
