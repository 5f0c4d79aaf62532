"""The decompressed line streams (tokfx.formats.readers.compression), against io's readlines."""
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
def test_lines_of_chunks_are_the_datas_lines(data, cuts):
    chunks, start = [], 0
    for cut in cuts:
        chunks.append(data[start:start + cut])
        start += cut
    chunks.append(data[start:])
    assert list(compression._lines(iter(chunks))) == io.BytesIO(data).readlines()


@given(DATA, st.integers(1, 64))
@example(b"x" * 1000 + b"\n" + b"y" * 10, 3)
def test_a_zst_streams_lines_whatever_the_read_size(data, read_size):
    frames = zstandard.ZstdCompressor().compress(data[:len(data) // 2]) + \
        zstandard.ZstdCompressor().compress(data[len(data) // 2:])
    with mock.patch.object(compression, "_READ_SIZE", read_size):
        lines = list(compression.iter_lines(io.BytesIO(frames), "a.jsonl.zst"))
    assert lines == io.BytesIO(data).readlines()
