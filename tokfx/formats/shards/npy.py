"""Flat token files (`--format numpy`): `NAME.tokens.npy`, every document's ids concatenated as
one 1-D `.npy` array of the shard's dtype (uint16 below 65,500 ids, else int32: Megatron's
choice, tokfx.formats.shards.megatron), and `NAME.offsets.npy`, int64, documents + 1 offsets
into it (document k is `tokens[offsets[k]:offsets[k + 1]]`). Both load with
`numpy.load(path, mmap_mode="r")`, as nanoGPT- and llm.c-style loaders memory-map a token file.

A `.npy` header holds the array's length, which is known only once the shard closes, and a
shard's files are written straight through (no seek: Beam filesystems cannot): the ids are
spooled to a local temporary file and copied behind the header on close, one more write of the
shard's ids, on the worker's local disk. Memory holds 4 bytes a document for the offsets.
"""
from __future__ import annotations

import shutil
import tempfile
from array import array
from collections.abc import Sequence

import numpy as np

from tokfx.formats.shards.files import Opener
from tokfx.formats.shards.megatron import token_dtype, write_ids

TOKENS, OFFSETS = ".tokens.npy", ".offsets.npy"
_OFFSET_DTYPE = np.dtype("<i8")


def _write_npy_header(file, dtype: np.dtype, length: int) -> None:
    np.lib.format.write_array_header_1_0(file, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                "fortran_order": False, "shape": (length,)})


class NumpyWriter:
    """`name.tokens.npy` and `name.offsets.npy` through `open_file`, on close."""

    def __init__(self, open_file: Opener, name: str, vocab_size: int):
        self.open_file, self.name = open_file, name
        self.dtype = token_dtype(vocab_size)
        self._spool = tempfile.TemporaryFile()
        self._tokens = 0
        self._lengths = array("i")

    def write_group(self, doc_ids: list[str], flat: array, lengths: array, sources: list[str],
                    fields: Sequence[list] = ()) -> None:
        """A row group of documents (tokfx.formats.shards.writer): their ids concatenated
        (array('i')) and the number of ids of each."""
        write_ids(self._spool, flat, self.dtype)
        self._tokens += len(flat)
        self._lengths.extend(lengths)

    def close(self) -> None:
        try:
            with self.open_file(f"{self.name}{TOKENS}") as tokens:
                _write_npy_header(tokens, self.dtype, self._tokens)
                self._spool.seek(0)
                shutil.copyfileobj(self._spool, tokens, 1 << 20)
        finally:
            self._spool.close()
        lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
        offsets = np.zeros(len(lengths) + 1, dtype=_OFFSET_DTYPE)
        np.cumsum(lengths, dtype=_OFFSET_DTYPE, out=offsets[1:])
        with self.open_file(f"{self.name}{OFFSETS}") as file:
            _write_npy_header(file, _OFFSET_DTYPE, len(offsets))
            file.write(offsets.tobytes())


def _load(prefix: str) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.load(f"{prefix}{TOKENS}", mmap_mode="r")
    offsets = np.load(f"{prefix}{OFFSETS}", mmap_mode="r")
    if offsets.ndim != 1 or len(offsets) == 0 or int(offsets[-1]) != len(tokens):
        raise ValueError(f"{prefix}{OFFSETS}: its offsets do not end at the {len(tokens):,} ids of"
                         f" {prefix}{TOKENS}")
    return tokens, offsets


def numpy_counts(prefix: str) -> tuple[int, int]:
    """(documents, tokens) of a shard's flat token files."""
    tokens, offsets = _load(prefix)
    return len(offsets) - 1, len(tokens)


def numpy_document(prefix: str, row: int) -> list[int]:
    tokens, offsets = _load(prefix)
    return tokens[int(offsets[row]):int(offsets[row + 1])].tolist()
