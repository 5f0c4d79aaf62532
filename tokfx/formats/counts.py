"""Pre-token counts as a Parquet table (`pretoken: binary, count: uint64`);
line counts (what SaGe's context="line" also trains on) the same way (`line: binary, count:
uint64`).

A counts file lets a user re-train without re-reading the corpus: `tokfx count` writes one (and
a lines file with `--lines-output`), `tokfx train --counts FILE [--lines FILE]` starts from it.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.parquet as pq


def _schema(unit: str) -> pa.Schema:
    return pa.schema([pa.field(unit, pa.binary(), nullable=False), pa.field("count", pa.uint64(), nullable=False)])


def write_counts(path: str | os.PathLike, counts: Mapping[bytes, int], unit: str = "pretoken") -> None:
    """Write `counts` sorted by key, so the same counts give the same file; `unit` names the
    key column ("pretoken", or "line" for line counts)."""
    keys = sorted(counts)
    table = pa.table({unit: keys, "count": [counts[k] for k in keys]}, schema=_schema(unit))
    pq.write_table(table, path, compression="zstd")


def read_counts(path: str | os.PathLike, unit: str = "pretoken") -> dict[bytes, int]:
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"{path}: not a Parquet counts file ({exc})") from None
    if not table.schema.equals(_schema(unit), check_metadata=False):
        raise ValueError(f"{path}: a {unit} counts file has columns {unit}: binary, count: uint64;"
                         f" this one has {table.schema.to_string(show_schema_metadata=False)!r}")
    return dict(zip(table.column(unit).to_pylist(), table.column("count").to_pylist()))

