"""The shard formats beside Parquet, each read back by its consumer's own reader (numpy's
memory-mapped `numpy.load`), against the Parquet file of the same shard read by pyarrow."""
import hashlib
import random
from array import array

import numpy as np
import pyarrow.parquet as pq
import pytest

from tokfx.formats.shards.files import local_opener
from tokfx.formats.shards.formats import DEFAULT_FORMATS, FORMATS, chosen_formats
from tokfx.formats.shards.writer import ShardWriter


def _docs(seed, vocab_size, count=60):
    rng = random.Random(seed)
    docs = [(f"d{i}", [rng.randrange(vocab_size) for _ in range(rng.randrange(80))], f"s:{i}")
            for i in range(count)]
    return docs + [("empty", [], "s:0")]


def _write(directory, docs, vocab_size, formats, row_group_bytes=256, name="s"):
    writer = ShardWriter(local_opener(directory), name, vocab_size, {}, row_group_bytes, formats=formats)
    for doc_id, ids, source in docs:
        writer.add(doc_id, array("i", ids), source, 1)
    return writer.close()


@pytest.mark.parametrize("vocab_size, dtype", [(300, np.uint16), (70_000, np.int32)])
def test_numpy_loads_the_flat_token_file_and_its_offsets(tmp_path, vocab_size, dtype):
    docs = _docs(vocab_size, vocab_size)
    info = _write(tmp_path, docs, vocab_size, ("parquet", "numpy"))
    tokens = np.load(tmp_path / "s.tokens.npy", mmap_mode="r")
    offsets = np.load(tmp_path / "s.offsets.npy", mmap_mode="r")
    assert isinstance(tokens, np.memmap) and tokens.dtype == dtype and tokens.ndim == 1
    assert offsets.dtype == np.int64 and len(offsets) == len(docs) + 1
    from_numpy = [tokens[offsets[k]:offsets[k + 1]].tolist() for k in range(len(docs))]
    assert from_numpy == pq.read_table(tmp_path / "s.parquet").column("input_ids").to_pylist()
    assert from_numpy == [d[1] for d in docs]
    assert sorted(info.files) == ["s.offsets.npy", "s.parquet", "s.tokens.npy"]
    for name in info.files:
        data = (tmp_path / name).read_bytes()
        assert info.files[name] == hashlib.sha256(data).hexdigest() and info.sizes[name] == len(data)


def test_an_empty_shard_is_an_empty_array(tmp_path):
    _write(tmp_path, [], 300, ("numpy",))
    assert np.load(tmp_path / "s.tokens.npy").shape == (0,)
    assert np.load(tmp_path / "s.offsets.npy").tolist() == [0]


def test_every_format_holds_the_same_documents_whatever_the_row_groups(tmp_path):
    docs = _docs(1, 500, count=200)
    _write(tmp_path, docs, 500, tuple(FORMATS), row_group_bytes=64)
    for name, format in FORMATS.items():
        prefix = str(tmp_path / "s")
        assert format.counts(prefix) == (len(docs), sum(len(d[1]) for d in docs)), name
        assert [format.document(prefix, k) for k in (0, 57, len(docs) - 1)] == \
            [docs[k][1] for k in (0, 57, len(docs) - 1)], name


@pytest.mark.parametrize("given, chosen", [
    (None, DEFAULT_FORMATS),
    (["numpy"], ("numpy",)),
    (["numpy,parquet"], ("parquet", "numpy")),
    (["megatron", "parquet,megatron"], ("parquet", "megatron")),
])
def test_the_formats_given_in_any_order_or_spelling_are_one_choice(given, chosen):
    assert chosen_formats(given) == chosen


@pytest.mark.parametrize("given", [["npy"], ["parquet,"], ["parquet,mds"]])
def test_a_format_tokfx_does_not_write_is_refused(given):
    with pytest.raises(ValueError, match=r"not a shard format \(choose from parquet, megatron, numpy, datatrove"):
        chosen_formats(given)


def _datatrove_dataset():
    pytest.importorskip("torch", reason="datatrove's dataset class needs torch (pip install torch datatrove)")
    return pytest.importorskip("datatrove.utils.dataset",
                               reason="datatrove reads the .ds files (pip install datatrove)").DatatroveFolderDataset


@pytest.mark.parametrize("vocab_size, token_size", [(300, 2), (70_000, 4)])
def test_datatroves_own_dataset_reads_the_ds_files(tmp_path, vocab_size, token_size):
    folder_dataset = _datatrove_dataset()
    # No empty document: datatrove's positions take a repeated end for a reset (docs/algorithms.md).
    docs = [d for d in _docs(vocab_size, vocab_size, count=80) if d[1]]
    for part in range(2):
        _write(tmp_path, docs[part::2], vocab_size, ("parquet", "datatrove"), name=f"shard-{part}")
    seq_len = 15
    dataset = folder_dataset(str(tmp_path), seq_len=seq_len, token_size=token_size, return_positions=True)
    windows = seq_len + 1
    start = 0
    for part in range(2):  # its files in sorted order, each cut into whole windows
        table = pq.read_table(tmp_path / f"shard-{part}.parquet").column("input_ids").to_pylist()
        flat = [i for ids in table for i in ids]
        ends = np.cumsum([len(ids) for ids in table]).tolist()
        count = len(flat) // windows
        for w in range(count):
            item = dataset[start + w]
            assert item["input_ids"].tolist() == flat[w * windows:(w + 1) * windows]
            expected = [g - max([w * windows] + [e for e in ends if e <= g])
                        for g in range(w * windows, (w + 1) * windows)]
            assert item["positions"].tolist() == expected
        start += count
    assert len(dataset) == start
