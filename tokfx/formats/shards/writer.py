"""One tokenized output shard: a Parquet file (tokfx.formats.shards.parquet) plus Megatron
`.bin`/`.idx` (tokfx.formats.shards.megatron) holding the same documents in the same order
(ordered by id, so the files do not depend on the order documents arrived in).
"""
from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path

from tokfx.formats.shards.megatron import MegatronWriter
from tokfx.formats.shards.parquet import write_parquet


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
    write_parquet(directory / f"{name}.parquet", docs, lengths, metadata)
    with MegatronWriter(directory / name, vocab_size) as megatron:
        for _, ids, _ in docs:
            megatron.add(ids)
    files = [f"{name}.parquet", f"{name}.bin", f"{name}.idx"]
    return {"files": {f: file_sha256(directory / f) for f in files},
            "documents": len(docs),
            "empty_documents": lengths.count(0),
            "tokens": sum(lengths)}
