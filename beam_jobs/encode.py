"""EncodeTasks: read tasks -> shards. One DoFn call reads a task, encodes its documents and
writes them straight into its shard files, so no document waits in memory or crosses the
runner, and Beam's cost is paid per task, not per document.

A shard is full once its `.bin` holds `shard_size` bytes of token ids; the task goes on into its
next shard (shard names: beam_jobs.receipts.shard_name). Files are written under temporary
names and renamed once complete, then receipted (beam_jobs.receipts): a re-run keeps what was
done. The tokenizer arrives as a side input (a TokenizerFile) and is built once per worker
process (`Shared`, keyed by its hash).
"""
from __future__ import annotations

import json
import logging
import time
from array import array
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from tokfx.formats.documents import Document, utf8_length
from tokfx.formats.readers import ReadOptions
from tokfx.formats.shards.formats import DEFAULT_FORMATS
from tokfx.formats.shards.writer import ShardWriter
from beam_jobs.files import create
from beam_jobs.plan import ReadTask
from beam_jobs.progress import ENCODING, EVERY, PassReporter
from beam_jobs.read import REJECTED, Policy, TaskReader
from beam_jobs.receipts import SHARDS_DIR, Receipts, ShardReceipt, TaskReceipt, shard_name, task_key

TASKS = "tasks"
log = logging.getLogger(__name__)


class EncodeSettings(NamedTuple):
    """What the encoding pass needs besides the tokenizer."""
    output_dir: str
    read_options: ReadOptions
    on_error: str
    shard_size: int  # bytes of token ids in a shard's .bin before the next shard starts
    eos_token: str | None  # appended after every document (a special or control token's name)
    split_specials: bool  # special-token text inside a document becomes its id (else plain text)
    settings_digest: str  # a hash of everything that determines the output (receipt keys)
    config_json: str  # the run's config, for the Parquet footers
    task_count: int  # the plan's, for progress lines
    progress: bool
    bos_token: str | None = None  # put before every document (a special or control token's name)
    progress_dir: str | None = None  # where the run's progress is reported (beam_jobs.progress)
    progress_every: float = EVERY
    formats: tuple[str, ...] = DEFAULT_FORMATS  # the shard formats (tokfx.formats.shards.formats)


def reserved_ids(tokenizer, *names: str | None) -> array:
    """The ids of the named special or control tokens (a sentencepiece model's <s> and </s> are
    control tokens, which token_to_id does not look up by name); None names none."""
    reserved = {**tokenizer.control_tokens, **tokenizer.special_tokens}
    return array("i", [reserved[name] for name in names if name is not None])


class _Task:
    """The running totals of one task (what its receipt and progress lines say)."""

    def __init__(self):
        self.items = self.documents = self.rejected_docs = self.rejected_files = 0
        self.tokens = self.text_bytes = 0
        self.usec = {"read": 0.0, "encode": 0.0, "write": 0.0}


