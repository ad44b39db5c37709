"""Reading Parquet files (with the optional ``pyarrow``): one document per row of a string column.

Rows are read one record batch of about :data:`PARQUET_BATCH_BYTES` at a
time, so memory does not grow with the row groups' size. Nulls, invalid UTF-8,
damaged pages, non-string columns, unknown columns and files that are not
Parquet are errors naming the file (and the row group and row, where there is one).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from bytepair._util.errors import Advice, InputError
from bytepair.read.paths import RemoteFile


def pyarrow_module(path: Path):
    """``(pyarrow, pyarrow.parquet)``, or an ImportError that says how to install them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ImportError(
            f"{path}: reading Parquet files needs pyarrow: pip install 'bytepair[parquet]'"
        ) from None
    return pyarrow, pyarrow.parquet


@contextlib.contextmanager
def open_parquet(path: Path | RemoteFile, column: str):
    """The ``ParquetFile`` of ``path``, checked to hold a string column ``column``."""
    pa, pq = pyarrow_module(path)
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(path.open()) if isinstance(path, RemoteFile) else path
        try:
            parquet = pq.ParquetFile(source, buffer_size=1 << 20, pre_buffer=False)
        except pa.ArrowException as exc:
            raise ValueError(f"{path}: not a Parquet file: {exc}") from None
        stack.callback(parquet.close)
        _check_column(pa, parquet, path, column)
        yield parquet


def _check_column(pa, parquet, path, column: str) -> None:
    schema = parquet.schema_arrow
    if column not in schema.names:
        names = ", ".join(repr(n) for n in schema.names) or "none"
        raise ValueError(f"{path}: no column {column!r}; the columns are {names}")
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or getattr(pa.types, "is_string_view", lambda _: False)(kind)):
        raise ValueError(f"{path}: column {column!r} holds {kind}, not strings")


def parquet_row_groups(path: Path, column: str) -> int:
    """The number of row groups of a Parquet file with a string column ``column``.

    Reads only the footer.
    """
    with open_parquet(path, column) as parquet:
        return parquet.metadata.num_row_groups


#: Rows of a Parquet row group are read in record batches of about this many bytes.
PARQUET_BATCH_BYTES = 1 << 20


def read_parquet(path: Path, column: str, *, text: bool, start: int = 0,
                 end: int | None = None) -> Iterator[str | bytes]:
    """One document per row of ``column``, row groups ``start`` to ``end`` (exclusive).

    A row group is read in record batches of about :data:`PARQUET_BATCH_BYTES`
    (by its average row size), so memory does not grow with the size of the
    row group. A null row, invalid UTF-8 (with ``text``) and a page that does
    not decode raise ValueError naming the file, the row group and, where
    known, the row (counted from 0 over the file).
    """
    pa, _ = pyarrow_module(path)
    with open_parquet(path, column) as parquet:
        metadata = parquet.metadata
        stop = metadata.num_row_groups if end is None else min(end, metadata.num_row_groups)
        first_row = sum(metadata.row_group(g).num_rows for g in range(start))
        for group in range(start, stop):
            where = f"{path}: row group {group}"
            for values in _batches_of(pa, parquet, group, column, where):
                if values.null_count:
                    row = values.is_null().to_pylist().index(True)
                    raise ValueError(f"{where}, row {first_row + row}: column {column!r} is null")
                # Bytes straight from Arrow's buffers: no decode and re-encode in byte mode.
                raw = values.cast(pa.large_binary()).to_pylist()
                yield from (_decoded(raw, f"{where}, row", first_row, column) if text else raw)
                first_row += len(values)


def _batches_of(pa, parquet, group: int, column: str, where: str) -> Iterator:
    """The column ``column`` of row group ``group``, one record batch at a time.

    Damaged pages (bad compression, a stream cut short) raise ValueError
    naming ``where``: Arrow's own message names neither the file nor the group.
    """
    meta = parquet.metadata.row_group(group)
    row_bytes = max(1, meta.total_byte_size // max(meta.num_rows, 1))
    rows = max(1, PARQUET_BATCH_BYTES // row_bytes)
    try:
        batches = parquet.iter_batches(batch_size=rows, row_groups=[group], columns=[column],
                                       use_threads=False)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            yield batch.column(0)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{where} is unreadable: {exc}") from None


def _decoded(raw: list[bytes], where: str, first_row: int, column: str) -> list[str]:
    """``raw`` as text; a row that is not UTF-8 raises ValueError naming it."""
    try:
        return [value.decode("utf-8") for value in raw]
    except UnicodeDecodeError:
        for row, value in enumerate(raw):
            try:
                value.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{where} {first_row + row}: column {column!r}: invalid UTF-8 at byte offset "
                    f"{exc.start} (only byte mode, ", Advice("pretokenize=None"),
                    ", accepts any bytes)"
                ) from None
        raise
