"""A shard's Parquet file: `id`, `input_ids: list<int32>`, `num_tokens`, `source` (the schema
of schemas/shard.arrow.json), zstd, with footer metadata, written one row group at a time."""
from __future__ import annotations

import json
from array import array
from collections.abc import Mapping
from functools import cache
from importlib import resources
from itertools import accumulate
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

_ARROW_TYPES = {"string": pa.string(), "int32": pa.int32(), "list<int32>": pa.list_(pa.int32())}


@cache
def shard_schema() -> pa.Schema:
    """The Arrow schema of a shard, built from schemas/shard.arrow.json."""
    doc = json.loads(resources.files("tokfx.schemas").joinpath("shard.arrow.json").read_text())
    return pa.schema([pa.field(f["name"], _ARROW_TYPES[f["type"]], nullable=f["nullable"])
                      for f in doc["fields"]])


def _int32_array(values: array) -> pa.Array:
    """An Arrow int32 array over an array('i')'s memory (both native byte order)."""
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


class ParquetShardWriter:
    """Documents in, row groups out: a row group is written once its documents hold
    `row_group_bytes` of token ids, so memory holds one row group whatever the shard's size.

    The ids go into Arrow from one flat array('i') per row group: Arrow's conversion from
    Python lists costs tens of nanoseconds per id."""

    def __init__(self, file: BinaryIO, metadata: Mapping[str, str], row_group_bytes: int):
        self.file, self.row_group_bytes = file, row_group_bytes
        self._writer = pq.ParquetWriter(file, shard_schema().with_metadata(dict(metadata)),
                                        compression="zstd")
        self._start_group()

    def _start_group(self) -> None:
        self._doc_ids: list[str] = []
        self._sources: list[str] = []
        self._lengths = array("i")
        self._flat = array("i")

    def add(self, doc_id: str, ids: array, source: str) -> None:
        """One document; `ids` an array('i')."""
        self._doc_ids.append(doc_id)
        self._sources.append(source)
        self._lengths.append(len(ids))
        self._flat.extend(ids)
        if len(self._flat) * self._flat.itemsize >= self.row_group_bytes:
            self._write_group()

    def _write_group(self) -> None:
        if not self._doc_ids:
            return
        offsets = array("i", [0])
        offsets.extend(accumulate(self._lengths))
        table = pa.table({"id": self._doc_ids,
                          "input_ids": pa.ListArray.from_arrays(_int32_array(offsets),
                                                                _int32_array(self._flat)),
                          "num_tokens": _int32_array(self._lengths), "source": self._sources},
                         schema=self._writer.schema)
        self._writer.write_table(table)
        self._start_group()

    def close(self) -> None:
        self._write_group()
        self._writer.close()
        self.file.close()
