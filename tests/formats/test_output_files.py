"""Counts files, shards and the manifest: the library pieces the pipeline writes with."""
import gc
import hashlib
import random
import sys
from array import array

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from megatron_reader import read_megatron
from tokfx.formats.counts import read_counts, write_counts
from tokfx.formats.shards.manifest import build_manifest
from tokfx.formats.shards.files import local_opener
from tokfx.formats.shards import parquet
from tokfx.formats.shards.writer import ROW_GROUP_BYTES, ShardWriter

CONFIG = {"vocab_size": 300}
HASH = "ab" * 32


def test_counts_round_trip_with_the_declared_columns(tmp_path):
    counts = {b" the": 10, b"\xff\x00": 2**40, b"a": 1}
    write_counts(tmp_path / "c.parquet", counts)
    assert read_counts(tmp_path / "c.parquet") == counts
    schema = pq.read_schema(tmp_path / "c.parquet")
    assert schema.field("pretoken").type == pa.binary() and schema.field("count").type == pa.uint64()


def test_a_parquet_file_with_other_columns_is_refused(tmp_path):
    pq.write_table(pa.table({"word": ["a"], "n": [1]}), tmp_path / "other.parquet")
    with pytest.raises(ValueError, match="pretoken: binary, count: uint64"):
        read_counts(tmp_path / "other.parquet")


def _write(directory, name, docs, vocab_size, row_group_bytes=ROW_GROUP_BYTES):
    writer = ShardWriter(local_opener(directory), name, vocab_size, {"k": "v"}, row_group_bytes)
    for doc_id, ids, source in docs:
        writer.add(doc_id, array("i", ids), source, len(ids) * 3)
    return writer.close()


@pytest.mark.parametrize("vocab_size", [300, 70_000])
def test_a_shard_holds_its_documents_in_order_in_parquet_and_megatron(tmp_path, vocab_size):
    rng = random.Random(vocab_size)
    docs = [(f"d{rng.randrange(1000)}", [rng.randrange(vocab_size) for _ in range(rng.randrange(50))], f"s{i}")
            for i in range(40)] + [("empty", [], "s40")]
    info = _write(tmp_path, "s", docs, vocab_size)
    table = pq.read_table(tmp_path / "s.parquet")
    assert table.column("id").to_pylist() == [d[0] for d in docs]
    assert table.column("input_ids").to_pylist() == [d[1] for d in docs]
    assert table.column("num_tokens").to_pylist() == [len(d[1]) for d in docs]
    assert table.column("source").to_pylist() == [d[2] for d in docs]
    assert pq.read_schema(tmp_path / "s.parquet").metadata[b"k"] == b"v"
    seqs, _, _ = read_megatron(tmp_path / "s")
    assert seqs == [d[1] for d in docs]
    assert (info.documents, info.empty_documents) == (41, sum(not d[1] for d in docs))
    assert info.tokens == sum(len(d[1]) for d in docs) and info.bytes == 3 * info.tokens
    for name in ("s.parquet", "s.bin", "s.idx"):
        data = (tmp_path / name).read_bytes()
        assert info.files[name] == hashlib.sha256(data).hexdigest() and info.sizes[name] == len(data)


def test_row_groups_are_bounded_and_do_not_change_the_rows(tmp_path):
    docs = [(f"d{i}", list(range(i % 50)), "s") for i in range(300)]
    _write(tmp_path, "one", docs, 300)
    _write(tmp_path, "many", docs, 300, row_group_bytes=400)
    assert pq.ParquetFile(tmp_path / "one.parquet").num_row_groups == 1
    many = pq.ParquetFile(tmp_path / "many.parquet")
    assert many.num_row_groups > 20
    # A row group closes once it holds 400 bytes of ids: 100 int32 ids, plus one document.
    assert all(many.metadata.row_group(g).num_rows <= 100 for g in range(many.num_row_groups))
    assert many.read().to_pylist() == pq.read_table(tmp_path / "one.parquet").to_pylist()


@pytest.mark.parametrize("chunk_ids, lengths", [
    (100, [0, 1, 3, 40, 99, 100, 101, 350]),  # many chunks; documents longer than one; empty ones
    (parquet.CHUNK_IDS, [0, 900, 2000, 3000]),  # the default: a row group of several chunks
])
def test_ids_handed_to_pyarrow_in_chunks_write_the_file_it_writes_from_whole_row_groups(
        tmp_path, monkeypatch, chunk_ids, lengths):
    # ParquetShardWriter hands each row group's input_ids to pyarrow in slices of about
    # CHUNK_IDS ids (a pipeline worker's memory): the file must be, byte for byte, the one
    # pyarrow writes from each row group's documents as one table of Python lists.
    monkeypatch.setattr(parquet, "CHUNK_IDS", chunk_ids)
    rng = random.Random(chunk_ids)
    docs = [(f"d{i}", [rng.randrange(50_000) for _ in range(rng.choice(lengths))], f"s{i % 3}") for i in range(300)]
    group_ids = 3 * chunk_ids  # a row group closes with the document that brings it to group_ids ids
    _write(tmp_path, "chunked", docs, 50_000, row_group_bytes=4 * group_ids)
    groups, held = [[]], 0
    for doc in docs:
        groups[-1].append(doc)
        held += len(doc[1])
        if held >= group_ids:
            groups, held = groups + [[]], 0
    groups = [g for g in groups if g]
    assert len(groups) > 1
    with pq.ParquetWriter(tmp_path / "whole.parquet", parquet.shard_schema().with_metadata({"k": "v"}),
                          compression="zstd", data_page_size=parquet.DATA_PAGE_BYTES) as writer:
        for group in groups:
            writer.write_table(pa.table({"id": [d[0] for d in group],
                                         "input_ids": pa.array([d[1] for d in group], pa.list_(pa.int32())),
                                         "num_tokens": pa.array([len(d[1]) for d in group], pa.int32()),
                                         "source": [d[2] for d in group]}, schema=writer.schema))
    assert (tmp_path / "chunked.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()


def _shard(documents):
    return {"name": "shard-00000-0000", "files": {"shards/s.parquet": "cd" * 32}, "documents": documents,
            "empty_documents": 0, "tokens": 5, "bytes": 9}


def test_the_manifest_refuses_counts_that_do_not_add_up():
    totals = {"documents_read": 10, "documents_rejected": 1, "files_rejected": 0,
              "documents_empty": 0, "bytes": 9, "tokens": 5}
    manifest = build_manifest(CONFIG, HASH, {"name": "bytes"}, [_shard(9)], totals)
    assert manifest["totals"]["documents_written"] == 9
    with pytest.raises(ValueError, match="do not add up"):
        build_manifest(CONFIG, HASH, {"name": "bytes"}, [_shard(8)], totals)


def test_an_aborted_shard_leaves_no_writer_to_close_later(tmp_path, monkeypatch):
    # pyarrow's writer, left open by abort(), closed itself when garbage-collected, into its
    # closed file: "Exception ignored in: ParquetWriter.__del__ ... write to closed file" after
    # every Ctrl-C of a pipeline run.
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    writer = ShardWriter(local_opener(tmp_path), "shard", 300, {})
    writer.add("doc", array("i", [1, 2, 3]), "file:1", 3)
    writer.abort()
    del writer
    gc.collect()
    assert [u.exc_value for u in unraisable] == []
