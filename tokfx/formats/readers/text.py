"""Plain-text documents: a .txt file cut into documents at its separators (the special tokens); a
file without them, or read with none, is one document. A file can be read in byte ranges cut at
separators (tokfx.pre_tokenizers.boundaries), each range giving the documents the whole file
has there.

Text that is not valid UTF-8 rejects its document with one message: the file, the line where it
is known (a range that does not start the file does not know its first line) and the byte
offset, `FILE:LINE: not valid UTF-8 at byte N`. A file with no bytes is rejected whole.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import BinaryIO

from tokfx.formats.documents import Document, Rejection
from tokfx.formats.readers.reader import Reader, ReadOptions, ReadRange
from tokfx.pre_tokenizers.boundaries import find_chunk_boundaries
from tokfx.special_tokens import SpecialTokens


def split_text_documents(data: bytes, start: int, name: str, separators: Sequence[str],
                         line: int | None = None) -> Iterator[Document | Rejection]:
    """The documents of bytes [start, start + len(data)) of a text file, cut at `separators`.

    The separators belong to no document; empty pieces between two separators are not
    documents. A document's id is `name@offset` of its first byte, so a range read alone gives
    the same ids as the whole file read at once. `line` is the line number of byte `start` when
    it is known (1 at the start of the file): a rejection then names the line of its bad byte.
    No data from the start of the file means the file is empty.
    """
    if start == 0 and not data:
        yield Rejection(name, None, "empty file", whole_file=True)
        return
    cuts = list(SpecialTokens(separators).spans_in_bytes(data))
    begin = 0
    for piece_end, next_begin in cuts + [(len(data), len(data))]:
        if piece_end > begin:
            source = f"{name}@{start + begin}"
            try:
                yield Document(source, data[begin:piece_end].decode("utf-8"), source)
            except UnicodeDecodeError as exc:
                bad = begin + exc.start
                where = None if line is None else line + data.count(b"\n", 0, bad)
                yield Rejection(name, where, f"not valid UTF-8 at byte {start + bad}")
        begin = next_begin


def read_text(raw: BinaryIO, name: str, options: ReadOptions,
              byte_range: ReadRange | None = None) -> Iterator[Document | Rejection]:
    """The documents of an open text file, or of one byte range of it."""
    if byte_range is None:
        start, data = 0, raw.read()
    else:
        start, end = byte_range
        raw.seek(start)
        data = raw.read(end - start)
    yield from split_text_documents(data, start, name, options.separators,
                                    line=1 if start == 0 else None)


def text_ranges(raw: BinaryIO, parts: int, options: ReadOptions) -> list[ReadRange]:
    """About `parts` byte ranges covering the file, cut at separators: each holds whole
    documents. A file without separators is one document, so one range."""
    bounds = find_chunk_boundaries(raw, parts if options.separators else 1, options.separators)
    # An empty file (bounds [0]) is one empty range, which the reader rejects as such.
    return list(zip(bounds, bounds[1:])) or [(0, 0)]


READER = Reader("text", (".txt",), read_text, text_ranges)
