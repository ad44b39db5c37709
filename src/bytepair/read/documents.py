"""The start of training: a corpus as :class:`~bytepair.read.files.Files` or as :class:`Documents`.

:func:`read_corpus` turns what the caller gave (a path, a glob, a list of
``Path``, :class:`Files`, or an iterable of ``str``/``bytes``) into files to
read later or documents to read once, as a stream.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from bytepair.read.files import Files


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
        return checked_documents(self.iterable, text)


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


def checked_documents(iterable, text: bool) -> Iterator[str | bytes]:
    for index, doc in enumerate(iterable):
        if isinstance(doc, str):
            try:
                data = doc.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"corpus[{index}] is not text: {exc.reason} at {exc.start}") from None
            yield doc if text else data
        elif isinstance(doc, (bytes, bytearray, memoryview)):
            data = bytes(doc)
            yield decode_item(data, index) if text else data
        else:
            raise TypeError(f"corpus[{index}] must be str or bytes, got {type(doc).__name__}")


def decode_item(data: bytes, index: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"corpus[{index}]: invalid UTF-8 at byte offset {exc.start}") from None
