"""WriteShards on the DirectRunner: the files read back with pyarrow and the Megatron reader of
the tests, the manifest against the documents given."""
import hashlib
import json
from array import array

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

import tokfx
from beam_jobs.records import EncodedDoc, TokenizerFile
from beam_jobs.write import WriteShards
from megatron_reader import read_megatron
from pipeline_corpus import EOT, SOURCES, paragraphs
from tokfx.formats.documents import Document, Rejection
from tokfx.formats.shards.placement import shard_index
from tokfx.formats.tokfx_json import tokenizer_hash

SHARDS = 3
CONFIG = {"num_shards": SHARDS, "note": "what the run was given"}
REJECTED = [Rejection("in/gone.jsonl", None, "empty file", whole_file=True), Rejection("in/bad.jsonl", 7, "not JSON")]


@pytest.fixture(scope="module")
def docs():
    texts = [p for source in SOURCES for p in paragraphs(source, 4_000)] + [""]
    # Ids in an order of their own, so that the shards' sorting shows.
    return [Document(f"doc-{i * 7919 % 10007:05d}", text, f"corpus.jsonl:{i + 1}")
            for i, text in enumerate(texts)]


@pytest.fixture(scope="module")
def tokenizer(docs):
    return tokfx.train([d.text for d in docs], vocab_size=300, special_tokens=[EOT])


def _write(out, docs, tokenizer, rejected=(), documents_read=None, num_shards=SHARDS):
    """Run WriteShards over `docs` encoded by the test; `documents_read` (default: `docs`) is
    what ReadCorpus would have passed on."""
    keyed = [(shard_index(d.id, num_shards),
              EncodedDoc(d.id, array("i", tokenizer.encode(d.text)).tobytes(), d.source,
                         len(d.text.encode("utf-8")))) for d in docs]
    with test_pipeline.TestPipeline() as p:
        manifest = (p | "Keyed" >> beam.Create(keyed)
                    | WriteShards(str(out), num_shards, {**CONFIG, "num_shards": num_shards},
                                  p | "Tokenizer" >> beam.Create([TokenizerFile.of(tokenizer)]),
                                  p | "Read" >> beam.Create(documents_read or docs),
                                  p | "Rejected" >> beam.Create(list(rejected))))
        assert_that(manifest, equal_to([str(out / "manifest.json")]))


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_shards_hold_every_document_sorted_by_id_in_parquet_and_megatron(docs, tokenizer, tmp_path):
    _write(tmp_path, docs, tokenizer, REJECTED)
    for index in range(SHARDS):
        mine = sorted((d for d in docs if shard_index(d.id, SHARDS) == index), key=lambda d: d.id)
        assert mine, "every shard gets documents"
        prefix = tmp_path / "shards" / f"shard-{index:05d}-of-{SHARDS:05d}"
        table = pq.read_table(f"{prefix}.parquet")
        ids = [tokenizer.encode(d.text) for d in mine]
        assert table.column("id").to_pylist() == [d.id for d in mine]
        assert table.column("source").to_pylist() == [d.source for d in mine]
        assert table.column("input_ids").to_pylist() == ids
        assert table.column("num_tokens").to_pylist() == [len(x) for x in ids]
        footer = table.schema.metadata
        assert footer[b"tokfx.tokenizer_hash"].decode() == tokenizer_hash(tokenizer)
        assert json.loads(footer[b"tokfx.alphabet"]) == {"name": "bytes"}
        assert json.loads(footer[b"tokfx.config"]) == CONFIG
        seqs, _, doc_index = read_megatron(prefix)
        assert seqs == ids and doc_index == list(range(len(ids) + 1))
    assert len(list((tmp_path / "shards").iterdir())) == 3 * SHARDS


def test_manifest_lists_the_files_and_the_counts_add_up(docs, tokenizer, tmp_path):
    _write(tmp_path, docs, tokenizer, REJECTED)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["tokenizer_hash"] == tokenizer_hash(tokenizer)
    assert manifest["alphabet"] == {"name": "bytes"} and manifest["config"] == CONFIG
    assert [s["index"] for s in manifest["shards"]] == list(range(SHARDS))
    for shard in manifest["shards"]:
        mine = [d for d in docs if shard_index(d.id, SHARDS) == shard["index"]]
        name = f"shards/shard-{shard['index']:05d}-of-{SHARDS:05d}"
        assert shard["files"] == {f"{name}.{ext}": _sha256(tmp_path / f"{name}.{ext}")
                                  for ext in ("parquet", "bin", "idx")}
        assert shard["documents"] == len(mine)
        assert shard["empty_documents"] == sum(d.text == "" for d in mine)
        assert shard["tokens"] == sum(len(tokenizer.encode(d.text)) for d in mine)
        assert shard["bytes"] == sum(len(d.text.encode("utf-8")) for d in mine)
    assert manifest["totals"] == {
        "documents_read": len(docs) + 1, "documents_written": len(docs),
        "documents_rejected": 1, "files_rejected": 1, "documents_empty": 1,
        "bytes": sum(len(d.text.encode("utf-8")) for d in docs),
        "tokens": sum(len(tokenizer.encode(d.text)) for d in docs)}
    rejected = (tmp_path / "rejected" / "rejected.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in rejected] == [
        {"file": "in/bad.jsonl", "line": 7, "reason": "not JSON"},
        {"file": "in/gone.jsonl", "line": None, "reason": "empty file"}]


def test_only_shards_with_documents_are_written(docs, tokenizer, tmp_path):
    few = docs[:2]
    _write(tmp_path, few, tokenizer, num_shards=16)
    indexes = sorted({shard_index(d.id, 16) for d in few})
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert [s["index"] for s in manifest["shards"]] == indexes
    assert len(list((tmp_path / "shards").iterdir())) == 3 * len(indexes)
    assert not (tmp_path / "rejected").exists()  # nothing rejected, no file


def test_a_document_read_but_not_written_fails_the_manifest(docs, tokenizer, tmp_path):
    lost = Document("doc-lost", "read, then lost", "corpus.jsonl:999")
    with pytest.raises(Exception, match="documents do not add up"):
        _write(tmp_path, docs, tokenizer, documents_read=docs + [lost])
    assert not (tmp_path / "manifest.json").exists()
