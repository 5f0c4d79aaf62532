"""Reading a tokenizer file, which users download and so is untrusted input: bounded time and
memory (tokfx.limits), and every fault one `TokenizerFileError` naming the file and the field.

`read_json_file` bounds the file's size and its JSON nesting (counted without recursion, before
parsing); `Fields` reads values of exact types (an int is an int: not 116.0, not true, not
"116") and bounded sizes, the bulk of a vocabulary checked in C (`map`, `set`, `min`, `max`)
and walked item by item only to name the first bad one. JSON only: never pickle, never eval.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Collection
from itertools import chain
from pathlib import Path

from tokfx.errors import TokenizerFileError  # noqa: F401 (the formats' one error, defined below them)
from tokfx.limits import MAX_FILE_BYTES, MAX_JSON_DEPTH


def read_file_bytes(path: str | os.PathLike, source: str | None = None) -> bytes:
    """The file's bytes, refused past MAX_FILE_BYTES (checked before reading it)."""
    path = Path(path)
    source = source or str(path)
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise TokenizerFileError(source, None, f"larger than {MAX_FILE_BYTES:,} bytes")
    return data


def nesting_too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON `data` nests arrays and objects deeper than `limit`, without parsing it.

    Strings are cut out (escaped backslashes, then escaped quotes, go first, so every quote
    left delimits one), the brackets outside them kept as ( and ); each pass of
    replace("()", "") then removes one level. Unbalanced (invalid) input is judged by its
    matched pairs and its unclosed opening brackets: the parser refuses it either way, but
    must not recurse into 200,000 unclosed ones first.
    """
    text = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(text.split(b'"')[::2]).translate(_PARENS, _NOT_BRACKETS)
    for _ in range(limit):
        brackets = brackets.replace(b"()", b"")
    return b"()" in brackets or brackets.count(b"(") > limit


_PARENS = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def parse_json(data: bytes, source: str) -> object:
    """The JSON document of `data` (UTF-8), within MAX_JSON_DEPTH."""
    if nesting_too_deep(data):
        raise TokenizerFileError(source, None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TokenizerFileError(source, None, f"not JSON: {exc}") from None
    except RecursionError:  # unreachable after the depth check; kept so that no parse can raise it
        raise TokenizerFileError(source, None, "JSON nested too deeply") from None


def read_json_file(path: str | os.PathLike, source: str | None = None) -> object:
    source = source or str(path)
    return parse_json(read_file_bytes(path, source), source)


def shown(value: object) -> str:
    """A value as an error message shows it: JSON spelling, at most about 40 characters."""
    if isinstance(value, list):
        return f"an array of {len(value):,} items"
    if isinstance(value, dict):
        return "an object"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _int_like(value: object) -> bool:
    return type(value) is int  # bool is a subclass of int, and true is no id


class Fields:
    """Typed readers over one file's parsed JSON; every fault is a TokenizerFileError naming
    `source` and the field (`merges[3][0]`, `pattern.regex`)."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, field: str | None, message: str):
        raise TokenizerFileError(self.source, field or None, message)

    def object(self, value: object, field: str, required: Collection[str],
               optional: Collection[str] | None = ()) -> dict:
        """An object with the `required` keys and no other than the `optional` ones (any, if
        None)."""
        if not isinstance(value, dict):
            self.fail(field, f"expected an object, got {shown(value)}")
        for key in required:
            if key not in value:
                self.fail(field, f"missing {key!r}")
        unknown = set(value) - set(required) - set(optional) if optional is not None else ()
        if unknown:
            self.fail(field, f"unknown field {shown(min(unknown))}")
        return value

    def int(self, value: object, field: str, low: int = 0, high: int | None = None) -> int:
        if not _int_like(value):
            self.fail(field, f"expected an int, got {shown(value)}")
        if value < low or (high is not None and value > high):
            self.fail(field, f"{value} is outside {low}..{high if high is not None else ''}")
        return value

    def str(self, value: object, field: str, max_chars: int, nonempty: bool = True) -> str:
        if not isinstance(value, str):
            self.fail(field, f"expected a string, got {shown(value)}")
        if nonempty and not value:
            self.fail(field, "is empty")
        if len(value) > max_chars:
            self.fail(field, f"a string of {len(value):,} characters: at most {max_chars:,}")
        return value

    def list(self, value: object, field: str, max_items: int) -> list:
        if not isinstance(value, list):
            self.fail(field, f"expected an array, got {shown(value)}")
        if len(value) > max_items:
            self.fail(field, f"{len(value):,} items: at most {max_items:,}")
        return value

    def ints(self, value: object, field: str, max_items: int, low: int, high: int) -> list[int]:
        """An array of ints within low..high."""
        items = self.list(value, field, max_items)
        if items and (set(map(type, items)) != {int} or min(items) < low or max(items) > high):
            for i, item in enumerate(items):
                self.int(item, f"{field}[{i}]", low, high)
        return items

    def scores(self, value: object, field: str, count: int, nulls: Collection[int]) -> list:
        """An array of `count` finite numbers (JSON ints or floats), null exactly at `nulls`."""
        items = self.list(value, field, count)
        if len(items) != count:
            self.fail(field, f"{len(items):,} items: expected one per token, {count:,}")
        for i, item in enumerate(items):
            good = item is None if i in nulls else type(item) in (int, float) and math.isfinite(item)
            if not good:
                self.fail(f"{field}[{i}]", f"expected {'null' if i in nulls else 'a finite number'},"
                                           f" got {shown(item)}")
        return items

    def int_rows(self, value: object, field: str, max_rows: int, min_len: int, max_len: int,
                 low: int, high: int, max_total: int, nullable: bool = False) -> list:
        """An array of arrays of ints within low..high, each of min_len..max_len items (or null,
        if `nullable`), max_total ints in all; checked in bulk, walked only to name a fault."""
        rows = self.list(value, field, max_rows)
        lists = [row for row in rows if row is not None] if nullable else rows
        if set(map(type, lists)) - {list}:
            self._bad_row(rows, field, min_len, max_len, low, high, nullable)
        lengths = list(map(len, lists))
        if lengths and (min(lengths) < min_len or max(lengths) > max_len):
            self._bad_row(rows, field, min_len, max_len, low, high, nullable)
        if sum(lengths) > max_total:
            self.fail(field, f"{sum(lengths):,} ints in all: at most {max_total:,}")
        flat = list(chain.from_iterable(lists))
        if flat and (set(map(type, flat)) != {int} or min(flat) < low or max(flat) > high):
            self._bad_row(rows, field, min_len, max_len, low, high, nullable)
        return rows

    def _bad_row(self, rows: list, field: str, min_len: int, max_len: int, low: int, high: int,
                 nullable: bool) -> None:
        for i, row in enumerate(rows):
            if row is None and nullable:
                continue
            here = f"{field}[{i}]"
            if not isinstance(row, list):
                self.fail(here, f"expected an array{' or null' if nullable else ''}, got {shown(row)}")
            if not min_len <= len(row) <= max_len:
                self.fail(here, f"{len(row):,} items: expected {min_len}"
                                + (f"..{max_len:,}" if max_len != min_len else ""))
            for j, item in enumerate(row):
                self.int(item, f"{here}[{j}]", low, high)
