"""A shard's Parquet file: `id`, `input_ids: list<int32>`, `num_tokens`, `source` (the schema
of schemas/shard.arrow.json), then the kept fields (--keep-fields, nullable, their types as the
run fixed them), zstd, with footer metadata, written one row group at a time."""
from __future__ import annotations

import contextlib
import json
from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from itertools import accumulate
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from tokfx.formats.readers.kept_fields import KeptField

_ARROW_TYPES = {"string": pa.string(), "int32": pa.int32(), "list<int32>": pa.list_(pa.int32())}


@cache
def shard_schema() -> pa.Schema:
    """The Arrow schema of a shard, built from schemas/shard.arrow.json."""
    doc = json.loads(resources.files("tokfx.schemas").joinpath("shard.arrow.json").read_text())
    return pa.schema([pa.field(f["name"], _ARROW_TYPES[f["type"]], nullable=f["nullable"])
                      for f in doc["fields"]])


# Token ids per chunk of the input_ids column handed to the Parquet writer (a row group is
# still one row group: the chunks are written one after the other into its column chunk).
# The writer works a chunk at a time: handed a row group's ids as one array (8 MB, the row
# groups then), it built its levels and encodings for all of them at once, 32 MiB of Arrow's
# memory at its peak, against 14-16 MiB in chunks (bench/README, "Per-worker cost"). The
# file's bytes do not depend on the chunks (tests/formats/test_output_files.py compares it
# with pyarrow writing the whole table).
CHUNK_IDS = 1 << 16

# The Parquet data page size (pyarrow's default: 1 MiB). The dictionary-encoded input_ids of a
# row group are held, encoded, until the column chunk is done: with 1 MiB pages pyarrow's
# writer peaked at 14 MiB for a row group of 8 MB of GPT-2 ids, at 6.7 MiB with 256 KiB pages,
# and the file was 1.2 % smaller and read 1.7x faster (bench/README, "Per-worker cost").
DATA_PAGE_BYTES = 256 << 10


def _int32_array(values: array) -> pa.Array:
    """An Arrow int32 array over an array('i')'s memory (both native byte order)."""
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


def _chunked_lists(offsets: array, flat: array) -> pa.ChunkedArray:
    """The list<int32> column of documents whose ids are flat[offsets[i]:offsets[i + 1]], as
    zero-copy slices of whole documents of about CHUNK_IDS ids each (a longer document is a
    slice of its own)."""
    lists = pa.ListArray.from_arrays(_int32_array(offsets), _int32_array(flat))
    chunks, start, documents = [], 0, len(offsets) - 1
    while start < documents:
        end = min(documents, bisect_left(offsets, offsets[start] + CHUNK_IDS))  # > start
        chunks.append(lists.slice(start, end - start))
        start = end
    return pa.chunked_array(chunks, type=lists.type)


class ParquetShardWriter:
    """Row groups in, one Parquet file out: the caller (ShardWriter) gathers a row group's
    documents, so memory holds one row group whatever the shard's size.

    The ids go into Arrow from one flat array('i') per row group: Arrow's conversion from
    Python lists costs tens of nanoseconds per id."""

    def __init__(self, file: BinaryIO, metadata: Mapping[str, str], kept: Sequence[KeptField] = ()):
        self.file = file
        schema = shard_schema()
        for name, kind in kept:
            schema = schema.append(pa.field(name, kind, nullable=True))
        self._writer = pq.ParquetWriter(file, schema.with_metadata(dict(metadata)), compression="zstd",
                                        data_page_size=DATA_PAGE_BYTES)

    def write_group(self, doc_ids: list[str], flat: array, lengths: array, sources: list[str],
                    kept: Sequence[list] = ()) -> None:
        """One row group: the documents' ids, their token ids concatenated (array('i')), the
        number of token ids of each (array('i')), their sources, and each kept field's values."""
        if not doc_ids:
            return
        offsets = array("i", [0])
        offsets.extend(accumulate(lengths))
        columns = {"id": doc_ids,
                   "input_ids": _chunked_lists(offsets, flat),
                   "num_tokens": _int32_array(lengths), "source": sources}
        columns.update(zip(self._writer.schema.names[len(columns):], kept))
        table = pa.table(columns, schema=self._writer.schema)
        self._writer.write_table(table)

    def close(self) -> None:
        self._writer.close()
        self.file.close()

    def abort(self) -> None:
        """Close an unfinished file (the caller removes it). pyarrow's writer is closed first,
        writing its footer into the file still open: left open, it would close itself when
        garbage-collected, into the closed file ("Exception ignored in: ParquetWriter.__del__",
        a traceback after every Ctrl-C). A file that failed to take a write fails its footer too,
        which, being dropped anyway, is not an error."""
        with contextlib.suppress(OSError, ValueError):
            self._writer.close()
        self.file.close()

def parquet_counts(prefix: str) -> tuple[int, int]:
    """(documents, tokens) of `prefix.parquet`: its rows and the sum of their num_tokens."""
    import pyarrow.compute as pc  # here, not at import: 0.07 s of every pipeline worker's start-up

    table = pq.read_table(f"{prefix}.parquet", columns=["num_tokens"])
    return table.num_rows, pc.sum(table.column("num_tokens"), min_count=0).as_py() or 0


def parquet_rows(prefix: str, columns: list[str]):
    """The rows of `prefix.parquet` (dicts of `columns`), one row group in memory at a time."""
    file = pq.ParquetFile(f"{prefix}.parquet")
    for group in range(file.num_row_groups):
        yield from file.read_row_group(group, columns=columns).to_pylist()


def parquet_row(prefix: str, row: int) -> dict:
    """The `row`-th row of `prefix.parquet`, reading only its row group."""
    file = pq.ParquetFile(f"{prefix}.parquet")
    for group in range(file.num_row_groups):
        rows = file.metadata.row_group(group).num_rows
        if row < rows:
            return file.read_row_group(group).slice(row, 1).to_pylist()[0]
        row -= rows
    raise IndexError(f"{prefix}.parquet has fewer rows")


def parquet_document(prefix: str, row: int) -> list[int]:
    return parquet_row(prefix, row)["input_ids"]
