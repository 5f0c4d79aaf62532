"""datatrove's tokenized files (`--format datatrove`): `NAME.ds`, every document's ids
concatenated, little-endian, no header (the bytes of Megatron's `.bin`: uint16 below 65,500
ids, else 4 bytes), and `NAME.ds.index`, each document's end in tokens as uint64. What
datatrove's DocumentTokenizer writes and its DatatroveFolderDataset reads (nanotron trains from
it), given `token_size` 2 for a uint16 shard and 4 otherwise (it reads 4-byte ids as uint32: the
same bytes as our int32 for any id). Memory holds 4 bytes a document for the index.
"""
from __future__ import annotations

import os
from array import array
from collections.abc import Sequence

import numpy as np

from tokfx.formats.shards.files import Opener
from tokfx.formats.shards.megatron import token_dtype, write_ids

DS, INDEX = ".ds", ".ds.index"
_END_DTYPE = np.dtype("<u8")
_BY_ITEMSIZE = {2: np.dtype("<u2"), 4: np.dtype("<i4")}


class DatatroveWriter:
    """`name.ds` as documents arrive and `name.ds.index` on close, through `open_file`."""

    def __init__(self, open_file: Opener, name: str, vocab_size: int):
        self.open_file, self.name = open_file, name
        self.dtype = token_dtype(vocab_size)
        self._ds = open_file(f"{name}{DS}")
        self._lengths = array("i")

    def write_group(self, doc_ids: list[str], flat: array, lengths: array, sources: list[str],
                    fields: Sequence[list] = ()) -> None:
        """A row group of documents (tokfx.formats.shards.writer): their ids concatenated
        (array('i')) and the number of ids of each."""
        write_ids(self._ds, flat, self.dtype)
        self._lengths.extend(lengths)

    def close(self) -> None:
        self._ds.close()
        lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
        with self.open_file(f"{self.name}{INDEX}") as index:
            index.write(np.cumsum(lengths, dtype=_END_DTYPE).tobytes())


def _read(prefix: str) -> tuple[np.ndarray, np.dtype]:
    """The document ends, and the ids' dtype (told by the size of the `.ds`, which has no header)."""
    ends = np.fromfile(f"{prefix}{INDEX}", dtype=_END_DTYPE)
    tokens = int(ends[-1]) if len(ends) else 0
    size = os.path.getsize(f"{prefix}{DS}")
    itemsize = size // tokens if tokens else 2
    if (tokens and size % tokens) or itemsize not in _BY_ITEMSIZE or (not tokens and size):
        raise ValueError(f"{prefix}{DS}: {size:,} bytes for the {tokens:,} ids of {prefix}{INDEX}")
    return ends, _BY_ITEMSIZE[itemsize]


def datatrove_counts(prefix: str) -> tuple[int, int]:
    """(documents, tokens) of a shard's `.ds` and `.ds.index`."""
    ends, _ = _read(prefix)
    return len(ends), int(ends[-1]) if len(ends) else 0


def datatrove_document(prefix: str, row: int) -> list[int]:
    ends, dtype = _read(prefix)
    start = int(ends[row - 1]) if row else 0
    return np.fromfile(f"{prefix}{DS}", dtype=dtype, count=int(ends[row]) - start,
                       offset=start * dtype.itemsize).tolist()
