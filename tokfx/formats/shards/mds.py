"""MosaicML streaming's MDS shards (`--format mds`), what LLM Foundry trains from: `NAME.mds`, one
MDS shard file per shard, and `shards/index.json`, streaming's index of every shard's file,
written with the manifest once the run's shards are all there (`mds_index_json`), so that
`StreamingDataset(local=OUTPUT/shards)` reads the whole output as one dataset.

The bytes are those of streaming's `MDSWriter` (streaming/base/format/mds/writer.py, version 2,
no compression): `num_samples` (uint32), the samples' `num_samples + 1` offsets from the file's
start (uint32), the shard's config as sorted JSON, then the samples; a sample is a uint32 size
for each column of no fixed size, then each column's bytes, the columns in name order. The
columns are `tokens`, encoded `ndarray:uint16` or `ndarray:int32` (the ids' dtype of every flat
format: Megatron's, uint16 below 65,500 ids), which LLM Foundry's text dataset takes as they are,
and each kept field (--keep-fields) encoded `json`, which keeps a null as null (streaming's
`str` and number encodings have none). An empty document is a 1-D array of length 0, which
streaming's reader reads as such (its writer refuses one).

The header comes before the samples and holds their offsets, and shard files are written
straight through (no seek): the samples are spooled to a local temporary file and copied behind
the header on close, as the numpy format does. Memory holds 4 bytes a document for the offsets.
A shard file of 4 GiB or more cannot be addressed by uint32 offsets: refused, naming the shard.
"""
from __future__ import annotations

import json
import shutil
import struct
import tempfile
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from tokfx.formats.readers.kept_fields import KeptField
from tokfx.formats.shards.files import Opener
from tokfx.formats.shards.manifest import SHARDS_DIR
from tokfx.formats.shards.megatron import token_dtype

MDS = ".mds"
# streaming's index of an MDS dataset, in the folder of its shard files (get_index_basename()).
INDEX_JSON = "index.json"
TOKENS_COLUMN = "tokens"
_LIMIT = 1 << 32  # uint32 offsets
_U32 = np.dtype("<u4")
# NDArray's shape header: (ndim << 2) | k, then the shape as the smallest uint of 2**k bytes.
_SHAPE_DTYPES = (np.dtype("<u1"), np.dtype("<u2"), np.dtype("<u4"), np.dtype("<u8"))


def check_kept(kept: Sequence[KeptField]) -> None:
    """Refuse kept fields the `json` encoding cannot hold as the Parquet column does (a
    timestamp, bytes, a list: from a Parquet input) and one named as the ids' column."""
    for name, kind in kept:
        if name == TOKENS_COLUMN:
            raise ValueError(f"--keep-fields {name!r}: the ids' column of --format mds")
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_boolean(kind)
                or pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise ValueError(f"--keep-fields {name!r} is {kind}: --format mds keeps strings, numbers and"
                             f" booleans (as json)")


def shard_config(dtype: np.dtype, kept_names: Iterable[str]) -> dict:
    """The config MDSWriter puts in every shard file and index entry: one shard per file (no
    size limit), no compression, sha256 in the index."""
    columns = sorted([(TOKENS_COLUMN, f"ndarray:{np.dtype(dtype).name}")]
                     + [(name, "json") for name in kept_names])
    return {"version": 2, "format": "mds", "compression": None, "hashes": ["sha256"], "size_limit": None,
            "column_names": [name for name, _ in columns],
            "column_encodings": [encoding for _, encoding in columns],
            "column_sizes": [None] * len(columns)}


def _config_bytes(config: Mapping) -> bytes:
    return json.dumps(config, sort_keys=True).encode()


# The shape's header of a 1-D array of `n` ids, by the smallest k that holds n.
_SHAPE_HEADERS = tuple((1 << (8 * d.itemsize), struct.Struct(f"<B{d.char}"), (1 << 2) | k)
                       for k, d in enumerate(_SHAPE_DTYPES))


def _tokens_bytes(ids: np.ndarray) -> bytes:
    """streaming's NDArray encoding of a 1-D array of a fixed dtype: the shape's header, then the ids."""
    n = len(ids)
    _, header, byte = next(h for h in _SHAPE_HEADERS if n < h[0])
    return header.pack(byte, n) + ids.tobytes()


def _json_bytes(value) -> bytes:
    # streaming's JSON encoding is json.dumps' defaults; a float NaN is written as NaN, which
    # its json.loads reads back.
    return json.dumps(value).encode()


