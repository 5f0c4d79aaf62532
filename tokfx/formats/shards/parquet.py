"""A shard's Parquet file: `id`, `input_ids: list<int32>`, `num_tokens`, `source` (the schema
of schemas/shard.arrow.json), zstd, with footer metadata."""
from __future__ import annotations

import json
import os
from array import array
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from itertools import accumulate

import pyarrow as pa
import pyarrow.parquet as pq

_ARROW_TYPES = {"string": pa.string(), "int32": pa.int32(), "list<int32>": pa.list_(pa.int32())}


@cache
def shard_schema() -> pa.Schema:
    """The Arrow schema of a shard, built from schemas/shard.arrow.json."""
    doc = json.loads(resources.files("tokfx.schemas").joinpath("shard.arrow.json").read_text())
    return pa.schema([pa.field(f["name"], _ARROW_TYPES[f["type"]], nullable=f["nullable"])
                      for f in doc["fields"]])


def write_parquet(path: str | os.PathLike, docs: Sequence[tuple[str, Sequence[int], str]],
                  lengths: array, metadata: Mapping[str, str]) -> None:
    """(id, ids, source) docs in their order; `lengths` their token counts (array('i'))."""
    table = pa.table({"id": [d[0] for d in docs], "input_ids": _int32_lists(docs, lengths),
                      "num_tokens": _int32_array(lengths), "source": [d[2] for d in docs]},
                     schema=shard_schema().with_metadata(dict(metadata)))
    pq.write_table(table, path, compression="zstd")


def _int32_array(values: array) -> pa.Array:
    """An Arrow int32 array over an array('i')'s memory (both native byte order)."""
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


def _int32_lists(docs: Sequence[tuple[str, Sequence[int], str]], lengths: array) -> pa.Array:
    """The documents' ids as one Arrow list<int32> column, built from flat buffers: Arrow's
    conversion from Python lists costs tens of nanoseconds per id."""
    flat = array("i")
    for _, ids, _ in docs:
        flat.extend(ids if isinstance(ids, array) and ids.typecode == "i" else array("i", ids))
    offsets = array("i", [0])
    offsets.extend(accumulate(lengths))
    return pa.ListArray.from_arrays(_int32_array(offsets), _int32_array(flat))
