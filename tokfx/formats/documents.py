"""What readers produce: a corpus `Document`, or a `Rejection` (a record, or a whole file, that
could not be read, and why), or for counting `Texts` (documents' texts as UTF-8);
`CorpusError` is a rejection raised when the policy is to fail."""
from __future__ import annotations

from array import array
from typing import NamedTuple


class CorpusError(ValueError):
    """A corpus record that cannot be read; the message names the file and line."""


class Document(NamedTuple):
    """One corpus document. `source` locates it: `file:line`, `file@byte offset` in a .txt, or
    `file:row` in a .parquet (its row in the file, from 1). `fields`: the values of the kept
    fields (ReadOptions.keep), in their order, None where the record has none."""
    id: str
    text: str
    source: str
    fields: tuple = ()


class Texts(NamedTuple):
    """The texts of documents that need nothing but their text, one after another, as UTF-8:
    what a reader's `read_texts` gives counting. `data` holds them concatenated, `ends` where
    each one ends in it (array('q')): one per document."""
    data: bytes
    ends: array


def utf8_length(text: str) -> int:
    """len(text.encode("utf-8")), without the copy for ASCII text (isascii() reads a flag)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class Rejection(NamedTuple):
    """A document, or a whole file (`whole_file`), that could not be read, and why.

    `line` is the document's line in the file (its row in a .parquet) where the reader knows it:
    a .txt document read in a byte range that does not start the file has none (its reason gives
    the byte offset).
    """
    file: str
    line: int | None
    reason: str
    whole_file: bool = False

    @property
    def message(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


