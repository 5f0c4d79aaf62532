"""WriteManifest: the receipts of every task and shard, and the rejected records ->
rejected/rejected.jsonl, then the indexes over all the shards (`--format mds`: streaming's
shards/index.json), then manifest.json, last.

The manifest is built from the receipts, so a resumed run writes the same one as a run never
interrupted. It covers the tokenizer's files too when the run wrote them, and names the file a
loaded tokenizer was read from. Before writing, it
checks that every task of the plan reported and that the documents add up: every document
read is in a shard (each task's own, or with --shuffle-seed the shuffled ones, whose spills it
then removes); and that the run wrote a document, and rejected no more than --max-rejected
allows (beam_jobs.totals), else it fails, its rejected records written, its manifest not.
"""
from __future__ import annotations

import hashlib

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems

from tokfx.formats.rejected import write_rejected
from tokfx.formats.shards.manifest import MANIFEST_JSON, build_manifest, manifest_json_bytes
from tokfx.formats.shards.mds import INDEX_JSON, mds_index_json
from beam_jobs.files import open_raw, sha256, write_bytes
from beam_jobs.receipts import RECEIPTS_DIR, SHARDS_DIR, ShardReceipt, TaskReceipt
from beam_jobs.shuffle import SHUFFLE_DIR
from beam_jobs.totals import check_written, totals

REJECTED_DIR = "rejected"
REJECTED_FILE = f"{REJECTED_DIR}/rejected.jsonl"


def _tokenizer_files(output_dir: str, tokenizer_dir: str | None, tokenizer_file) -> dict[str, str]:
    """The sha256 of each file of OUTPUT/tokenizer_dir/ (none: the tokenizer is not ours)."""
    if tokenizer_dir is None:
        return {}
    matched = FileSystems.match([FileSystems.join(output_dir, tokenizer_dir, "*")])[0].metadata_list
    return {f"{tokenizer_dir}/{FileSystems.split(m.path)[1]}": sha256(m.path)
            for m in sorted(matched, key=lambda m: m.path)}


def _write_manifest(shards: list[ShardReceipt], tasks: list[TaskReceipt], tokenizer_file,
                    rejected: dict, output_dir: str, config: dict, max_rejected: str, task_count: int,
                    tokenizer_dir: str | None, tokenizer_source: dict | None = None,
                    shuffled: bool = False) -> str:
    if len(tasks) != task_count or len({t.task for t in tasks}) != task_count:
        raise RuntimeError(f"{len(tasks)} of the {task_count} read tasks reported: not writing the manifest")
    shards = sorted(shards, key=lambda s: (s.task, s.part))
    if shuffled:
        # The shards are the buckets of every task's spill (beam_jobs.shuffle): what they hold
        # must be what the tasks read.
        read, written = sum(t.documents for t in tasks), sum(s.documents for s in shards)
        if read != written:
            raise RuntimeError(f"the read tasks read {read:,} documents, the shuffled shards hold"
                               f" {written:,}: not writing the manifest")
    else:
        per_task = {}
        for shard in shards:
            per_task[shard.task] = per_task.get(shard.task, 0) + 1
        missing = [t.task for t in tasks if per_task.get(t.task, 0) != t.shards]
        if missing:
            raise RuntimeError(f"read tasks {missing[:5]} are missing shards: not writing the manifest")
    counts = totals(sum(t.documents for t in tasks), rejected["documents_rejected"], rejected["files_rejected"],
                    sum(s.empty_documents for s in shards), sum(s.bytes for s in shards),
                    sum(s.tokens for s in shards))
    check_written(counts, max_rejected, FileSystems.join(output_dir, REJECTED_FILE))
    # --max-rejected is recorded here, not in the run's settings: it decides no byte of the
    # shards, and a run refused by it is resumed, its shards kept, with a larger one.
    entries = [s.manifest_entry() for s in shards]
    indexes = _indexes(output_dir, entries)
    manifest = build_manifest({**config, "max_rejected": max_rejected}, tokenizer_file.hash,
                              tokenizer_file.alphabet, entries, counts,
                              _tokenizer_files(output_dir, tokenizer_dir, tokenizer_file), tokenizer_source,
                              {relative: hashlib.sha256(data).hexdigest() for relative, data in indexes.items()})
    _remove_strays(output_dir, shards, tasks)
    if shuffled and FileSystems.exists(FileSystems.join(output_dir, SHUFFLE_DIR)):
        FileSystems.delete([FileSystems.join(output_dir, SHUFFLE_DIR)])  # the spills, now in the shards
    for relative, data in indexes.items():
        write_bytes(FileSystems.join(output_dir, relative), data)
    path = FileSystems.join(output_dir, MANIFEST_JSON)
    write_bytes(path, manifest_json_bytes(manifest))
    return path


