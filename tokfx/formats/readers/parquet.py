"""Parquet documents: a .parquet file with its text in a string column (`text` by default) and
optionally its id in another (FineWeb's layout: text, id, dump, url, ...). Only those columns
are read, one record batch at a time: memory holds a batch and the pages it is decoded from,
never the file or a whole row group.

A file can be read in ranges of row groups, [first, end), each holding about an equal share of
the file's bytes. A document's place is its row in the whole file, counted from 1, so that
without an id column its id, `file:ROW`, is the same however the file is cut.

Bad input is a Rejection naming the file and row: a null text or id, text that is not valid
UTF-8 (Arrow does not check what a Parquet writer stored). A file without the text column (or
whose text column does not hold strings) or without the id column, a file that is not Parquet
or is truncated or corrupt, and a file with no rows are rejected whole; read in ranges, such a
file is rejected by the range that starts it, once (a corrupt row group, found only when it is
read, by the range that holds it).
"""
from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from tokfx.formats.documents import Document, Rejection
from tokfx.formats.readers.kept_fields import arrow_type
from tokfx.formats.readers.reader import Reader, ReadOptions, ReadRange

# Rows per record batch: FineWeb's documents average a few KB, so a batch holds a few MB of text.
_BATCH_ROWS = 1024
# Bytes read at a time: pages are read through a buffer this size, not a column chunk at once.
_READ_BYTES = 1 << 20
# What pyarrow raises for a file it cannot read (ArrowInvalid for a bad footer, OSError for a
# corrupt page, ...).
_UNREADABLE = (pa.ArrowException, OSError)


