"""`--keep-fields`: the JSON fields or Parquet columns of a record copied into the shards beside
its ids (FineWeb's `url`, `date`, `language`, `score`, ...), with their types.

Every shard of a run has the same columns, so a kept field has one Arrow type for the whole run,
fixed in the launcher before anything is read (`kept_field_types`): the type of the column in
the first Parquet file (in the plan's order) that has it, or the type of the field's first
value in the first JSON-lines file whose first `SAMPLE_RECORDS` records hold it. A JSON value's
type is its kind: a string is `string`, true/false `bool`, an integer `int64`, any other number
`double`; an array or an object is not kept (refused: its element types could differ from
record to record). Then every record is checked against that type as it is read: a value of
another type (an integer fits `double`) is a bad record, named by its file and line (a
Parquet file whose column has another type: the whole file), refused under --on-error=fail
and rejected under skip. A field missing from a record (or null), and a column missing from a
Parquet file, is null in the shard; a .txt document has no fields, all null.
"""
from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

# JSON records read from a file's start to find a kept field's type.
SAMPLE_RECORDS = 1000

KeptField = tuple[str, pa.DataType]


def json_type(value) -> pa.DataType | str | None:
    """The Arrow type a JSON value is kept as; None for null; a reason for what is not kept."""
    if value is None:
        return None
    if isinstance(value, bool):  # before int: bool is an int in Python
        return pa.bool_()
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    if isinstance(value, str):
        return pa.string()
    return f"{'an array' if isinstance(value, list) else 'an object'} (--keep-fields keeps strings, numbers and booleans)"


def json_fault(name: str, value, kept: pa.DataType) -> str | None:
    """Why `value` of JSON field `name` cannot be kept as `kept`; None when it can."""
    found = json_type(value)
    if found is None or found == kept or (found == pa.int64() and kept == pa.float64()):
        return None
    if isinstance(found, str):
        return f"field {name!r} is {found}"
    return f"field {name!r} is {found}, not {kept} as --keep-fields keeps it in this run"


def json_values(record: dict, kept: Iterable[KeptField]) -> tuple | str:
    """The kept values of a parsed JSON record (None where missing), or the reason it is bad."""
    values = []
    for name, kind in kept:
        value = record.get(name)
        fault = json_fault(name, value, kind)
        if fault:
            return fault
        # An integer kept as double is stored as one (Arrow would refuse a mixed list).
        values.append(float(value) if kind == pa.float64() and isinstance(value, int) and not isinstance(value, bool)
                      else value)
    return tuple(values)


def arrow_type(kind: pa.DataType) -> pa.DataType:
    """A Parquet column's type as kept: a dictionary-encoded column as its values' type (files
    of one corpus encode the same column either way)."""
    return kind.value_type if pa.types.is_dictionary(kind) else kind

