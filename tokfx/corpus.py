"""Documents from corpus files: .txt (one document per file), .jsonl, .jsonl.gz, .jsonl.zst.

Bad input is an error naming the file and line: a line that is not JSON, a missing or
non-string text field, text that is not valid UTF-8, a truncated or corrupt compressed file.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

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


def iter_binary_lines(path: Path) -> Iterator[bytes]:
    """The decompressed lines of a .jsonl / .jsonl.gz / .jsonl.zst file, streamed."""
    with open(path, "rb") as raw:
        name = str(path)
        if name.endswith(".gz"):
            yield from gzip.GzipFile(fileobj=raw)
        elif name.endswith(".zst"):
            yield from _lines(_zstd_chunks(raw))
        else:
            yield from raw


def iter_jsonl_texts(path: str | os.PathLike, text_field: str = "text") -> Iterator[tuple[int, str]]:
    """(line number, text) of each record of a JSON-lines file, streamed."""
    path = Path(path)
    line_no = 0
    try:
        for line_no, line in enumerate(iter_binary_lines(path), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except UnicodeDecodeError:
                raise CorpusError(f"{path}:{line_no}: not valid UTF-8") from None
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{path}:{line_no}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict) or text_field not in record:
                raise CorpusError(f"{path}:{line_no}: no {text_field!r} field")
            text = record[text_field]
            if not isinstance(text, str):
                raise CorpusError(f"{path}:{line_no}: field {text_field!r} is"
                                  f" {type(text).__name__}, not a string")
            yield line_no, text
    except (EOFError, OSError, zlib.error, zstandard.ZstdError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise CorpusError(f"{path}: truncated or corrupt after line {line_no} ({exc})") from None


def read_text_file(path: str | os.PathLike) -> str:
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CorpusError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None
