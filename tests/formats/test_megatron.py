"""Megatron shards against the reader in megatron_reader.py, written from the layout in docs/algorithms.md."""
from array import array

import numpy as np
import pytest

from megatron_reader import read_megatron
from tokfx.formats.shards.files import local_opener
from tokfx.formats.shards import megatron
from tokfx.formats.shards.megatron import MegatronWriter


def test_the_layout_check_from_algorithms_md(tmp_path):
    with MegatronWriter(local_opener(tmp_path), "s", vocab_size=50257) as w:
        w.add([10, 11, 12])
        w.add([13, 14])
    assert (tmp_path / "s.bin").stat().st_size == 10
    assert (tmp_path / "s.idx").stat().st_size == 82
    seqs, dtype, docs = read_megatron(tmp_path / "s")
    assert seqs == [[10, 11, 12], [13, 14]] and dtype == np.dtype("<u2") and docs == [0, 1, 2]


@pytest.mark.parametrize("vocab_size, dtype", [(65499, "<u2"), (65500, "<i4"), (200_000, "<i4")])
def test_dtype_follows_the_vocabulary_size(tmp_path, vocab_size, dtype):
    docs = [[vocab_size - 1, 0], [], [7]]
    with MegatronWriter(local_opener(tmp_path), "s", vocab_size) as w:
        for d in docs:
            w.add(d)
    seqs, got, indices = read_megatron(tmp_path / "s")
    assert seqs == docs and got == np.dtype(dtype) and indices == [0, 1, 2, 3]


@pytest.mark.parametrize("vocab_size", [50257, 200_000])  # converted to uint16; int32 as it is
def test_a_row_group_converted_a_piece_at_a_time_is_the_same_ids(tmp_path, monkeypatch, vocab_size):
    monkeypatch.setattr(megatron, "CONVERT_IDS", 5)  # 23 ids in 5 pieces, the last one short
    rng = np.random.default_rng(0)
    docs = [rng.integers(0, 50257, size).tolist() for size in (23, 0, 5, 1)]
    with MegatronWriter(local_opener(tmp_path), "s", vocab_size) as w:
        w.add_many(array("i", [i for d in docs for i in d]), array("i", map(len, docs)))
    seqs, _, _ = read_megatron(tmp_path / "s")
    assert seqs == docs