class _EncodeTask(beam.DoFn):
    def __init__(self, shared: Shared, settings: EncodeSettings):
        self.shared, self.settings = shared, settings
        self.read_docs = Metrics.counter("tokfx", "documents_read")
        self.read_bytes = Metrics.counter("tokfx", "bytes_read")
        self.written = Metrics.counter("tokfx", "documents_written")
        self.kept = Metrics.counter("tokfx", "shards_kept")
        self.tokens = Metrics.counter("tokfx", "tokens")
        self.usec = {stage: Metrics.counter("tokfx", f"usec_{stage}") for stage in ("read", "encode", "write")}

    def setup(self):
        self.policy = Policy(self.settings.on_error)
        self.receipts = Receipts(self.settings.output_dir)
        s = self.settings
        self.reporter = PassReporter(s.progress_dir, ENCODING, s.progress_every) if s.progress_dir else None

    def finish_bundle(self):
        if self.reporter:
            self.reporter.write()

    def process(self, task: ReadTask, tokenizer_file):
        tokenizer = self.shared.acquire(tokenizer_file.load, tag=tokenizer_file.hash)
        key = task_key(task, self.settings.settings_digest, tokenizer_file.hash)
        kept = self.receipts.kept_shards(task.index, key)
        self.kept.inc(len(kept))
        done = self.receipts.task_done(task.index, key)
        if done is not None and done.shards == len(kept):
            self._log("task %s of %s (%s): kept from an earlier run, %s shards", task, len(kept))
            if self.reporter:
                self.reporter.start(task.index, None)
                self.reporter.end(kept=True)
            if done.documents_rejected or done.files_rejected:
                # The rejected records are not kept: read them again (nothing is encoded).
                yield from (self.policy.reject(item) for item in TaskReader(task, self.settings.read_options)
                            if not isinstance(item, Document))
            yield from kept
            yield beam.pvalue.TaggedOutput(TASKS, done)
            return
        self.receipts.forget(task.index, len(kept))
        if kept:
            self._log("task %s of %s (%s): kept %s shards from an earlier run, going on", task, len(kept))
        yield from kept
        yield from self._encode(task, tokenizer, tokenizer_file, key, kept)

    def _log(self, message: str, task: ReadTask, *args) -> None:
        if self.settings.progress:
            log.info(message, f"{task.index + 1:,}", f"{self.settings.task_count:,}", task.describe(), *args)

    def _encode(self, task, tokenizer, tokenizer_file, key, kept):
        settings = self.settings
        ordinary = not settings.split_specials
        bos, eos = reserved_ids(tokenizer, settings.bos_token), reserved_ids(tokenizer, settings.eos_token)
        metadata = {"tokfx.tokenizer_hash": tokenizer_file.hash,
                    "tokfx.alphabet": json.dumps(tokenizer.alphabet.to_dict()),
                    "tokfx.config": settings.config_json}
        skip = kept[-1].items_end if kept else 0  # items already in the kept shards
        totals, part, writer = _Task(), len(kept), None
        reader = TaskReader(task, settings.read_options)
        items, started = iter(reader), time.perf_counter()
        if self.reporter:
            self.reporter.start(task.index, reader)
        try:
            while True:
                clock = time.perf_counter()
                item = next(items, None)
                now = time.perf_counter()
                totals.usec["read"] += now - clock
                if item is None:
                    break
                totals.items += 1
                if not isinstance(item, Document):
                    if item.whole_file:
                        totals.rejected_files += 1
                    else:
                        totals.rejected_docs += 1
                    yield self.policy.reject(item)
                    continue
                totals.documents += 1
                if totals.items <= skip:
                    continue
                if self.reporter:
                    if totals.items == skip + 1 and skip:
                        self.reporter.keep(reader.done() or 0.0)  # what was read again only to skip it
                    self.reporter.document()
                ids = tokenizer.encode_to_array(item.text, ordinary)
                if bos:  # a copy, paid only by a tokenizer framed with a BOS
                    ids = bos + ids
                ids += eos
                clock = time.perf_counter()
                totals.usec["encode"] += clock - now
                if writer is None:
                    writer = self._open(task.index, part, tokenizer.vocab_size, metadata)
                text_bytes = utf8_length(item.text)
                writer.add(item.id, ids, item.source, text_bytes, item.fields)
                totals.tokens += len(ids)
                totals.text_bytes += text_bytes
                if writer.token_bytes >= settings.shard_size:
                    yield self._close(writer, task, part, key, totals.items)
                    writer, part = None, part + 1
                totals.usec["write"] += time.perf_counter() - clock
            if writer is not None:
                yield self._close(writer, task, part, key, totals.items)
                writer, part = None, part + 1
        finally:
            if writer is not None:
                writer.abort()
        if self.reporter:
            self.reporter.end()
        receipt = TaskReceipt(task.index, key, part, totals.documents, totals.rejected_docs,
                              totals.rejected_files)
        self.receipts.write(receipt)
        self.read_docs.inc(totals.documents)
        self.read_bytes.inc(totals.text_bytes)
        self.tokens.inc(totals.tokens)
        for stage, seconds in totals.usec.items():
            self.usec[stage].inc(int(seconds * 1e6))
        seconds = time.perf_counter() - started
        self._log("task %s of %s (%s) done: %s documents, %s tokens, %s rejected, %.1f s, %.1f MB/s",
                  task, f"{totals.documents:,}", f"{totals.tokens:,}",
                  f"{totals.rejected_docs + totals.rejected_files:,}", seconds,
                  totals.text_bytes / 1e6 / max(seconds, 1e-9))
        yield beam.pvalue.TaggedOutput(TASKS, receipt)

    def _temporary(self, name: str) -> str:
        return FileSystems.join(self.settings.output_dir, SHARDS_DIR, f".{name}.tmp")

    def _open(self, task: int, part: int, vocab_size: int, metadata: dict) -> ShardWriter:
        return ShardWriter(lambda name: create(self._temporary(name)), shard_name(task, part),
                           vocab_size, metadata, kept=self.settings.read_options.keep,
                           formats=self.settings.formats)

    def _close(self, writer: ShardWriter, task: ReadTask, part: int, key: str,
               items_end: int) -> ShardReceipt:
        info = writer.close()
        names = sorted(info.files)
        FileSystems.rename([self._temporary(name) for name in names],
                           [FileSystems.join(self.settings.output_dir, SHARDS_DIR, name) for name in names])
        receipt = ShardReceipt(writer.name, task.index, part, key, items_end,
                               {f"{SHARDS_DIR}/{n}": info.files[n] for n in names},
                               {f"{SHARDS_DIR}/{n}": info.sizes[n] for n in names},
                               info.documents, info.empty_documents, info.tokens, info.bytes)
        self.receipts.write(receipt)
        self.written.inc(info.documents)
        self._log("task %s of %s (%s): wrote %s, %s documents, %s tokens", task, writer.name,
                  f"{info.documents:,}", f"{info.tokens:,}")
        return receipt


class EncodeTasks(beam.PTransform):
    """ReadTasks -> ShardReceipts (main output), TaskReceipts (`tasks`) and Rejections
    (`rejected`). `tokenizer_file`: the PCollection of the one TokenizerFile."""

    def __init__(self, tokenizer_file, settings: EncodeSettings):
        super().__init__()
        self.tokenizer_file, self.settings = tokenizer_file, settings

    def expand(self, tasks):
        return (tasks
                | "Spread" >> beam.Reshuffle()
                | "EncodeTask" >> beam.ParDo(_EncodeTask(Shared(), self.settings),
                                             beam.pvalue.AsSingleton(self.tokenizer_file))
                .with_outputs(TASKS, REJECTED, main="shards"))
