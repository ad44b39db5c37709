"""Reading a training corpus: files, globs, directories, JSON Lines, gzip, iterables.

This module gathers the read stage's public names; each lives in the module
of what it reads: :mod:`~bytepair.read.paths` (where files are: paths,
globs, URLs), :mod:`~bytepair.read.text` (plain text and JSON Lines),
:mod:`~bytepair.read.parquet`, :mod:`~bytepair.read.files` (:class:`Files`)
and :mod:`~bytepair.read.documents` (:class:`Documents`, :func:`read_corpus`).

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

from bytepair.read.paths import (JSONL_SUFFIXES, PARQUET_SUFFIX, URL_MARK, RemoteFile, file_of,
                                 is_jsonl, is_parquet, portable_name, reads_in_blocks)
from bytepair.read.text import CHECK_CHUNK, read_file, strip_line_end, unreadable
from bytepair.read.parquet import PARQUET_BATCH_BYTES, parquet_row_groups, read_parquet
from bytepair.read.files import Files, files_named
from bytepair.read.documents import (PATH_SUFFIXES, Documents, as_files, iter_documents,
                                     read_corpus)

__all__ = ["CHECK_CHUNK", "Documents", "Files", "JSONL_SUFFIXES", "PARQUET_BATCH_BYTES",
           "PARQUET_SUFFIX", "PATH_SUFFIXES", "RemoteFile", "URL_MARK", "as_files", "file_of",
           "files_named", "is_jsonl", "is_parquet", "iter_documents", "parquet_row_groups",
           "portable_name", "read_corpus", "read_file", "read_parquet", "reads_in_blocks",
           "strip_line_end", "unreadable"]
