"""The shard formats beside Parquet, each read back by its consumer's own reader (numpy's
memory-mapped `numpy.load`), against the Parquet file of the same shard read by pyarrow."""
import hashlib
import json
import random
from array import array

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tokfx.formats.shards.files import local_opener
from tokfx.formats.shards.formats import DEFAULT_FORMATS, FORMATS, chosen_formats
from tokfx.formats.shards import mds
from tokfx.formats.shards.mds import INDEX_JSON, mds_index_json
from tokfx.formats.shards.writer import ShardWriter
from streaming_mds import mds_writer_class, read_mds


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


@pytest.mark.parametrize("given", [["npy"], ["parquet,"], ["parquet,mdss"]])
def test_a_format_tokfx_does_not_write_is_refused(given):
    with pytest.raises(ValueError, match=r"not a shard format \(choose from parquet, megatron, numpy, datatrove, mds"):
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


def _mds_dataset(directory, vocab_size, parts, kept=(), values=None):
    """`parts` shards written as parquet + mds into directory/shards/, and index.json over them
    as the manifest step writes it (tokfx.formats.shards.mds.mds_index_json)."""
    folder = directory / "shards"
    folder.mkdir()
    entries = []
    for k, docs in enumerate(parts):
        writer = ShardWriter(local_opener(folder), f"shard-{k}", vocab_size, {}, 256, kept=kept,
                             formats=("parquet", "mds"))
        for row, (doc_id, ids, source) in enumerate(docs):
            writer.add(doc_id, array("i", ids), source, 1, values[row] if values else ())
        info = writer.close()
        entries.append({"name": f"shard-{k}", "documents": info.documents,
                        "files": {f"shards/{n}": d for n, d in info.files.items()},
                        "sizes": {f"shards/{n}": s for n, s in info.sizes.items()}})
    (folder / INDEX_JSON).write_bytes(mds_index_json(entries, lambda relative: open(directory / relative, "rb")))
    return folder


@pytest.mark.parametrize("vocab_size, dtype", [(300, np.uint16), (70_000, np.int32)])
def test_streamings_own_reader_reads_the_mds_shards_through_their_index(tmp_path, vocab_size, dtype):
    docs = _docs(vocab_size, vocab_size, count=300)
    docs[5] = ("long", list(range(vocab_size - 1)) * 2, "s:5")  # a shape of 2 bytes (>= 256 ids)
    folder = _mds_dataset(tmp_path, vocab_size, [docs[:170], docs[170:]])
    samples = read_mds(folder)
    parquet = [i for k in range(2) for i in
               pq.read_table(folder / f"shard-{k}.parquet").column("input_ids").to_pylist()]
    assert [sorted(s) for s in samples] == [["tokens"]] * len(docs)
    assert all(s["tokens"].dtype == dtype and s["tokens"].ndim == 1 for s in samples)
    assert [s["tokens"].tolist() for s in samples] == parquet == [d[1] for d in docs]
    assert samples[-1]["tokens"].tolist() == []  # the empty document, read as an empty array
    index = json.loads((folder / INDEX_JSON).read_text())
    for k, entry in enumerate(index["shards"]):
        data = (folder / f"shard-{k}.mds").read_bytes()
        assert entry["raw_data"] == {"basename": f"shard-{k}.mds", "bytes": len(data),
                                     "hashes": {"sha256": hashlib.sha256(data).hexdigest()}}


def test_streamings_reader_reads_the_kept_fields_as_the_parquet_columns_hold_them(tmp_path):
    kept = [("url", pa.string()), ("score", pa.float64()), ("year", pa.int64()), ("ok", pa.bool_())]
    docs = _docs(3, 300, count=40)
    rng = random.Random(3)
    values = [(rng.choice([None, "https://é.example/", f"u{k}"]), rng.choice([None, 0.1 * k, float("nan")]),
               rng.choice([None, k, -2 ** 40]), rng.choice([None, True, False])) for k in range(len(docs))]
    folder = _mds_dataset(tmp_path, 300, [docs], kept, values)
    samples = read_mds(folder)
    table = pq.read_table(folder / "shard-0.parquet").to_pylist()
    assert [sorted(s) for s in samples] == [["ok", "score", "tokens", "url", "year"]] * len(docs)
    for sample, row in zip(samples, table, strict=True):
        assert sample["tokens"].tolist() == row["input_ids"]
        for name, _ in kept:
            assert sample[name] == row[name] or (sample[name] != sample[name] and row[name] != row[name]), name


def test_a_kept_field_named_tokens_is_refused_by_the_mds_format(tmp_path):
    with pytest.raises(ValueError, match="--keep-fields 'tokens': the ids' column of --format mds"):
        ShardWriter(local_opener(tmp_path), "s", 300, {}, kept=[("tokens", pa.string())], formats=("mds",))


def test_an_empty_mds_shard_has_no_samples_for_streamings_reader(tmp_path):
    folder = _mds_dataset(tmp_path, 300, [[], _docs(4, 300, count=3)])
    assert [s["tokens"].tolist() for s in read_mds(folder)] == [d[1] for d in _docs(4, 300, count=3)]
    assert FORMATS["mds"].counts(str(folder / "shard-0")) == (0, 0)


def test_an_mds_shard_file_past_its_uint32_offsets_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(mds, "_LIMIT", 2_000)  # 4 GiB, made small: the rule, not the size
    with pytest.raises(ValueError, match=r"s\.mds: 2,\d{3} bytes; an MDS shard file holds less than 4 GiB"):
        _write(tmp_path, _docs(5, 300, count=100), 300, ("mds",), row_group_bytes=64)


@pytest.mark.parametrize("vocab_size, dtype", [(300, "uint16"), (70_000, "int32")])
def test_the_mds_shard_is_the_bytes_streamings_mdswriter_writes(tmp_path, vocab_size, dtype):
    """streaming's own writer, given the same samples, columns and settings (one shard, no
    compression, sha256), writes the same file and the same index entry (but its file's name).
    No empty document: MDSWriter refuses one."""
    writer_class = mds_writer_class()
    docs = [d for d in _docs(vocab_size, vocab_size, count=300) if d[1]]
    docs[7] = ("long", list(range(vocab_size - 1)) * 2, "s:7")
    rng = random.Random(vocab_size)
    values = [(rng.choice([None, "https://é.example/", f"u{k}"]), rng.choice([None, k / 7, 3]))
              for k in range(len(docs))]
    kept = [("url", pa.string()), ("score", pa.float64())]
    (tmp_path / "ours").mkdir()
    ours = _mds_dataset(tmp_path / "ours", vocab_size, [docs], kept, values)
    with writer_class(columns={"tokens": f"ndarray:{dtype}", "url": "json", "score": "json"},
                      out=str(tmp_path / "theirs"), size_limit=None, hashes=["sha256"]) as theirs:
        for (_, ids, _), (url, score) in zip(docs, values, strict=True):
            theirs.write({"tokens": np.array(ids, dtype), "url": url, "score": score})
    assert (ours / "shard-0.mds").read_bytes() == (tmp_path / "theirs" / "shard.00000.mds").read_bytes()
    [entry] = json.loads((ours / INDEX_JSON).read_text())["shards"]
    [expected] = json.loads((tmp_path / "theirs" / "index.json").read_text())["shards"]
    assert entry["raw_data"].pop("basename") == "shard-0.mds"
    assert expected["raw_data"].pop("basename") == "shard.00000.mds"
    assert entry == expected
