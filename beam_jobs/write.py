"""WriteShards: (shard index, EncodedDoc) pairs -> Parquet + Megatron shards, rejected/,
manifest.json last.

Each shard is written on a worker's local disk, then copied to the output filesystem. The
tokenizer (for its vocabulary size and alphabet) is built once per worker process. The
manifest waits for every shard, for the rejected records and for the count of documents read.
"""
from __future__ import annotations

import json
import logging
import tempfile
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from tokfx.formats.rejected import write_rejected
from tokfx.formats.shards.manifest import MANIFEST_JSON, build_manifest, manifest_json_bytes
from tokfx.formats.shards.placement import shard_name
from tokfx.formats.shards.writer import write_shard
from beam_jobs.files import publish, write_bytes
from beam_jobs.records import WrittenShard

SHARDS_DIR = "shards"
REJECTED_DIR = "rejected"
REJECTED_FILE = f"{REJECTED_DIR}/rejected.jsonl"
log = logging.getLogger(__name__)


class _WriteShard(beam.DoFn):
    def __init__(self, shared: Shared, output_dir: str, num_shards: int, config: dict,
                 progress: bool):
        self.shared = shared
        self.output_dir, self.num_shards, self.config = output_dir, num_shards, config
        self.progress = progress
        self.written = Metrics.counter("tokfx", "documents_written")
        self.usec = Metrics.counter("tokfx", "usec_write")

    def process(self, shard, tokenizer_file):
        start = time.perf_counter()
        index, docs = shard
        docs = list(docs)
        tokenizer = self.shared.acquire(tokenizer_file.load, tag=tokenizer_file.hash)
        metadata = {"tokfx.tokenizer_hash": tokenizer_file.hash,
                    "tokfx.alphabet": json.dumps(tokenizer.alphabet.to_dict()),
                    "tokfx.config": json.dumps(self.config, sort_keys=True)}
        name = shard_name(index, self.num_shards)
        with tempfile.TemporaryDirectory() as local:
            rows = [(doc.id, doc.ids(), doc.source) for doc in docs]
            info = write_shard(local, name, rows, tokenizer.vocab_size, metadata)
            for file in info["files"]:
                publish(Path(local) / file, FileSystems.join(self.output_dir, SHARDS_DIR, file))
        self.written.inc(info["documents"])
        if self.progress:
            log.info("wrote %s: %s documents, %s tokens", name, f"{info['documents']:,}",
                     f"{info['tokens']:,}")
        self.usec.inc(int((time.perf_counter() - start) * 1e6))
        info["files"] = {f"{SHARDS_DIR}/{f}": h for f, h in info["files"].items()}
        yield WrittenShard(index=index, **info, bytes=sum(doc.text_size for doc in docs))


def _write_manifest(shards, output_dir: str, config: dict, tokenizer_file, rejected: dict,
                    documents_accepted: int) -> str:
    totals = {"documents_read": documents_accepted + rejected["documents_rejected"], **rejected,
              "documents_empty": sum(s.empty_documents for s in shards),
              "bytes": sum(s.bytes for s in shards),
              "tokens": sum(s.tokens for s in shards)}
    manifest = build_manifest(config, tokenizer_file.hash, tokenizer_file.alphabet(),
                              [s._asdict() for s in shards], totals)
    path = FileSystems.join(output_dir, MANIFEST_JSON)
    write_bytes(path, manifest_json_bytes(manifest))
    return path


class WriteShards(beam.PTransform):
    """(shard index, EncodedDoc) pairs -> shards; the output is the manifest's path, once
    written. `tokenizer_file`: the PCollection of the one TokenizerFile; `documents` and
    `rejected`: ReadCorpus's outputs, for the totals. With `progress`, each shard logs what it
    wrote."""

    def __init__(self, output_dir: str, num_shards: int, config: dict, tokenizer_file,
                 documents, rejected, progress: bool = False):
        super().__init__()
        self.output_dir, self.num_shards, self.config = output_dir, num_shards, config
        self.progress = progress
        self.tokenizer_file, self.documents, self.rejected = tokenizer_file, documents, rejected

    def expand(self, keyed_docs):
        shards = (keyed_docs
                  | "GroupByShard" >> beam.GroupByKey()
                  | "WriteShard" >> beam.ParDo(_WriteShard(Shared(), self.output_dir,
                                                           self.num_shards, self.config,
                                                           self.progress),
                                               beam.pvalue.AsSingleton(self.tokenizer_file))
                  | "AllShards" >> beam.combiners.ToList())
        rejected = (self.rejected
                    | "AllRejected" >> beam.combiners.ToList()
                    | "WriteRejected" >> beam.Map(write_rejected,
                                                  FileSystems.join(self.output_dir, REJECTED_FILE),
                                                  write_bytes))
        accepted = (self.documents | "CountRead" >> beam.combiners.Count.Globally())
        return shards | "WriteManifest" >> beam.Map(
            _write_manifest, self.output_dir, self.config,
            beam.pvalue.AsSingleton(self.tokenizer_file), beam.pvalue.AsSingleton(rejected),
            beam.pvalue.AsSingleton(accepted))
