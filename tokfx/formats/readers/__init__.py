"""Corpus readers: one module per input format, each defining one `Reader` (reader.py), and the
registry that picks a file's reader by its suffix, in any case (`.JSONL`, `.Txt`). A new format is
one more module, listed in READERS.

- `jsonl`: .jsonl, .json, .ndjson, each plain, .gz or .zst (read whole; `compression` streams
  them);
- `text`: .txt, cut into documents at the special tokens, readable in byte ranges;
- `parquet`: .parquet, a text column and optionally an id column, readable in row-group ranges.

A file of any other suffix is rejected as a whole (under the error policy, `policy`) rather than
read as text: text has no signature to recognise it by, so that fallback would read whatever
such a file holds (a .csv or .html would be trained on as text, a .txt.gz file rejected as "not
valid UTF-8" instead of named for what it is), and each new reader would silently change what an
existing input means. A plain-text file of another name is read once it is named .txt.

`read_documents` reads local files through their readers and one error policy: what the
`tokfx` commands (train, encode, eval) and the library's counting read.

The JSONL and Parquet readers import pyarrow (28 MB of memory and 0.1 s at import), which the text
reader does not need: the library's counting imports this package for its text reader and error
policy, and training over texts must not pay for pyarrow. So their modules are imported when the
registry is first asked for a file's reader (`readers`), not with the package.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import BinaryIO

from tokfx.formats.documents import Document, Rejection
from tokfx.formats.readers import text
from tokfx.formats.readers.policy import ErrorPolicy
from tokfx.formats.readers.reader import Reader, ReadOptions, ReadRange


@functools.cache
def readers() -> tuple[Reader, ...]:
    """Every input format's reader, in the order their suffixes are matched."""
    from tokfx.formats.readers import jsonl, parquet
    return (jsonl.READER, text.READER, parquet.READER)


def _suffix(name: str) -> str:
    """A file's suffix for a message: the last one, with the one before it when the last is a
    compression's (`.txt.gz` says more than `.gz`)."""
    suffixes = PurePosixPath(name).suffixes
    keep = 2 if suffixes and suffixes[-1].lower() in (".gz", ".zst", ".bz2", ".xz") else 1
    return "".join(suffixes[-keep:])


def _refuse(raw: BinaryIO, name: str, options: ReadOptions,
            part: ReadRange | None = None) -> Iterator[Rejection]:
    yield Rejection(name, None, f"not a corpus file ({_suffix(name) or 'no suffix'}): tokfx reads"
                    f" {', '.join(suffix for reader in readers() for suffix in reader.suffixes)}", whole_file=True)


# The reader of the files no reader reads: it rejects them whole.
UNKNOWN = Reader("unknown", (), _refuse)


def reader_for(path: str | os.PathLike) -> Reader:
    """The reader of `path`, by its suffix in any case; UNKNOWN for a suffix no reader reads."""
    name = str(path).lower()
    return next((reader for reader in readers() if name.endswith(reader.suffixes)), UNKNOWN)


def require_files(paths: Iterable[str | os.PathLike]) -> None:
    """Refuse a missing input before any is read (not after counting the files before it)."""
    for path in paths:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: {'not a file' if os.path.exists(path) else 'no such file'}")


def read_documents(paths: Iterable[str | os.PathLike], options: ReadOptions,
                   errors: ErrorPolicy) -> Iterator[Document]:
    """The documents of local files, in order, each file read whole by its reader; each
    rejection goes to `errors`, which raises it (fail) or lets reading go on (skip)."""
    paths = [str(path) for path in paths]
    require_files(paths)
    for path in paths:
        with open(path, "rb") as raw:
            for item in reader_for(path).read(raw, path, options, None):
                if isinstance(item, Document):
                    yield item
                else:
                    errors.reject(item)


__all__ = ["UNKNOWN", "ReadOptions", "Reader", "read_documents",
           "reader_for", "readers", "require_files"]
