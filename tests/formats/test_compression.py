"""The decompressed line streams (tokfx.formats.readers.compression), against io's readlines."""
import gzip
import io
from unittest import mock

import zstandard
from hypothesis import example, given, strategies as st

from tokfx.formats.readers import compression

# Data with many line ends, empty lines and lines longer than a chunk.
DATA = st.lists(st.sampled_from([b"\n", b"a", b"bc", b"\n\n", b"x" * 50]), max_size=60).map(b"".join)


@given(DATA, st.lists(st.integers(1, 40), max_size=20))
@example(b"", [])
@example(b"\n", [])
@example(b"no end", [2, 1])
@example(b"x" * 100 + b"\nend\n", [3, 3, 3])
def test_blocks_and_lines_of_chunks_are_the_datas_lines(data, cuts):
    chunks, start = [], 0
    for cut in cuts:
        chunks.append(data[start:start + cut])
        start += cut
    chunks.append(data[start:])
    blocks = list(compression._blocks(iter(chunks)))
    assert b"".join(blocks) == data and all(blocks)
    assert all(block.endswith(b"\n") for block in blocks[:-1])  # whole lines, the last maybe not
    assert [line for block in blocks for line in io.BytesIO(block).readlines()] == io.BytesIO(data).readlines()
    assert list(compression._lines(iter(chunks))) == io.BytesIO(data).readlines()


@given(DATA, st.integers(1, 64))
@example(b"x" * 1000 + b"\n" + b"y" * 10, 3)
def test_a_zst_streams_lines_and_blocks_whatever_the_read_size(data, read_size):
    frames = zstandard.ZstdCompressor().compress(data[:len(data) // 2]) + \
        zstandard.ZstdCompressor().compress(data[len(data) // 2:])
    with mock.patch.object(compression, "_READ_SIZE", read_size):
        lines = list(compression.iter_lines(io.BytesIO(frames), "a.jsonl.zst"))
        blocks = list(compression.iter_blocks(io.BytesIO(frames), "a.jsonl.zst"))
    assert lines == io.BytesIO(data).readlines()
    assert b"".join(blocks) == data and all(block.endswith(b"\n") for block in blocks[:-1])


@given(DATA, st.integers(1, 64), st.sampled_from(["a.jsonl", "a.jsonl.gz"]))
def test_gzip_and_plain_files_come_in_blocks_of_whole_lines(data, block_size, name):
    raw = gzip.compress(data) if name.endswith(".gz") else data
    with mock.patch.object(compression, "_BLOCK_SIZE", block_size):
        blocks = list(compression.iter_blocks(io.BytesIO(raw), name))
    assert b"".join(blocks) == data and all(block.endswith(b"\n") for block in blocks[:-1])
