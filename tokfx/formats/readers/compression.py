"""Decompressed line streams of JSON-lines files (.gz, .zst or neither, by the name's suffix in
any case), read as they come.

A truncated or corrupt stream raises (EOFError, OSError, zlib.error or zstandard.ZstdError), so
that no reader loses the end of a file silently.
"""
from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from typing import BinaryIO

import zstandard

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
    """The decompressed lines of an open file, streamed: gzip or zstd by its suffix."""
    suffix = name.lower()
    if suffix.endswith(".gz"):
        yield from gzip.GzipFile(fileobj=raw)
    elif suffix.endswith(".zst"):
        yield from _lines(_zstd_chunks(raw))
    else:
        yield from raw
