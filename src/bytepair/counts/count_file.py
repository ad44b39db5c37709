"""The count file's bytes (format: ``docs/format.md``): its header line, the planes of its
lengths and counts, its zlib body read in bounded steps, and the checks that refuse a damaged
or hostile file (:class:`CountsFormatError`). :class:`bytepair.counts.piece_counts.PieceCounts`
saves and loads with them.
"""

from __future__ import annotations

import json
import sys
import zlib

from bytepair._util.errors import InputError
from bytepair._util.validate import MAX_COUNT
from bytepair.split.pretokenize import UntrustedPattern, stored_pattern

FORMAT = "bytepair-counts"
#: Version 2 checksums the header too (version 1 files are still read).
VERSION = 2
#: Version 3 is version 2 with sentencepiece's text rules: only tables of sentencepiece words
#: are written with it, so that a reader of version 2 refuses them instead of misreading them.
SPM_VERSION = 3
#: Longest header line a reader accepts; a binary file is refused quickly.
MAX_HEADER = 1 << 20
#: Pieces are stored with 32-bit lengths.
MAX_PIECE = 2**32 - 1
LITTLE_ENDIAN = sys.byteorder == "little"


class CountsFormatError(InputError):
    """A file that is not a piece-count table this version can read."""


#: Compressed bytes read from a count file at a time.
READ_BYTES = 1 << 20


def inflate(handle, size: int, copy: bytes, name: str) -> bytearray:
    """The zlib stream that fills the rest of ``handle``: ``size`` bytes, starting with ``copy``.

    Inflated in steps of at most the bytes still owed (plus one, to see an
    excess), so memory never exceeds ``size + 1`` bytes of output plus one read
    of input, whatever the stream expands to. ``copy`` is compared as soon as
    it is inflated: a changed header is refused before its sizes are relied on.
    """
    inflater = zlib.decompressobj()
    out = bytearray()
    compared = not copy
    while not inflater.eof:
        # What zlib could not take in the last step comes first; then the file.
        chunk = inflater.unconsumed_tail or handle.read(READ_BYTES)
        try:
            more = inflater.decompress(chunk, size + 1 - len(out))
        except zlib.error as exc:
            raise CountsFormatError(f"{name} is corrupt: the compressed body is damaged ({exc})") from None
        if not chunk and not more:
            raise CountsFormatError(f"{name} is corrupt: the file is truncated")
        out += more
        if not compared and len(out) >= len(copy):
            if out[:len(copy)] != copy:
                raise CountsFormatError(
                    f"{name} is corrupt: the header line differs from its checksummed copy in the body"
                )
            compared = True
        if len(out) > size:
            raise CountsFormatError(
                f"{name} is corrupt: the body holds more than the "
                f"{size - len(copy)} bytes the header says"
            )
    if inflater.unused_data or handle.read(1):
        raise CountsFormatError(f"{name} is corrupt: data after the end of the table")
    if not compared:
        raise CountsFormatError(f"{name} is corrupt: the body is shorter than its header copy")
    if len(out) != size:
        raise CountsFormatError(
            f"{name} is corrupt: the body holds {len(out) - len(copy)} bytes, "
            f"the header says {size - len(copy)}"
        )
    return out


def not_text(data: bytes, starts: list[int], ends: list[int]) -> str | None:
    """Why one of the pieces ``data[starts[i]:ends[i]]`` is not UTF-8 on its own, or None.

    Pieces cut by a pattern are text. Valid as a whole, with no piece
    starting on a continuation byte, means no character is split between two
    pieces: O(piece bytes) in C, and a Python step per piece only to name a
    bad one.
    """
    try:
        data.decode("utf-8")
        whole = True
    except UnicodeDecodeError:
        whole = False
    if whole and not bytes(map(data.__getitem__, starts)).translate(None, _NOT_CONTINUATION):
        return None
    for index, (start, end) in enumerate(zip(starts, ends)):
        try:
            data[start:end].decode("utf-8")
        except UnicodeDecodeError as exc:
            return (f"piece #{index} {data[start:end][:40]!r} is not UTF-8 ({exc.reason} at byte "
                    f"{exc.start}), but a pattern cuts text")
    return None


