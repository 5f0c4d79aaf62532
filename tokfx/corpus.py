"""Documents from corpus files: .txt (one document per file), .jsonl, .jsonl.gz, .jsonl.zst.

Bad input is an error naming the file and line: a line that is not JSON, a missing or
non-string text field, text that is not valid UTF-8, a truncated or corrupt compressed file.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

import zstandard

JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst")


class CorpusError(ValueError):
    """A corpus record that cannot be read; the message names the file and line."""


def is_jsonl(path: str | os.PathLike) -> bool:
    return str(path).endswith(JSONL_SUFFIXES)


_READ_SIZE = 1 << 20


def _zstd_chunks(raw: io.BufferedIOBase) -> Iterator[bytes]:
    """Decompressed data of every frame in turn; a stream that ends mid-frame is an error.

    (zstandard's stream_reader ends quietly at a truncated frame: data would be lost silently.)
    """
    decompressor = zstandard.ZstdDecompressor()
    frame = decompressor.decompressobj()
    in_frame = False
    while data := raw.read(_READ_SIZE):
        while data:
            in_frame = True
            yield frame.decompress(data)
            if not frame.eof:
                break
            data, frame, in_frame = frame.unused_data, decompressor.decompressobj(), False
    if in_frame:
        raise EOFError("compressed stream ended before the end of its last frame")


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    pending = b""
    for chunk in chunks:
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        yield from (line + b"\n" for line in lines)
    if pending:
        yield pending


def iter_lines(raw: BinaryIO, name: str) -> Iterator[bytes]:
    """The decompressed lines of an open .jsonl / .jsonl.gz / .jsonl.zst file, streamed."""
    if name.endswith(".gz"):
        yield from gzip.GzipFile(fileobj=raw)
    elif name.endswith(".zst"):
        yield from _lines(_zstd_chunks(raw))
    else:
        yield from raw


def iter_binary_lines(path: Path) -> Iterator[bytes]:
    """The decompressed lines of a .jsonl / .jsonl.gz / .jsonl.zst file, streamed."""
    with open(path, "rb") as raw:
        yield from iter_lines(raw, str(path))


class Document(NamedTuple):
    """One corpus document. `source` locates it: `file:line`, or `file@byte offset` in a .txt."""
    id: str
    text: str
    source: str


def utf8_length(text: str) -> int:
    """len(text.encode("utf-8")), without the copy for ASCII text (isascii() reads a flag)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class Rejection(NamedTuple):
    """A record (or a whole file, line None) that could not be read, and why."""
    file: str
    line: int | None
    reason: str

    @property
    def message(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


def _document(record, text_field: str, id_field: str | None, source: str) -> Document | str:
    """The document of one parsed JSON record, or the reason it is rejected."""
    if not isinstance(record, dict) or text_field not in record:
        return f"no {text_field!r} field"
    text = record[text_field]
    if not isinstance(text, str):
        return f"field {text_field!r} is {type(text).__name__}, not a string"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A JSON escape of a lone surrogate: valid JSON, but no UTF-8 text.
        return "not valid UTF-8 (lone surrogate)"
    if id_field is None:
        return Document(source, text, source)
    if id_field not in record or record[id_field] is None:
        return f"no {id_field!r} field"
    return Document(str(record[id_field]), text, source)


def read_jsonl(raw: BinaryIO, name: str, text_field: str = "text",
               id_field: str | None = None) -> Iterator[Document | Rejection]:
    """Each record of an open JSON-lines file as a Document or a Rejection, streamed.

    A file that ends early or is corrupt ends with a Rejection of the whole file (line None);
    so does a file with no bytes at all. Blank lines are not documents.
    """
    line_no = 0
    try:
        for line_no, line in enumerate(iter_lines(raw, name), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except UnicodeDecodeError:
                yield Rejection(name, line_no, "not valid UTF-8")
                continue
            except json.JSONDecodeError as exc:
                yield Rejection(name, line_no, f"not JSON ({exc.msg})")
                continue
            doc = _document(record, text_field, id_field, f"{name}:{line_no}")
            yield doc if isinstance(doc, Document) else Rejection(name, line_no, doc)
    except (EOFError, OSError, zlib.error, zstandard.ZstdError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        yield Rejection(name, None, f"truncated or corrupt after line {line_no} ({exc})")
        return
    if line_no == 0:
        yield Rejection(name, None, "empty file")


def iter_jsonl_texts(path: str | os.PathLike, text_field: str = "text") -> Iterator[tuple[int, str]]:
    """(line number, text) of each record of a JSON-lines file, streamed; bad input raises.

    An empty file has no texts and is not an error here (a caller that cares sees no lines).
    """
    path = Path(path)
    with open(path, "rb") as raw:
        for item in read_jsonl(raw, str(path), text_field):
            if isinstance(item, Rejection):
                if item.reason == "empty file":
                    return
                raise CorpusError(item.message)
            yield int(item.source.rsplit(":", 1)[1]), item.text


def split_text_documents(data: bytes, start: int, name: str,
                         special_tokens: Sequence[str]) -> Iterator[Document | Rejection]:
    """The documents of bytes [start, start + len(data)) of a .txt file, cut at special tokens.

    The special tokens themselves are separators and belong to no document; empty pieces
    between two separators are not documents. A document's id is `name@offset` of its first
    byte, so a range read alone gives the same ids as the whole file read at once.
    """
    specials = sorted({s.encode("utf-8") for s in special_tokens}, key=lambda s: (-len(s), s))
    cuts = [(m.start(), m.end()) for m in re.finditer(b"|".join(map(re.escape, specials)), data)] \
        if specials else []
    begin = 0
    for piece_end, next_begin in cuts + [(len(data), len(data))]:
        if piece_end > begin:
            source = f"{name}@{start + begin}"
            try:
                yield Document(source, data[begin:piece_end].decode("utf-8"), source)
            except UnicodeDecodeError as exc:
                yield Rejection(name, None, f"not valid UTF-8 at byte {start + begin + exc.start}")
        begin = next_begin


def read_text_file(path: str | os.PathLike) -> str:
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CorpusError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None
