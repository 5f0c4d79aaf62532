"""Pre-token counts as a Parquet table (`pretoken: binary, count: uint64`), and their pruning.

A counts file lets a user re-train without re-reading the corpus: `tokfx count` writes one,
`tokfx train --counts FILE` starts from it.
"""
from __future__ import annotations

import heapq
import os
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.parquet as pq

COUNTS_SCHEMA = pa.schema([pa.field("pretoken", pa.binary(), nullable=False),
                           pa.field("count", pa.uint64(), nullable=False)])


def write_counts(path: str | os.PathLike, counts: Mapping[bytes, int]) -> None:
    """Write `counts` sorted by pre-token, so the same counts give the same file."""
    keys = sorted(counts)
    table = pa.table({"pretoken": keys, "count": [counts[k] for k in keys]}, schema=COUNTS_SCHEMA)
    pq.write_table(table, path, compression="zstd")


def read_counts(path: str | os.PathLike) -> dict[bytes, int]:
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{path}: not a Parquet counts file ({exc})") from None
    if not table.schema.equals(COUNTS_SCHEMA, check_metadata=False):
        raise ValueError(f"{path}: a counts file has columns pretoken: binary, count: uint64;"
                         f" this one has {table.schema.to_string(show_schema_metadata=False)!r}")
    return dict(zip(table.column("pretoken").to_pylist(), table.column("count").to_pylist()))


def most_frequent(counts: Mapping[bytes, int], n: int) -> dict[bytes, int]:
    """The `n` most frequent pre-tokens; ties go to the smaller pre-token, so the cut is stable."""
    if len(counts) <= n:
        return dict(counts)
    return dict(heapq.nsmallest(n, counts.items(), key=lambda kv: (-kv[1], kv[0])))
