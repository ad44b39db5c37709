"""The model file's envelope: format name, version, one merge per line, written atomically.

Each model type describes itself (its ``kind`` and header fields) and calls
:func:`write_model_file`; :mod:`bytepair.formats.load` reads the files back and is the
one module that knows every model type.
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from itertools import chain, islice

from bytepair._util.atomic import open_atomically

FORMAT = "bytepair-model"
#: The newest version: 2 adds the ``superbpe`` field and a tokenizer's ``ids`` map. A file is
#: written with the oldest version that holds its fields, so readers of version 1 read every
#: model that has neither.
VERSION = 2


#: Merge lines written at a time: the file is written in parts of this many lines, so that
#: writing a model adds little to what the process holds (a memory limit covers it).
LINES_AT_ONCE = 4096


def dumps(kind: str, fields: dict, merges) -> str:
    """The file text: the header (format, version, kind, ``fields``), then one merge per line.

    One merge per line keeps the file readable and diffable. O(merges).

    >>> print(dumps("words", {"end_of_word": None}, []), end="")
    {"format": "bytepair-model", "version": 1, "kind": "words", "end_of_word": null, "checksum": "sha256:...", "merges": []}
    """
    return "".join(_parts(kind, fields, merges))


def _parts(kind: str, fields: dict, merges):
    """:func:`dumps`'s text in parts of :data:`LINES_AT_ONCE` merge lines; the merges are
    never all held as rows (lists of Python ints) at once."""
    version = 2 if "superbpe" in fields or "ids" in fields else 1
    header = {"format": FORMAT, "version": version, "kind": kind, **fields,
              "checksum": checksum(kind, fields, _Rows(merges))}
    head = json.dumps(header, ensure_ascii=False)[:-1]
    if not merges:
        yield f'{head}, "merges": []}}\n'
        return
    yield f'{head},\n "merges": [\n'
    for at in range(0, len(merges), LINES_AT_ONCE):
        rows = _Rows(merges[at:at + LINES_AT_ONCE])
        yield ",\n".join(" " + json.dumps(list(row), ensure_ascii=False) for row in rows)
        yield ",\n" if at + LINES_AT_ONCE < len(merges) else "\n ]}\n"


class _Rows:
    """The merges as file rows ``(left, right, count, replacements)``, made as they are read."""

    def __init__(self, merges):
        self.merges = merges

    def __iter__(self):
        return ((m.left, m.right, m.count, m.replacements) for m in self.merges)


def write_model_file(path: str | os.PathLike, kind: str, fields: dict, merges) -> None:
    """Write a model file atomically (see :func:`dumps` and ``docs/format.md``), in parts."""
    with open_atomically(path) as handle:
        for part in _parts(kind, fields, merges):
            handle.write(part.encode("utf-8"))


def checksum(kind: str, fields: dict, rows: list) -> str:
    """``"sha256:<hex>"`` of what a model file says: its kind, header fields and merge rows.

    It covers the content, not the text: a file re-indented or re-written by a JSON tool
    keeps it, a changed number or string does not (:func:`bytepair.load` refuses such a
    file). The format name and version are not covered (they only say how to read the
    rest). O(merges).

    >>> checksum("bytes", {"pattern": None}, [[97, 98, 3, 3]])[:15]
    'sha256:3754dced'
    """
    import hashlib  # at first use: its OpenSSL binding is slow to import

    header = json.dumps({"kind": kind, **fields}, sort_keys=True, ensure_ascii=False,
                        separators=(",", ":"))
    digest = hashlib.sha256(header.encode("utf-8", "surrogatepass"))
    try:
        rows_left = iter(rows)
        while part := array("q", chain.from_iterable(islice(rows_left, LINES_AT_ONCE))):
            if sys.byteorder != "little":  # byte models: integers only
                part.byteswap()
            digest.update(part.tobytes())
    except (TypeError, OverflowError):
        digest = hashlib.sha256(header.encode("utf-8", "surrogatepass"))
        digest.update(json.dumps([list(row) for row in rows], ensure_ascii=False,
                                 separators=(",", ":"))
                      .encode("utf-8", "surrogatepass"))
    return "sha256:" + digest.hexdigest()

