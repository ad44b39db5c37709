"""Token files: documents encoded into one flat array of IDs, and read back.

The layout is what training scripts memory-map (nanoGPT's ``train.bin``): the
IDs as raw little-endian unsigned integers (``uint16`` or ``uint32``), the
documents one after the other, optionally with one ID appended after each
document (an end-of-text token). Nothing else is in the file: the reader
must know the dtype.

The file is written whole or not at all (:func:`bytepair._util.atomic.open_atomically`):
into a temporary file in the target's directory, renamed over the target
once complete; an error or interruption leaves no file.
"""

from __future__ import annotations

import os
import sys
from array import array
from pathlib import Path
from typing import Iterable, Iterator

from bytepair._util.atomic import open_atomically

#: dtype name -> (array typecode, bytes per ID).
DTYPES = {"uint16": ("H", 2), "uint32": ("I", 4)}
#: Documents are encoded in batches of about this many characters.
BATCH_CHARS = 1 << 22
#: Per-line files are encoded in blocks of about this many bytes, one per thread at a time.
LINE_BLOCK_BYTES = 1 << 20


def check_dtype(dtype: str, vocab_size: int, name: str = "dtype") -> str:
    """``dtype`` if every ID of a vocabulary of ``vocab_size`` fits in it."""
    if dtype not in DTYPES:
        raise ValueError(f"{name}: {dtype!r} is not one of {', '.join(DTYPES)}")
    limit = 1 << (8 * DTYPES[dtype][1])
    if vocab_size > limit:
        raise ValueError(
            f"{name} {dtype}: the vocabulary has {vocab_size} tokens, but {dtype} holds IDs "
            f"up to {limit - 1} only (use uint32)")
    return dtype


def resolve_append(tokenizer, token: str | None, name: str = "append") -> int | None:
    """The ID to put after each document: a special token's text, or an ID in the vocabulary."""
    if token is None:
        return None
    if token in tokenizer.special_tokens:
        return tokenizer.special_tokens[token]
    if token.isascii() and token.isdigit():
        value = int(token)
        if value >= tokenizer.vocab_size:
            raise ValueError(
                f"{name}: ID {value} is outside the vocabulary (0..{tokenizer.vocab_size - 1})")
        return value
    known = ", ".join(map(repr, tokenizer.special_tokens)) or "none"
    raise ValueError(
        f"{name}: {token!r} is neither a special token of this model (special tokens: {known}) "
        "nor a token ID")


def _batches(documents: Iterable, limit: int = BATCH_CHARS) -> Iterator[list]:
    batch, size = [], 0
    for doc in documents:
        batch.append(doc)
        size += len(doc)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def write_token_file(path: str | os.PathLike, documents: Iterable, encode_array, *,
                     progress=None) -> tuple[int, int, int]:
    """Write the IDs of ``documents`` to ``path`` as one little-endian array.

    ``encode_array`` turns a list of documents into one ``array`` of their
    IDs (with any appended ID), such as :meth:`Tokenizer.encode_to_array`.
    Returns (documents, tokens, input size). ``progress`` (a tqdm bar or
    None) is advanced by the size of each batch. Memory: one batch of about
    4 MB of text and its IDs at a time.
    """
    documents_seen = tokens = size = 0
    with open_atomically(path) as handle:
        for batch in _batches(documents):
            ids = encode_array(batch)
            if sys.byteorder == "big":
                ids.byteswap()
            ids.tofile(handle)
            tokens += len(ids)
            documents_seen += len(batch)
            batch_size = sum(map(len, batch))
            size += batch_size
            if progress is not None:
                progress.update(batch_size)
    return documents_seen, tokens, size


def write_token_parts(path: str | os.PathLike, parts: Iterable, encode_part, *, threads: int = 1,
                      progress=None) -> tuple[int, int, int]:
    """Write the IDs of ``parts`` to ``path`` as one little-endian array, ``threads`` parts at once.

    ``encode_part(part)`` returns ``(ids, documents, size)``: an ``array`` of the
    part's IDs, how many documents and how much input it held. It runs on
    ``threads`` worker threads while this thread reads the next parts, so
    reading and encoding overlap; the parts are written in their order.
    Returns (documents, tokens, input size), and advances ``progress`` by each
    part's size. Memory: at most ``2 * threads`` parts and their IDs.
    """
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor  # at first use, not at import (~5 ms)

    documents_seen = tokens = size = 0
    pending: deque = deque()
    pool = ThreadPoolExecutor(threads)

    def write_oldest(handle) -> None:
        nonlocal documents_seen, tokens, size
        ids, documents, part_size = pending.popleft().result()
        if sys.byteorder == "big":
            ids.byteswap()
        ids.tofile(handle)
        documents_seen += documents
        tokens += len(ids)
        size += part_size
        if progress is not None:
            progress.update(part_size)

    try:
        with open_atomically(path) as handle:
            for part in parts:
                pending.append(pool.submit(encode_part, part))
                if len(pending) >= 2 * threads:
                    write_oldest(handle)
            while pending:
                write_oldest(handle)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # on an error: no part starts after it
    return documents_seen, tokens, size


def encode_bytes_to_array(model, documents: list[bytes], dtype: str, append: int | None) -> array:
    """Byte mode (no pre-tokenizer): the IDs of ``bytes`` documents, ``append`` after each."""
    typecode, itemsize = DTYPES[dtype]
    ids = array(typecode)
    data = model.encode_batch_array(documents, itemsize, append)
    if data is not None:
        ids.frombytes(data)
        return ids
    for doc in documents:
        ids.extend(model.encode(doc))
        if append is not None:
            ids.append(append)
    return ids


def read_token_file(path: str | os.PathLike, dtype: str, name: str = "FILE") -> array:
    """The IDs of a token file; its length must be a whole number of ``dtype`` items."""
    typecode, width = DTYPES[dtype]
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        if exc.strerror is None:
            raise
        raise type(exc)(exc.errno, f"{name}: {exc.strerror}", exc.filename) from None
    if len(data) % width:
        raise ValueError(
            f"{name}: {os.fspath(path)!r} holds {len(data)} bytes, not a whole number of "
            f"{dtype} IDs ({width} bytes each)")
    ids = array(typecode)
    ids.frombytes(data)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids
