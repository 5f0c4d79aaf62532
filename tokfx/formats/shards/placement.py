"""Where a document goes: its shard (a hash of its id, so the same on every machine, run and
number of workers), whether it is held out for evaluation, and the shards' names."""
from __future__ import annotations

import mmh3


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


def shard_name(index: int, num_shards: int) -> str:
    return f"shard-{index:05d}-of-{num_shards:05d}"
