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
from itertools import chain

from bytepair._util.atomic import write_atomically

FORMAT = "bytepair-model"
#: The newest version: 2 adds the ``superbpe`` field and a tokenizer's ``ids`` map. A file is
#: written with the oldest version that holds its fields, so readers of version 1 read every
#: model that has neither.
VERSION = 2


def dumps(kind: str, fields: dict, merges) -> str:
    """The file text: the header (format, version, kind, ``fields``), then one merge per line.

    One merge per line keeps the file readable and diffable. O(merges).
    """
    version = 2 if "superbpe" in fields or "ids" in fields else 1
    rows = [[m.left, m.right, m.count, m.replacements] for m in merges]
    header = {"format": FORMAT, "version": version, "kind": kind, **fields,
              "checksum": checksum(kind, fields, rows)}
    head = json.dumps(header, ensure_ascii=False)[:-1]
    body = ",\n".join(" " + json.dumps(row, ensure_ascii=False) for row in rows)
    return f'{head},\n "merges": [\n{body}\n ]}}\n' if rows else f'{head}, "merges": []}}\n'


def write_model_file(path: str | os.PathLike, kind: str, fields: dict, merges) -> None:
    """Write a model file atomically (see :func:`dumps` and ``docs/format.md``)."""
    write_atomically(path, dumps(kind, fields, merges))


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
        numbers = array("q", chain.from_iterable(rows))  # byte models: integers only
    except (TypeError, OverflowError):
        digest.update(json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
                      .encode("utf-8", "surrogatepass"))
    else:
        if sys.byteorder != "little":
            numbers.byteswap()
        digest.update(numbers.tobytes())
    return "sha256:" + digest.hexdigest()

