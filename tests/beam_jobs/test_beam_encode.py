"""EncodeTasks and WriteManifest on the in-process runner: read tasks in, shards and a manifest
out, read back with pyarrow and the tests' Megatron reader, the ids against Tokenizer's own."""
import hashlib
import json
import zlib

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing import test_pipeline

import tokfx
from beam_jobs.encode import TASKS, EncodeSettings, EncodeTasks
from beam_jobs.manifest import WriteManifest
from beam_jobs.plan import plan_reads
from beam_jobs.read import REJECTED
from beam_jobs.records import TokenizerFile
from megatron_reader import read_megatron
from pipeline_corpus import EOT, SOURCES, output_digests, paragraphs, write_zst_shards
from tokfx.formats.readers import ReadOptions
from tokfx.formats.readers.policy import ErrorPolicy
from tokfx.formats.tokfx_json import tokenizer_hash

CONFIG = {"note": "what the run was given"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    texts = [p for source in SOURCES for p in paragraphs(source, 6_000)] + ["", f"a {EOT} inside"]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, texts, shards=2)


@pytest.fixture(scope="module")
def tokenizer(corpus):
    return tokfx.train(list(corpus[1].values()), vocab_size=300, special_tokens=[EOT])


def _encode(out, corpus_dir, tokenizer, shard_size=1 << 30, eos=None, split=False, extra_inputs=()):
    options = ReadOptions(separators=(EOT,))
    plan = plan_reads([str(corpus_dir / "*.jsonl.zst"), *extra_inputs], options, 1 << 20, ErrorPolicy("skip"))
    settings = EncodeSettings(str(out), options, "skip", shard_size, eos, split, "digest",
                              json.dumps(CONFIG), len(plan.tasks), progress=False)
    with test_pipeline.TestPipeline() as p:
        tokenizer_file = p | "Tokenizer" >> beam.Create([TokenizerFile.of(tokenizer)])
        encoded = p | beam.Create(plan.tasks) | EncodeTasks(tokenizer_file, settings)
        ({"shards": encoded.shards, "tasks": encoded[TASKS],
          "rejected": (encoded[REJECTED], p | "Planned" >> beam.Create(plan.rejected)) | beam.Flatten()}
         | WriteManifest(str(out), CONFIG, "10%", tokenizer_file, len(plan.tasks)))
    return json.loads((out / "manifest.json").read_text())


def _rows(out):
    return [row for path in sorted((out / "shards").glob("*.parquet"))
            for row in pq.read_table(path).to_pylist()]


def test_every_document_in_file_order_in_parquet_and_megatron(corpus, tokenizer, tmp_path):
    manifest = _encode(tmp_path, corpus[0], tokenizer)
    rows = _rows(tmp_path)
    assert [r["id"] for r in rows] == list(corpus[1])  # files in order, lines in order
    for row in rows:
        text = corpus[1][row["id"]]
        assert row["input_ids"] == tokenizer.encode_ordinary(text) and row["num_tokens"] == len(row["input_ids"])
    inside = next(r for r in rows if EOT in corpus[1][r["id"]])
    assert tokenizer.token_to_id(EOT) not in inside["input_ids"]  # a literal is text by default
    for path in sorted((tmp_path / "shards").glob("*.parquet")):
        seqs, _, doc_index = read_megatron(path.with_suffix(""))
        assert seqs == pq.read_table(path).column("input_ids").to_pylist()
        assert doc_index == list(range(len(seqs) + 1))
        assert pq.read_schema(path).metadata[b"tokfx.tokenizer_hash"].decode() == tokenizer_hash(tokenizer)
    assert [s["name"] for s in manifest["shards"]] == ["shard-00000-0000", "shard-00001-0000"]
    for shard in manifest["shards"]:
        for name, digest in shard["files"].items():
            assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == digest
    totals = manifest["totals"]
    assert totals["documents_read"] == totals["documents_written"] == len(corpus[1])
    assert totals["documents_empty"] == 1
    assert totals["bytes"] == sum(len(t.encode()) for t in corpus[1].values())
    assert not list((tmp_path / "shards").glob(".*")), "no temporary file is left"


def test_shards_roll_over_at_the_shard_size(corpus, tokenizer, tmp_path):
    whole = tmp_path / "whole"
    _encode(whole, corpus[0], tokenizer)
    small = tmp_path / "small"
    manifest = _encode(small, corpus[0], tokenizer, shard_size=4000)
    names = [s["name"] for s in manifest["shards"]]
    assert len(names) > 6 and names == sorted(names)
    assert {n.split("-")[1] for n in names} == {"00000", "00001"}
    for task in ("00000", "00001"):
        sizes = [(small / "shards" / f"{n}.bin").stat().st_size for n in names if n.split("-")[1] == task]
        # Every shard but the task's last is full; none is fuller than one document more.
        assert all(size >= 4000 for size in sizes[:-1]) and 0 < sizes[-1]
    assert _rows(small) == _rows(whole)


@pytest.mark.parametrize("eos, split", [(EOT, False), (None, True)])
def test_eos_and_split_special_tokens(corpus, tokenizer, tmp_path, eos, split):
    _encode(tmp_path, corpus[0], tokenizer, eos=eos, split=split)
    encode = tokenizer.encode if split else tokenizer.encode_ordinary
    tail = [tokenizer.token_to_id(EOT)] if eos else []
    for row in _rows(tmp_path):
        assert row["input_ids"] == encode(corpus[1][row["id"]]) + tail
    inside = next(r for r in _rows(tmp_path) if EOT in corpus[1][r["id"]])
    assert (tokenizer.token_to_id(EOT) in inside["input_ids"][:len(inside["input_ids"]) - len(tail)]) == split


def test_rejected_records_and_the_manifest_add_up(corpus, tokenizer, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cut.jsonl.gz").write_bytes(zlib.compress(b"x" * 100)[:20])
    (bad / "lines.jsonl").write_bytes(b'{"text": "fine"}\n{not json\n')
    out = tmp_path / "out"
    manifest = _encode(out, corpus[0], tokenizer, extra_inputs=[str(bad / "*"), str(bad / "none*.jsonl")])
    rejected = [json.loads(line) for line in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert [(r["file"].rsplit("/", 1)[1], r["line"]) for r in rejected] == [
        ("cut.jsonl.gz", None), ("lines.jsonl", 2), ("none*.jsonl", None)]
    totals = manifest["totals"]
    assert (totals["documents_rejected"], totals["files_rejected"]) == (1, 2)
    assert totals["documents_written"] == len(corpus[1]) + 1
    assert totals["documents_read"] == totals["documents_written"] + 1


def test_the_output_is_the_same_whatever_the_bundle_order(corpus, tokenizer, tmp_path):
    _encode(tmp_path / "a", corpus[0], tokenizer, shard_size=4000)
    _encode(tmp_path / "b", corpus[0], tokenizer, shard_size=4000)
    assert output_digests(tmp_path / "a") == output_digests(tmp_path / "b")
