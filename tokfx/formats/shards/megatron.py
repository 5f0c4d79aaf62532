"""Megatron `.bin` + `.idx` shards, byte-compatible with megatron-core's `IndexedDataset`.

`.bin`: every sequence's ids concatenated, little-endian, no header. `.idx`: magic, version 1,
dtype code, sequence count, document count + 1, int32 lengths, int64 byte pointers, int64
document indices. One sequence per document.
"""
from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence

import numpy as np

from tokfx.formats.shards.files import Opener

MAGIC = b"MMIDIDX\x00\x00"
VERSION = 1
# megatron-core's DType codes.
DTYPE_CODES = {"H": 8, "i": 4}  # uint16, int32
_LITTLE_ENDIAN = {"H": np.dtype("<u2"), "i": np.dtype("<i4")}
# megatron's preprocess switches to int32 at this vocabulary size.
UINT16_VOCAB_LIMIT = 65500


def dtype_for_vocab(vocab_size: int) -> str:
    """The array typecode of the token ids: uint16 for a small vocabulary, else int32."""
    return "H" if vocab_size < UINT16_VOCAB_LIMIT else "i"


def token_dtype(vocab_size: int) -> np.dtype:
    """The little-endian numpy dtype of a shard's token ids (what the flat token files hold)."""
    return _LITTLE_ENDIAN[dtype_for_vocab(vocab_size)]


# Ids converted per write when the file's dtype is not int32: converting a whole row group at
# once held a second copy of it (4 MB of uint16 for 8 MB of ids) at a worker's busiest moment.
CONVERT_IDS = 1 << 16


def write_ids(file, flat: array, dtype: np.dtype) -> None:
    """Write the ids of `flat` (array('i')) to `file` as the bytes of `dtype`: `flat`'s own memory
    when it is that dtype already (int32 on a little-endian machine), else converted
    CONVERT_IDS at a time."""
    data = np.frombuffer(flat, dtype=np.int32)
    if data.dtype == dtype:
        file.write(memoryview(data).cast("B"))
        return
    for start in range(0, len(data), CONVERT_IDS):
        file.write(memoryview(data[start:start + CONVERT_IDS].astype(dtype)).cast("B"))


class MegatronWriter:
    """Writes `name.bin` as documents arrive and `name.idx` on close, each through `open_file`
    (tokfx.formats.shards.files): the lengths are all it keeps, 4 bytes a document."""

    def __init__(self, open_file: Opener, name: str, vocab_size: int):
        self.open_file, self.name = open_file, name
        self.typecode = dtype_for_vocab(vocab_size)
        self._bin = open_file(f"{name}.bin")
        self._lengths = array("i")

    def add(self, ids: Sequence[int]) -> None:
        """One document's ids."""
        self.add_many(ids if isinstance(ids, array) and ids.typecode == "i" else array("i", ids),
                      array("i", [len(ids)]))

    def add_many(self, flat: array, lengths: array) -> None:
        """Documents, one `.bin` write for all: their ids concatenated (array('i')) and the
        number of ids of each (array('i'))."""
        write_ids(self._bin, flat, _LITTLE_ENDIAN[self.typecode])
        self._lengths.extend(lengths)

    def write_group(self, doc_ids: list[str], flat: array, lengths: array, sources: list[str],
                    fields: Sequence[list] = ()) -> None:
        """A row group of documents (tokfx.formats.shards.writer): their ids and sources are not
        Megatron's to keep."""
        self.add_many(flat, lengths)

    def close(self) -> None:
        self._bin.close()
        lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
        n = len(lengths)
        itemsize = _LITTLE_ENDIAN[self.typecode].itemsize
        pointers = np.zeros(n, dtype="<i8")
        np.cumsum(lengths[:-1] * itemsize, dtype="<i8", out=pointers[1:])
        with self.open_file(f"{self.name}.idx") as idx:
            idx.write(MAGIC)
            idx.write(struct.pack("<QBQQ", VERSION, DTYPE_CODES[self.typecode], n, n + 1))
            idx.write(lengths.astype("<i4").tobytes())
            idx.write(pointers.tobytes())
            idx.write(np.arange(n + 1, dtype="<i8").tobytes())

    def __enter__(self) -> "MegatronWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_lengths(idx_path) -> tuple[np.dtype, np.ndarray]:
    """The token dtype and every sequence's length from an `.idx` (its header checked)."""
    with open(idx_path, "rb") as idx:
        header = idx.read(len(MAGIC) + struct.calcsize("<QBQQ"))
        if len(header) < len(MAGIC) + struct.calcsize("<QBQQ") or not header.startswith(MAGIC):
            raise ValueError(f"{idx_path}: not a Megatron .idx (no MMIDIDX header)")
        version, code, count, _ = struct.unpack_from("<QBQQ", header, len(MAGIC))
        codes = {c: t for t, c in DTYPE_CODES.items()}
        if version != VERSION or code not in codes:
            raise ValueError(f"{idx_path}: version {version}, dtype code {code}: not what tokfx writes")
        lengths = np.fromfile(idx, dtype="<i4", count=count)
    if len(lengths) != count:
        raise ValueError(f"{idx_path}: {count} sequences in the header, {len(lengths)} lengths")
    return _LITTLE_ENDIAN[codes[code]], lengths


def megatron_counts(prefix: str) -> tuple[int, int]:
    """(documents, tokens) of `prefix.idx`."""
    _, lengths = read_lengths(f"{prefix}.idx")
    return len(lengths), int(lengths.sum(dtype=np.int64))


def megatron_document(prefix: str, row: int) -> list[int]:
    """The `row`-th document's ids, read from `prefix.bin` at its place in `prefix.idx`."""
    dtype, lengths = read_lengths(f"{prefix}.idx")
    start = int(lengths[:row].sum(dtype=np.int64)) * dtype.itemsize
    return np.fromfile(f"{prefix}.bin", dtype=dtype, count=int(lengths[row]), offset=start).tolist()