class MdsWriter:
    """`name.mds` through `open_file`, on close."""

    def __init__(self, open_file: Opener, name: str, vocab_size: int, kept: Sequence[KeptField] = ()):
        self.open_file, self.name = open_file, name
        self.dtype = token_dtype(vocab_size)
        check_kept(kept)
        kept_names = [field for field, _ in kept]
        self.config = _config_bytes(shard_config(self.dtype, kept_names))
        # Where each kept field's value goes among the columns (in name order, with the ids).
        names = json.loads(self.config)["column_names"]
        self._tokens_at = names.index(TOKENS_COLUMN)
        self._kept_at = [names.index(field) for field in kept_names]
        self._spool = tempfile.TemporaryFile()
        self._sizes = array("I")
        self._bytes = 0

    def write_group(self, doc_ids: list[str], flat: array, lengths: array, sources: list[str],
                    fields: Sequence[list] = ()) -> None:
        """A row group of documents (tokfx.formats.shards.writer): their ids concatenated
        (array('i')), the number of ids of each, and each kept field's values."""
        ids = np.frombuffer(flat, dtype=np.int32).astype(self.dtype)
        start = 0
        columns: list = [None] * (1 + len(self._kept_at))
        sizes = struct.Struct(f"<{len(columns)}I")
        samples = []
        for row, length in enumerate(lengths):
            columns[self._tokens_at] = _tokens_bytes(ids[start:start + length])
            start += length
            for at, values in zip(self._kept_at, fields, strict=True):
                columns[at] = _json_bytes(values[row])
            samples.append(sizes.pack(*map(len, columns)) + b"".join(columns))
        self._sizes.extend(map(len, samples))
        data = b"".join(samples)
        self._bytes += len(data)
        if self._head() + self._bytes >= _LIMIT:  # before the spool grows any further
            raise ValueError(f"{self.name}{MDS}: {self._head() + self._bytes:,} bytes; an MDS shard file"
                             f" holds less than 4 GiB (uint32 offsets): give a smaller --shard-size")
        self._spool.write(data)

    def _head(self) -> int:
        """The size of the file's header: the sample count, the offsets and the config."""
        return 4 + 4 * (len(self._sizes) + 1) + len(self.config)

    def close(self) -> None:
        try:
            head = self._head()
            offsets = np.zeros(len(self._sizes) + 1, dtype=np.uint64)
            if self._sizes:
                np.cumsum(np.frombuffer(self._sizes, dtype=np.uint32), dtype=np.uint64, out=offsets[1:])
            with self.open_file(f"{self.name}{MDS}") as file:
                file.write(np.array([len(self._sizes)], _U32).tobytes())
                file.write((offsets + head).astype(_U32).tobytes())
                file.write(self.config)
                self._spool.seek(0)
                shutil.copyfileobj(self._spool, file, 1 << 20)
        finally:
            self._spool.close()

    def abort(self) -> None:
        self._spool.close()


def header_config(head: bytes) -> dict:
    """The config of a shard file from its first bytes (at least up to the end of its config)."""
    count = int(np.frombuffer(head[:4], _U32)[0])
    start = 4 + 4 * (count + 1)
    end = int(np.frombuffer(head[4:8], _U32)[0])
    return json.loads(head[start:end])


def mds_index_json(shards: Sequence[Mapping], open_file: Callable[[str], BinaryIO]) -> bytes | None:
    """streaming's index.json (`SHARDS_DIR/INDEX_JSON`) of the `.mds` files of `shards` (the
    manifest's entries, in its order; None when none has one), each entry as MDSWriter makes it:
    the file's config, read from its header through `open_file` (a path relative to the output
    directory), its size, sha256 and samples (the manifest's)."""
    entries = []
    for shard in shards:
        relative = f"{SHARDS_DIR}/{shard['name']}{MDS}"
        if relative not in shard["files"]:
            continue
        with open_file(relative) as file:
            head = file.read(8)
            head += file.read(int(np.frombuffer(head[4:8], _U32)[0]) - len(head))
        entries.append({**header_config(head), "samples": shard["documents"], "zip_data": None,
                        "raw_data": {"basename": f"{shard['name']}{MDS}", "bytes": shard["sizes"][relative],
                                     "hashes": {"sha256": shard["files"][relative]}}})
    if not entries:
        return None
    return json.dumps({"version": 2, "shards": entries}, sort_keys=True).encode()


class _Shard:
    """A shard file read back: its config, and each sample's bytes."""

    def __init__(self, prefix: str):
        self.path = f"{prefix}{MDS}"
        self.data = np.memmap(self.path, dtype=np.uint8, mode="r") if _size(self.path) else np.zeros(0, np.uint8)
        if len(self.data) < 8:
            raise ValueError(f"{self.path}: {len(self.data)} bytes, shorter than an MDS header")
        count = int(self.data[:4].view(_U32)[0])
        if 4 * (count + 2) > len(self.data):
            raise ValueError(f"{self.path}: {count:,} samples do not fit in its {len(self.data):,} bytes")
        self.offsets = self.data[4:4 * (count + 2)].view(_U32)
        if int(self.offsets[-1]) != len(self.data) or np.any(np.diff(self.offsets.astype(np.int64)) < 0):
            raise ValueError(f"{self.path}: its offsets do not end at its {len(self.data):,} bytes")
        try:
            self.config = json.loads(bytes(self.data[4 * (count + 2):int(self.offsets[0])]))
            names = self.config["column_names"]
            self._tokens_at = names.index(TOKENS_COLUMN)
            self.dtype = np.dtype(self.config["column_encodings"][self._tokens_at].split(":")[1])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"{self.path}: not a tokfx MDS shard config ({exc})") from None
        self._columns = len(names)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def tokens(self, row: int) -> np.ndarray:
        sample = self.data[int(self.offsets[row]):int(self.offsets[row + 1])]
        sizes = sample[:4 * self._columns].view(_U32)
        start = 4 * self._columns + int(sizes[:self._tokens_at].sum())
        column = sample[start:start + int(sizes[self._tokens_at])]
        shape_dtype = _SHAPE_DTYPES[int(column[0]) & 3]
        return column[1 + shape_dtype.itemsize:].view(self.dtype)


def _size(path: str) -> int:
    with open(path, "rb") as file:
        return file.seek(0, 2)


def mds_counts(prefix: str) -> tuple[int, int]:
    """(documents, tokens) of a shard's `.mds` file, every sample read."""
    shard = _Shard(prefix)
    return len(shard), sum(len(shard.tokens(row)) for row in range(len(shard)))


def mds_document(prefix: str, row: int) -> list[int]:
    return _Shard(prefix).tokens(row).tolist()
