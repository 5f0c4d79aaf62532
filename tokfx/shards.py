"""Tokenized output shards: which shard a document goes to, whether it is held out for
evaluation, and writing one shard.

A shard is a Parquet file (schema in schemas/shard.arrow.json, zstd, footer metadata with the
tokenizer hash and the run's config) plus Megatron `.bin`/`.idx` holding the same documents in
the same order (ordered by id, so the files do not depend on the order documents arrived in).
"""
from __future__ import annotations

import hashlib
import json
import os
from array import array
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from itertools import accumulate
from pathlib import Path

import mmh3
import pyarrow as pa
import pyarrow.parquet as pq

from tokfx.megatron import MegatronWriter

_ARROW_TYPES = {"string": pa.string(), "int32": pa.int32(), "list<int32>": pa.list_(pa.int32())}


def document_hash(doc_id: str, seed: int = 0) -> int:
    """mmh3 (32 bits, unsigned) of a document id: the same on every machine and run."""
    return mmh3.hash(doc_id.encode("utf-8"), seed, signed=False)


def shard_index(doc_id: str, num_shards: int) -> int:
    """A document's shard: a hash of its id."""
    return document_hash(doc_id) % num_shards


# Not the shard choice's seed: the held-out documents then spread over every shard.
_HOLD_OUT_SEED = 1


def is_held_out(doc_id: str, fraction: float) -> bool:
    """Whether a document is held out from training for evaluation: about `fraction` of all
    documents, chosen by a hash of the id (the same on every machine and run)."""
    return document_hash(doc_id, _HOLD_OUT_SEED) < fraction * 2 ** 32


@cache
def shard_schema() -> pa.Schema:
    """The Arrow schema of a shard, built from schemas/shard.arrow.json."""
    doc = json.loads(resources.files("tokfx.schemas").joinpath("shard.arrow.json").read_text())
    return pa.schema([pa.field(f["name"], _ARROW_TYPES[f["type"]], nullable=f["nullable"])
                      for f in doc["fields"]])


def shard_name(index: int, num_shards: int) -> str:
    return f"shard-{index:05d}-of-{num_shards:05d}"


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_shard(directory: str | os.PathLike, name: str,
                docs: Sequence[tuple[str, Sequence[int], str]], vocab_size: int,
                metadata: Mapping[str, str]) -> dict:
    """Write `name.parquet`, `name.bin`, `name.idx` for (id, ids, source) docs, sorted by id
    (ids: a list of ints, or an array('i')).

    Returns the shard's entry for the manifest (file sha256s, documents, tokens).
    """
    directory = Path(directory)
    docs = sorted(docs, key=lambda d: (d[0], d[2]))
    lengths = array("i", [len(ids) for _, ids, _ in docs])
    table = pa.table({"id": [d[0] for d in docs], "input_ids": _int32_lists(docs, lengths),
                      "num_tokens": _int32_array(lengths), "source": [d[2] for d in docs]},
                     schema=shard_schema().with_metadata(dict(metadata)))
    pq.write_table(table, directory / f"{name}.parquet", compression="zstd")
    with MegatronWriter(directory / name, vocab_size) as megatron:
        for _, ids, _ in docs:
            megatron.add(ids)
    files = [f"{name}.parquet", f"{name}.bin", f"{name}.idx"]
    return {"files": {f: file_sha256(directory / f) for f in files},
            "documents": len(docs),
            "empty_documents": lengths.count(0),
            "tokens": sum(lengths)}


def _int32_array(values: array) -> pa.Array:
    """An Arrow int32 array over an array('i')'s memory (both native byte order)."""
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


def _int32_lists(docs: Sequence[tuple[str, Sequence[int], str]], lengths: array) -> pa.Array:
    """The documents' ids as one Arrow list<int32> column, built from flat buffers: Arrow's
    conversion from Python lists costs tens of nanoseconds per id."""
    flat = array("i")
    for _, ids, _ in docs:
        flat.extend(ids if isinstance(ids, array) and ids.typecode == "i" else array("i", ids))
    offsets = array("i", [0])
    offsets.extend(accumulate(lengths))
    return pa.ListArray.from_arrays(_int32_array(offsets), _int32_array(flat))
