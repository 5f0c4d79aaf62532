"""Counts files, shards and the manifest: the library pieces the pipeline writes with."""
import random
from array import array

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from megatron_reader import read_megatron
from tokfx.counting.tables import most_frequent
from tokfx.formats.counts import read_counts, write_counts
from tokfx.formats.shards.manifest import build_manifest
from tokfx.formats.shards.writer import write_shard

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


def test_most_frequent_breaks_ties_toward_the_smaller_pretoken():
    counts = {b"b": 5, b"a": 5, b"c": 9, b"d": 1}
    assert most_frequent(counts, 2) == {b"c": 9, b"a": 5}


def test_a_shard_does_not_depend_on_the_order_documents_arrive_in(tmp_path):
    docs = [(f"doc{i}", list(range(i)), f"f:{i}") for i in range(30)]
    first = write_shard(tmp_path, "a", docs, 300, {"k": "v"})
    random.Random(1).shuffle(docs)
    second = write_shard(tmp_path, "b", docs, 300, {"k": "v"})
    for suffix in (".parquet", ".bin", ".idx"):
        assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()
    assert first["documents"] == 30 and first["empty_documents"] == 1
    assert first["tokens"] == sum(range(30)) == second["tokens"]
    seqs, _, _ = read_megatron(tmp_path / "a")
    assert seqs == [list(range(i)) for i in sorted(range(30), key=lambda i: f"doc{i}")]


@pytest.mark.parametrize("vocab_size", [300, 70_000])
def test_ids_as_arrays_or_lists_give_the_same_shard(tmp_path, vocab_size):
    rng = random.Random(vocab_size)
    docs = [(f"d{i}", [rng.randrange(vocab_size) for _ in range(rng.randrange(50))], "s")
            for i in range(40)]
    write_shard(tmp_path, "lists", docs, vocab_size, {})
    write_shard(tmp_path, "arrays", [(d, array("i", ids), s) for d, ids, s in docs], vocab_size, {})
    for suffix in (".parquet", ".bin", ".idx"):
        assert (tmp_path / f"lists{suffix}").read_bytes() == (tmp_path / f"arrays{suffix}").read_bytes()
    table = pq.read_table(tmp_path / "arrays.parquet")
    by_id = {doc_id: ids for doc_id, ids, _ in docs}
    assert table.column("input_ids").to_pylist() == [by_id[i] for i in table.column("id").to_pylist()]
    assert table.column("num_tokens").to_pylist() == [len(by_id[i]) for i in table.column("id").to_pylist()]


def _shard(documents):
    return {"index": 0, "files": {"shards/s.parquet": "cd" * 32}, "documents": documents,
            "empty_documents": 0, "tokens": 5, "bytes": 9}


def test_the_manifest_refuses_counts_that_do_not_add_up():
    totals = {"documents_read": 10, "documents_rejected": 1, "files_rejected": 0,
              "documents_empty": 0, "bytes": 9, "tokens": 5}
    manifest = build_manifest(CONFIG, HASH, {"name": "bytes"}, [_shard(9)], totals)
    assert manifest["totals"]["documents_written"] == 9
    with pytest.raises(ValueError, match="do not add up"):
        build_manifest(CONFIG, HASH, {"name": "bytes"}, [_shard(8)], totals)
