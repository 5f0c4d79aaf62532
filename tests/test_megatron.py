"""Megatron shards against a reader written here from the layout in ALGORITHMS.md."""
import struct

import numpy as np
import pytest

from tokfx.megatron import MegatronWriter


def read_megatron(prefix):
    idx = open(f"{prefix}.idx", "rb").read()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code, n_seq, n_doc = struct.unpack_from("<QBQQ", idx, 9)
    assert version == 1
    dtype = {8: np.dtype("<u2"), 4: np.dtype("<i4")}[code]
    offset = 9 + 8 + 1 + 8 + 8
    lengths = np.frombuffer(idx, "<i4", n_seq, offset)
    offset += 4 * n_seq
    pointers = np.frombuffer(idx, "<i8", n_seq, offset)
    offset += 8 * n_seq
    doc_indices = np.frombuffer(idx, "<i8", n_doc, offset)
    assert offset + 8 * n_doc == len(idx)
    data = open(f"{prefix}.bin", "rb").read()
    seqs = [np.frombuffer(data, dtype, int(n), int(p)).tolist() for n, p in zip(lengths, pointers)]
    return seqs, dtype, doc_indices.tolist()


def test_the_layout_check_from_algorithms_md(tmp_path):
    with MegatronWriter(tmp_path / "s", vocab_size=50257) as w:
        w.add([10, 11, 12])
        w.add([13, 14])
    assert (tmp_path / "s.bin").stat().st_size == 10
    assert (tmp_path / "s.idx").stat().st_size == 82
    seqs, dtype, docs = read_megatron(tmp_path / "s")
    assert seqs == [[10, 11, 12], [13, 14]] and dtype == np.dtype("<u2") and docs == [0, 1, 2]


@pytest.mark.parametrize("vocab_size, dtype", [(65499, "<u2"), (65500, "<i4"), (200_000, "<i4")])
def test_dtype_follows_the_vocabulary_size(tmp_path, vocab_size, dtype):
    docs = [[vocab_size - 1, 0], [], [7]]
    with MegatronWriter(tmp_path / "s", vocab_size) as w:
        for d in docs:
            w.add(d)
    seqs, got, indices = read_megatron(tmp_path / "s")
    assert seqs == docs and got == np.dtype(dtype) and indices == [0, 1, 2, 3]
