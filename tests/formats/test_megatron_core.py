"""Megatron shards against megatron-core itself: its IndexedDatasetBuilder writes the same bytes
for the same documents, and its IndexedDataset reads ours back (CPU torch is enough)."""
import random

import numpy as np
import pytest
from megatron.core.datasets.indexed_dataset import IndexedDataset, IndexedDatasetBuilder

from tokfx.formats.shards.files import local_opener
from tokfx.formats.shards.megatron import MegatronWriter


def random_documents(vocab_size: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(vocab_size) for _ in range(rng.choice([0, 1, 2, 7, 300]))]
            for _ in range(40)]


@pytest.mark.parametrize("vocab_size, dtype", [(50257, np.uint16), (65500, np.int32),
                                               (200_000, np.int32)])
def test_megatron_core_writes_the_same_bytes_and_reads_ours(tmp_path, vocab_size, dtype):
    docs = random_documents(vocab_size, seed=vocab_size)
    with MegatronWriter(local_opener(tmp_path), "ours", vocab_size) as writer:
        for doc in docs:
            writer.add(doc)
    builder = IndexedDatasetBuilder(str(tmp_path / "theirs.bin"), dtype=dtype)
    for doc in docs:
        builder.add_document(np.array(doc, dtype=dtype), [len(doc)])
    builder.finalize(str(tmp_path / "theirs.idx"))
    for suffix in (".bin", ".idx"):
        assert (tmp_path / f"ours{suffix}").read_bytes() == (tmp_path / f"theirs{suffix}").read_bytes()

    dataset = IndexedDataset(str(tmp_path / "ours"))
    assert len(dataset) == len(docs)
    assert [dataset[i].tolist() for i in range(len(docs))] == docs
    assert dataset[0].dtype == dtype
    assert dataset.document_indices.tolist() == list(range(len(docs) + 1))