def _indexes(output_dir: str, entries: list[dict]) -> dict[str, bytes]:
    """The files that index all the shards of a format (relative path -> bytes): streaming's
    index.json when the shards have MDS files, built from their headers and the manifest's entries."""
    index = mds_index_json(entries, lambda relative: open_raw(FileSystems.join(output_dir, relative)))
    return {f"{SHARDS_DIR}/{INDEX_JSON}": index} if index is not None else {}


def _remove_strays(output_dir: str, shards: list[ShardReceipt], tasks: list[TaskReceipt]) -> None:
    """Remove what no receipt of this run names from shards/ and receipts/ (an earlier run's,
    over input files that have changed since), so the folders hold the manifest's shards only."""
    wanted = {FileSystems.join(output_dir, f) for s in shards for f in s.files}
    wanted |= {FileSystems.join(output_dir, RECEIPTS_DIR, f"{s.name}.json") for s in shards}
    wanted |= {FileSystems.join(output_dir, RECEIPTS_DIR, f"task-{t.task:05d}.json") for t in tasks}
    found = [m.path for folder in (SHARDS_DIR, RECEIPTS_DIR)
             for result in FileSystems.match([FileSystems.join(output_dir, folder, "*")])
             for m in result.metadata_list]
    strays = [path for path in found if path not in wanted]
    if strays:
        FileSystems.delete(strays)


class WriteManifest(beam.PTransform):
    """{"shards": ShardReceipts, "tasks": TaskReceipts, "rejected": Rejections} -> the manifest's
    path, once written. `tokenizer_file`: the PCollection of the one TokenizerFile;
    `tokenizer_dir`: the output's folder holding it, when the run wrote it there;
    `tokenizer_source`: the file it was loaded from (Tokenizer.source), when it was; `shuffled`:
    the shards are --shuffle-seed's (beam_jobs.shuffle), not each task's own."""

    def __init__(self, output_dir: str, config: dict, max_rejected: str, tokenizer_file, task_count: int,
                 tokenizer_dir: str | None = None, tokenizer_source: dict | None = None,
                 shuffled: bool = False):
        super().__init__()
        self.shuffled = shuffled
        self.output_dir, self.config, self.tokenizer_file = output_dir, config, tokenizer_file
        self.max_rejected = max_rejected
        self.task_count, self.tokenizer_dir = task_count, tokenizer_dir
        self.tokenizer_source = tokenizer_source

    def expand(self, outputs):
        rejected = (outputs["rejected"]
                    | "AllRejected" >> beam.combiners.ToList()
                    | "WriteRejected" >> beam.Map(write_rejected,
                                                  FileSystems.join(self.output_dir, REJECTED_FILE),
                                                  write_bytes))
        tasks = outputs["tasks"] | "AllTasks" >> beam.combiners.ToList()
        return (outputs["shards"]
                | "AllShards" >> beam.combiners.ToList()
                | "WriteManifest" >> beam.Map(
                    _write_manifest, beam.pvalue.AsSingleton(tasks),
                    beam.pvalue.AsSingleton(self.tokenizer_file), beam.pvalue.AsSingleton(rejected),
                    self.output_dir, self.config, self.max_rejected, self.task_count, self.tokenizer_dir,
                    self.tokenizer_source, self.shuffled))