def _open(raw: BinaryIO) -> pq.ParquetFile:
    # PythonFile needs only read, seek, tell and `closed`: `raw` may be a Beam FileSystems file.
    # pre_buffer (pyarrow's default) would read every row group asked for before the first batch.
    return pq.ParquetFile(pa.PythonFile(raw, mode="r"), pre_buffer=False, buffer_size=_READ_BYTES)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _is_string(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _columns(schema: pa.Schema, options: ReadOptions) -> list[str] | str:
    """The columns to read, or why the file cannot be read."""
    wanted = list(dict.fromkeys(f for f in (options.text_field, options.id_field) if f is not None))
    for column in wanted:
        found = len(schema.get_all_field_indices(column))
        if found != 1:
            return (f"{found} columns named {column!r}" if found else
                    f"no {column!r} column (its columns: {', '.join(schema.names)})")
    kind = schema.field(options.text_field).type
    if not _is_string(kind):
        return f"column {options.text_field!r} is {kind}, not strings"
    # Kept fields (--keep-fields): a column the file lacks is null; one of another type is refused.
    for column, kept in options.keep:
        found = schema.get_all_field_indices(column)
        if len(found) > 1:
            return f"{len(found)} columns named {column!r}"
        if found and arrow_type(schema.field(column).type) != kept:
            return (f"column {column!r} is {arrow_type(schema.field(column).type)}, not {kept} as"
                    f" --keep-fields keeps it in this run")
        if found and column not in wanted:
            wanted.append(column)
    return wanted


_NOT_UTF8 = object()


def _values(column: pa.Array) -> list:
    """The column's values as Python objects, None for null and _NOT_UTF8 for a string that is not
    valid UTF-8 (found value by value, only when converting the whole column failed)."""
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        values = []
        for value in column:
            try:
                values.append(value.as_py())
            except UnicodeDecodeError:
                values.append(_NOT_UTF8)
        return values


def _fault(value, column: str | None) -> str | None:
    """Why a document cannot have `value` (from `column`) as its text or id; None if it can."""
    if value is None:
        return f"{column!r} is null"
    return f"{column!r} is not valid UTF-8" if value is _NOT_UTF8 else None


def _documents(batch: pa.RecordBatch, rows_before: int, name: str,
               options: ReadOptions) -> Iterator[Document | Rejection]:
    """The documents of one batch, whose first row follows `rows_before` rows of the file."""
    texts = _values(batch.column(options.text_field))
    ids = _values(batch.column(options.id_field)) if options.id_field is not None else None
    names = set(batch.schema.names)
    # Each kept column's values, or nulls where the file has none.
    kept = [_values(batch.column(column)) if column in names else [None] * len(texts)
            for column, _ in options.keep]
    for k, text in enumerate(texts):
        row = rows_before + k + 1
        source = f"{name}:{row}"
        key = source if ids is None else ids[k]
        fields = tuple(values[k] for values in kept)
        fault = (_fault(text, options.text_field) or _fault(key, options.id_field)
                 or next((f"{column!r} is not valid UTF-8" for (column, _), value in zip(options.keep, fields)
                          if value is _NOT_UTF8), None))
        yield Rejection(name, row, fault) if fault else Document(str(key), text, source, fields)


def read_parquet(raw: BinaryIO, name: str, options: ReadOptions,
                 row_groups: ReadRange | None = None) -> Iterator[Document | Rejection]:
    """The documents of an open Parquet file, or of its row groups [first, end), streamed."""
    if raw.seek(0, 2) == 0:
        yield Rejection(name, None, "empty file", whole_file=True)
        return
    try:
        file = _open(raw)
    except _UNREADABLE as exc:
        yield Rejection(name, None, f"not Parquet, or truncated or corrupt ({_one_line(exc)})",
                        whole_file=True)
        return
    meta = file.metadata
    first, end = row_groups or (0, meta.num_row_groups)
    columns = _columns(file.schema_arrow, options)
    fault = columns if isinstance(columns, str) else "empty file" if meta.num_rows == 0 else None
    if fault:
        # Only the range that starts the file says so: a file cut into ranges is rejected once.
        if first == 0:
            yield Rejection(name, None, fault, whole_file=True)
        return
    row = sum(meta.row_group(g).num_rows for g in range(first))
    try:
        for batch in file.iter_batches(batch_size=_BATCH_ROWS, row_groups=range(first, end),
                                       columns=columns, use_pandas_metadata=False):
            yield from _documents(batch, row, name, options)
            row += batch.num_rows
    except _UNREADABLE as exc:
        yield Rejection(name, None, f"truncated or corrupt after row {row} ({_one_line(exc)})",
                        whole_file=True)


def balanced_ranges(sizes: list[int], parts: int) -> list[ReadRange]:
    """About `parts` ranges [first, end) of the items of `sizes`, together all of them in order,
    each about an equal share of their sum: a cut goes at the item boundary nearest to each
    k/parts of the sum (cuts that coincide are one)."""
    ends = [0, *itertools.accumulate(sizes)]  # ends[i]: the sum of sizes[:i]
    cuts = {0, len(sizes)}
    for k in range(1, parts):
        share = ends[-1] * k / parts
        i = bisect.bisect_left(ends, share)  # the first boundary at or past the share
        cuts.add(i - 1 if i > 0 and share - ends[i - 1] < ends[i] - share else i)
    cuts = sorted(cuts)
    return list(zip(cuts, cuts[1:]))


def parquet_ranges(raw: BinaryIO, parts: int, options: ReadOptions) -> list[ReadRange]:
    """About `parts` ranges of whole row groups covering the file, each about an equal share of
    its bytes (the row groups' sizes as stored). A file that cannot be read, or has no row
    groups, is one range, which the reader rejects."""
    try:
        meta = _open(raw).metadata if raw.seek(0, 2) else None
    except _UNREADABLE:
        meta = None
    if meta is None or meta.num_row_groups == 0:
        return [(0, 0)]
    groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
    return balanced_ranges([sum(group.column(c).total_compressed_size
                                for c in range(group.num_columns)) for group in groups], parts)


def parquet_field_types(raw: BinaryIO, name: str, options: ReadOptions, names: tuple[str, ...]) -> dict:
    """{column: its type as kept} for the columns of `names` the file has (once); a file that
    cannot be read tells nothing (reading it rejects it)."""
    try:
        schema = _open(raw).schema_arrow if raw.seek(0, 2) else None
    except _UNREADABLE:
        schema = None
    if schema is None:
        return {}
    return {column: arrow_type(schema.field(column).type) for column in names
            if len(schema.get_all_field_indices(column)) == 1}


READER = Reader("parquet", (".parquet",), read_parquet, parquet_ranges, parquet_field_types)
