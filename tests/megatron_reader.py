"""A Megatron .bin/.idx reader written from the layout in docs/algorithms.md, for the tests."""
import struct

import numpy as np


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
