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

# Compressed bytes read at a time. A text's zstd stream decompresses to about 4x this, and the
# chunk, its lines and the read are all alive at once: at 1 MiB, 13 MB of a pipeline worker's
# peak (bench/README, "Per-worker cost"). Smaller reads were also faster (128 KiB: 0.20 s for
# the 100 MB bench corpus, against 0.25 s at 1 MiB).
_READ_SIZE = 128 << 10
# Bytes read at a time from a gzip or plain file in blocks: about what a zstd read gives.
_BLOCK_SIZE = 512 << 10


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


def _blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The concatenated chunks cut after their last b"\n" each: blocks of whole lines (the last
    block maybe not ending with one). A line longer than a chunk is joined once, at its end:
    adding each chunk to it would copy it over and over."""
    pending: list[bytes] = []  # the pieces of a line not yet ended
    for chunk in chunks:
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            if chunk:
                pending.append(chunk)
            continue
        if pending:
            yield b"".join([*pending, memoryview(chunk)[:cut]])
            pending.clear()
        else:
            yield chunk if cut == len(chunk) else chunk[:cut]
        if cut < len(chunk):
            pending.append(chunk[cut:])
    if pending:
        yield b"".join(pending)


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The lines of the concatenated chunks, each with its b"\n" (the last one without, if the
    data does not end with one): the lines of their _blocks. The blocks' copy of the data costs
    up to 4 % of cutting the lines, 0-0.013 s a 124 MB file, not the 1 s at 1 GB once put down
    to it (bench/README.md, "The lines cut from the blocks again")."""
    for block in _blocks(chunks):
        *lines, last = block.split(b"\n")
        yield from (line + b"\n" for line in lines)
        if last:
            yield last


def iter_blocks(raw: BinaryIO, name: str) -> Iterator[bytes]:
    """The decompressed data of an open file in blocks of whole lines (_blocks), streamed: gzip
    or zstd by its suffix. What a reader that reads many lines in one call reads."""
    suffix = name.lower()
    if suffix.endswith(".gz"):
        gz = gzip.GzipFile(fileobj=raw)
        yield from _blocks(iter(lambda: gz.read(_BLOCK_SIZE), b""))
    elif suffix.endswith(".zst"):
        yield from _blocks(_zstd_chunks(raw))
    else:
        yield from _blocks(iter(lambda: raw.read(_BLOCK_SIZE), b""))


def iter_lines(raw: BinaryIO, name: str) -> Iterator[bytes]:
    """The decompressed lines of an open file, streamed: gzip or zstd by its suffix."""
    suffix = name.lower()
    if suffix.endswith(".gz"):
        yield from gzip.GzipFile(fileobj=raw)
    elif suffix.endswith(".zst"):
        yield from _lines(_zstd_chunks(raw))
    else:
        yield from raw
