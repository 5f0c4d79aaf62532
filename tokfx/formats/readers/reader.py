"""What a corpus reader is: the interface that every input format's module fills in once.

A reader turns an open binary file into Documents and Rejections (tokfx.formats.documents): it
never raises for bad input, so every caller applies the same error policy (policy.py) to what
it yields.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from tokfx.formats.documents import Document, Rejection, Texts

if TYPE_CHECKING:  # kept_fields imports pyarrow, which the text reader never needs
    from tokfx.formats.readers.kept_fields import KeptField

# A part of a file, [start, end) in its format's unit: bytes for text, row groups for Parquet.
ReadRange = tuple[int, int]


@dataclass(frozen=True)
class ReadOptions:
    """How documents are found in a file. `separators` cut a text file into documents (the
    special tokens; none: the whole file is one document); the fields name a JSON record's (or a
    Parquet file's columns of) text and id (no id field: a document is named by its place,
    `file:line`, `file:row` in Parquet). `keep`: the fields (--keep-fields) each document carries
    into the shards, with their types for the run (tokfx.formats.readers.kept_fields)."""
    text_field: str = "text"
    id_field: str | None = None
    separators: tuple[str, ...] = ()
    keep: tuple[KeptField, ...] = ()


@dataclass(frozen=True)
class Reader:
    """One input format.

    `read(raw, name, options, part)` yields the documents of the open file `raw` named `name`,
    of the part (a ReadRange) only when one is given. `ranges(raw, parts, options)` cuts a file
    into about `parts` ReadRanges, each holding whole documents and read on its own, together
    the whole file; None for a format that can only be read from its start (a compressed stream
    cannot be split). `suffixes` are lower case; a file's name matches them in any case.
    `field_types(raw, name, options, names)` tells the types of the fields `names` that the
    file's records have ({name: Arrow type, or why its values cannot be kept}); None for a
    format whose documents have no fields. `read_texts` is `read` where the documents that need
    nothing but their text may come as Texts (their UTF-8, many at once), what counting reads;
    None for a format without that shortcut.
    """
    name: str
    suffixes: tuple[str, ...]
    read: Callable[[BinaryIO, str, ReadOptions, ReadRange | None], Iterator[Document | Rejection]]
    ranges: Callable[[BinaryIO, int, ReadOptions], Sequence[ReadRange]] | None = None
    field_types: Callable[[BinaryIO, str, ReadOptions, tuple[str, ...]], dict] | None = None
    read_texts: Callable[[BinaryIO, str, ReadOptions, ReadRange | None],
                         Iterator[Document | Rejection | Texts]] | None = None
