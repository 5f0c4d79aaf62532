"""Receipts: what makes a run resumable.

A shard's files are written under temporary names and renamed once complete; then its receipt
(`receipts/NAME.json`) records the files' sha256 and sizes, what the shard holds, how many of
its task's items (documents and rejections) had been read when it closed, and the task's key.
A task's own receipt (`receipts/task-NNNNN.json`) is written after its last shard. The key is a
hash of the read task (file, size, part), the run's settings and the tokenizer: a receipt
counts only for the same input read the same way into the same ids.

On a re-run, a task keeps its shards from the first on, as long as each one's receipt has the
right key and its files are there with the recorded sha256; it goes on from the first shard that
is not, after the items the kept ones hold. So an interrupted run, re-run, ends with the same
bytes as a run never interrupted.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import NamedTuple

from apache_beam.io.filesystems import FileSystems

from tokfx.formats.shards.manifest import SHARDS_DIR
from beam_jobs.files import read_json, sha256, write_json
from beam_jobs.plan import ReadTask

RECEIPTS_DIR = "receipts"


def shard_name(task: int, part: int) -> str:
    """The `part`-th shard of the `task`-th read task: named from the read plan, so the same
    whatever the runner and the number of workers."""
    return f"shard-{task:05d}-{part:04d}"


def task_key(task: ReadTask, settings_digest: str, tokenizer_hash: str) -> str:
    data = json.dumps([task.path, task.size, task.part, settings_digest, tokenizer_hash])
    return hashlib.sha256(data.encode()).hexdigest()


class ShardReceipt(NamedTuple):
    """A finished shard. `files`: path relative to the output directory -> sha256."""
    name: str
    task: int
    part: int
    key: str
    items_end: int  # items of the task read when the shard closed
    files: dict[str, str]
    sizes: dict[str, int]
    documents: int
    empty_documents: int
    tokens: int
    bytes: int  # the documents' text, in UTF-8 bytes

    def manifest_entry(self) -> dict:
        return {"name": self.name, "files": self.files, "sizes": self.sizes, "documents": self.documents,
                "empty_documents": self.empty_documents, "tokens": self.tokens,
                "bytes": self.bytes}


class SpillReceipt(NamedTuple):
    """A read task's documents written in shuffle order (--shuffle-seed: beam_jobs.shuffle),
    waiting for the stage that cuts the shuffled shards. `files`, `sizes`: as a shard's."""
    task: int
    key: str
    files: dict[str, str]
    sizes: dict[str, int]
    documents: int
    tokens: int
    token_bytes: int  # the tokens at the shards' dtype (what --shard-size counts)

    @property
    def name(self) -> str:
        return spill_name(self.task)


def spill_name(task: int) -> str:
    return f"spill-{task:05d}"


class TaskReceipt(NamedTuple):
    """A read task fully written: its documents (all in its shards) and its rejections."""
    task: int
    key: str
    shards: int
    documents: int
    documents_rejected: int
    files_rejected: int


class Receipts:
    """The receipts of one output directory."""

    def __init__(self, output_dir: str):
        self.output_dir = output_dir

    def path(self, relative: str) -> str:
        return FileSystems.join(self.output_dir, relative)

    def _receipt(self, name: str) -> dict | None:
        return read_json(self.path(f"{RECEIPTS_DIR}/{name}.json"))  # a torn receipt is none

    def _files_intact(self, receipt: ShardReceipt | SpillReceipt) -> bool:
        for relative, sha in receipt.files.items():
            path = self.path(relative)
            matched = FileSystems.match([path])[0].metadata_list
            if not matched or matched[0].size_in_bytes != receipt.sizes[relative] or sha256(path) != sha:
                return False
        return True

    def kept(self, kind: type[ShardReceipt] | type[SpillReceipt], name: str, key: str):
        """The receipt `name` of `kind` if it is for this key and its files are intact; else None."""
        data = self._receipt(name)
        try:
            receipt = kind(**data) if data else None
        except TypeError:
            return None
        if receipt is None or receipt.key != key or not self._files_intact(receipt):
            return None
        return receipt

    def kept_shards(self, task: int, key: str) -> list[ShardReceipt]:
        """The task's shards from the first on that are complete for this key."""
        kept = []
        while receipt := self.kept(ShardReceipt, shard_name(task, len(kept)), key):
            kept.append(receipt)
        return kept

    def task_done(self, task: int, key: str) -> TaskReceipt | None:
        data = self._receipt(f"task-{task:05d}")
        try:
            receipt = TaskReceipt(**data) if data else None
        except TypeError:
            return None
        return receipt if receipt is not None and receipt.key == key else None

    def write(self, receipt: ShardReceipt | SpillReceipt | TaskReceipt) -> None:
        name = f"task-{receipt.task:05d}" if isinstance(receipt, TaskReceipt) else receipt.name
        write_json(self.path(f"{RECEIPTS_DIR}/{name}.json"), receipt._asdict())

    def forget(self, task: int, first_part: int) -> None:
        """Remove the task's receipt and its spill's (--shuffle-seed), and its shards' receipts
        and files (finished or temporary) from part `first_part` on: an earlier run's, which
        this run rewrites. Receipts go first, so that no receipt outlives its files."""
        part_of = re.compile(rf"^\.?shard-{task:05d}-(\d+)\.")
        found = [m.path for folder in (RECEIPTS_DIR, SHARDS_DIR)
                 for result in FileSystems.match([self.path(f"{folder}/*shard-{task:05d}-*")])
                 for m in result.metadata_list]
        stale = [path for path in found
                 if int(part_of.match(FileSystems.split(path)[1]).group(1)) >= first_part]
        own = [self.path(f"{RECEIPTS_DIR}/{name}.json") for name in (f"task-{task:05d}", spill_name(task))]
        for paths in ([path for path in own if FileSystems.exists(path)],
                      [p for p in stale if p.endswith(".json")],
                      [p for p in stale if not p.endswith(".json")]):
            if paths:
                FileSystems.delete(paths)
