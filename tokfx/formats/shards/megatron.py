"""Megatron `.bin` + `.idx` shards, byte-compatible with megatron-core's `IndexedDataset`.

`.bin`: every sequence's ids concatenated, little-endian, no header. `.idx`: magic, version 1,
dtype code, sequence count, document count + 1, int32 lengths, int64 byte pointers, int64
document indices. One sequence per document.
"""
from __future__ import annotations

import os
import struct
import sys
from array import array
from collections.abc import Sequence

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
# megatron-core's DType codes.
DTYPE_CODES = {"H": 8, "i": 4}  # uint16, int32
# megatron's preprocess switches to int32 at this vocabulary size.
UINT16_VOCAB_LIMIT = 65500
_SWAP = sys.byteorder != "little"


def dtype_for_vocab(vocab_size: int) -> str:
    """The array typecode of the token ids: uint16 for a small vocabulary, else int32."""
    return "H" if vocab_size < UINT16_VOCAB_LIMIT else "i"


class MegatronWriter:
    """Writes `prefix.bin` as documents arrive and `prefix.idx` on close."""

    def __init__(self, prefix: str | os.PathLike, vocab_size: int):
        self.prefix = str(prefix)
        self.typecode = dtype_for_vocab(vocab_size)
        self._bin = open(self.prefix + ".bin", "wb")
        self._lengths = array("i")

    def add(self, ids: Sequence[int]) -> None:
        data = ids if isinstance(ids, array) and ids.typecode == self.typecode else array(self.typecode, ids)
        if _SWAP:
            data = array(self.typecode, data)  # a copy: byteswap() works in place
            data.byteswap()
        self._bin.write(data.tobytes())
        self._lengths.append(len(data))

    def close(self) -> None:
        self._bin.close()
        itemsize = array(self.typecode).itemsize
        n = len(self._lengths)
        pointers = array("q", [0] * n)
        for i in range(1, n):
            pointers[i] = pointers[i - 1] + self._lengths[i - 1] * itemsize
        doc_indices = array("q", range(n + 1))
        with open(self.prefix + ".idx", "wb") as idx:
            idx.write(MAGIC)
            idx.write(struct.pack("<QBQQ", VERSION, DTYPE_CODES[self.typecode], n, n + 1))
            for part in (self._lengths, pointers, doc_indices):
                if _SWAP:
                    part.byteswap()
                idx.write(part.tobytes())

    def __enter__(self) -> "MegatronWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