#: Every byte that does not continue a UTF-8 sequence (``translate`` deletes them).
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


def planes(data: bytes, width: int) -> bytes:
    """Integers of ``width`` bytes as byte planes: all first bytes, then all second bytes, ...

    Small counts have mostly zero high bytes; grouped together they compress
    to almost nothing (10 MB of English: 337 KB -> 305 KB with zlib).
    """
    return b"".join(data[i::width] for i in range(width))


def unplanes(data: bytes, width: int) -> bytes:
    out = bytearray(len(data))
    plane = len(data) // width
    for i in range(width):
        out[i::width] = data[i * plane:(i + 1) * plane]
    return bytes(out)


def read_header(line: bytes, name: str, trust_pattern: bool) -> dict:
    try:
        header = json.loads(line.decode("ascii"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CountsFormatError(f"{name} is not a bytepair piece-count table (no '{FORMAT}' header line)")
    if not line.endswith(b"\n"):
        raise CountsFormatError(f"{name} is corrupt: the header line does not end the line")
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CountsFormatError(f"{name} has an invalid format version {version!r}")
    if version > SPM_VERSION:
        raise CountsFormatError(
            f"{name} has format version {version}; this bytepair reads up to {SPM_VERSION}"
        )
    for key in ("pieces", "piece_bytes", "total"):
        value = header.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise CountsFormatError(f"{name} is corrupt: {key!r} must be a non-negative integer")
    if header["total"] > MAX_COUNT:
        raise CountsFormatError(f"{name} is corrupt: 'total' {header['total']} exceeds 2**63 - 1")
    if header["pieces"] > header["piece_bytes"]:
        raise CountsFormatError(f"{name} is corrupt: 'pieces' {header['pieces']} is more than "
                                f"'piece_bytes' {header['piece_bytes']} (a piece has a byte at least)")
    # The body is 12 bytes a piece plus the pieces: a size no address space holds is damage.
    if 12 * header["pieces"] + header["piece_bytes"] + MAX_HEADER >= sys.maxsize:
        raise CountsFormatError(f"{name} is corrupt: 'pieces' {header['pieces']} and 'piece_bytes' "
                                f"{header['piece_bytes']} declare a table larger than memory can hold")
    _read_sentencepiece(header, name)
    if "pattern" not in header:
        raise CountsFormatError(f"{name} is corrupt: the header has no 'pattern'")
    try:  # a table's pattern is always a regex source: a bare word is that literal regex
        stored_pattern(header["pattern"], trusted=trust_pattern, bare_words=True)
    except UntrustedPattern as exc:  # not corrupt: a table to trust
        raise CountsFormatError(f"{name} ", *exc.parts) from None
    except ValueError as exc:
        raise CountsFormatError(f"{name} is corrupt: {exc}") from None
    return header


def _read_sentencepiece(header: dict, name: str) -> None:
    """A version 3 header's ``sentencepiece`` rules (and ``skipped_lines``) checked and made a
    :class:`TextRules` in place; an older header has neither."""
    if header["version"] < SPM_VERSION:
        for key in ("sentencepiece", "skipped_lines"):
            if key in header:
                raise CountsFormatError(f"{name} is corrupt: a version {header['version']} header "
                                        f"has {key!r}, which only version {SPM_VERSION} holds")
        return
    if "sentencepiece" not in header:
        raise CountsFormatError(f"{name} is corrupt: a version {SPM_VERSION} header has no 'sentencepiece' rules")
    if header.get("pattern", 0) is not None:
        raise CountsFormatError(f"{name} is corrupt: a table of sentencepiece words has the "
                                f"pattern {header.get('pattern')!r}, not null")
    skipped = header.get("skipped_lines")
    if not isinstance(skipped, int) or isinstance(skipped, bool) or not 0 <= skipped <= MAX_COUNT:
        raise CountsFormatError(f"{name} is corrupt: 'skipped_lines' must be a non-negative integer")
    from bytepair.split.spm_text import TextRules  # only for sentencepiece's words: not at import

    try:
        header["sentencepiece"] = TextRules.from_json(header["sentencepiece"])
    except ValueError as exc:
        raise CountsFormatError(f"{name} is corrupt: {exc}") from None
