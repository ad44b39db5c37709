"""The model file's envelope: format name, version, one merge per line, written atomically.

Each model type describes itself (its ``kind`` and header fields) and calls
:func:`write_model_file`; :mod:`bytepair.formats.load` reads the files back and is the
one module that knows every model type.
"""

from __future__ import annotations

import json
import os

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
    header = {"format": FORMAT, "version": version, "kind": kind, **fields}
    rows = [[m.left, m.right, m.count, m.replacements] for m in merges]
    head = json.dumps(header, ensure_ascii=False)[:-1]
    body = ",\n".join(" " + json.dumps(row, ensure_ascii=False) for row in rows)
    return f'{head},\n "merges": [\n{body}\n ]}}\n' if rows else f'{head}, "merges": []}}\n'


def write_model_file(path: str | os.PathLike, kind: str, fields: dict, merges) -> None:
    """Write a model file atomically (see :func:`dumps` and ``docs/format.md``)."""
    write_atomically(path, dumps(kind, fields, merges))
