"""EncodeTasks: read tasks -> shards. One DoFn call reads a task, encodes its documents and
writes them straight into its shard files, so no document waits in memory or crosses the
runner, and Beam's cost is paid per task, not per document.

A shard is full once its `.bin` holds `shard_size` bytes of token ids; the task goes on into its
next shard (shard names: beam_jobs.receipts.shard_name). Files are written under temporary
names and renamed once complete, then receipted (beam_jobs.receipts): a re-run keeps what was
done. The tokenizer arrives as a side input (a TokenizerFile) and is built once per worker
process (`Shared`, keyed by its hash).

With --shuffle-seed, a task writes its documents into its spill instead (beam_jobs.shuffle.Spill,
all or nothing: kept whole by a re-run, or written again), and the main output is its
SpillReceipt, which beam_jobs.shuffle.WriteShuffled cuts into the shuffled shards.
"""
from __future__ import annotations

import logging
import time
from array import array
from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from tokfx.formats.documents import Document, utf8_length
from tokfx.formats.readers import ReadOptions
from tokfx.formats.shards.formats import DEFAULT_FORMATS
from tokfx.formats.shards.writer import ShardWriter
from beam_jobs.memory import release_free_memory
from beam_jobs.plan import ReadTask
from beam_jobs.progress import ENCODING, EVERY, PassReporter
from beam_jobs.read import REJECTED, Policy, TaskReader
from beam_jobs.receipts import Receipts, ShardReceipt, SpillReceipt, TaskReceipt, shard_name, spill_name, task_key
from beam_jobs.shard_files import close_shard, open_shard, tokenizer_metadata
from beam_jobs.shuffle import Spill

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
    shuffle_seed: int | None = None  # --shuffle-seed: tasks write spills (beam_jobs.shuffle), not shards


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
        shuffled = self.settings.shuffle_seed is not None
        if shuffled:
            # A task's spill is all or nothing: kept whole, or written again.
            spill = self.receipts.kept(SpillReceipt, spill_name(task.index), key)
            kept = [spill] if spill is not None else []
        else:
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
        if shuffled:
            kept = []  # a spill whose task has no receipt (a crash between the two) is written again
        self.receipts.forget(task.index, len(kept))
        if kept:
            self._log("task %s of %s (%s): kept %s shards from an earlier run, going on", task, len(kept))
        yield from kept
        if shuffled:
            sink = Spill(self.settings.output_dir, task.index, key, self.settings.shuffle_seed,
                         tokenizer.vocab_size)
        else:
            metadata = tokenizer_metadata(tokenizer, tokenizer_file, self.settings.config_json)
            sink = _Shards(self.settings, task.index, key, tokenizer.vocab_size, metadata, len(kept))
        yield from self._encode(task, tokenizer, key, kept, sink)

    def _log(self, message: str, task: ReadTask, *args) -> None:
        if self.settings.progress:
            log.info(message, f"{task.index + 1:,}", f"{self.settings.task_count:,}", task.describe(), *args)

    def _encode(self, task, tokenizer, key, kept, sink):
        """Read the task, encode its documents after the items of the `kept` shards into
        `sink` (its shards, or its spill), then receipt the task."""
        settings = self.settings
        ordinary = not settings.split_specials
        bos, eos = reserved_ids(tokenizer, settings.bos_token), reserved_ids(tokenizer, settings.eos_token)
        skip = kept[-1].items_end if kept else 0  # items already in the kept shards
        totals = _Task()
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
                text_bytes = utf8_length(item.text)
                written = sink.add(item, ids, text_bytes, totals.items)
                if written is not None:
                    yield self._receipted(written, task)
                totals.tokens += len(ids)
                totals.text_bytes += text_bytes
                totals.usec["write"] += time.perf_counter() - clock
            written = sink.close(totals.items)
            if written is not None:
                yield self._receipted(written, task)
        finally:
            sink.abort()
        if self.reporter:
            self.reporter.end()
        receipt = TaskReceipt(task.index, key, sink.parts, totals.documents, totals.rejected_docs,
                              totals.rejected_files)
        self.receipts.write(receipt)
        self.read_docs.inc(totals.documents)
        self.read_bytes.inc(totals.text_bytes)
        self.tokens.inc(totals.tokens)
        for stage, seconds in totals.usec.items():
            self.usec[stage].inc(int(seconds * 1e6))
        release_free_memory()  # what the task's reading, row groups and Arrow freed
        seconds = time.perf_counter() - started
        self._log("task %s of %s (%s) done: %s documents, %s tokens, %s rejected, %.1f s, %.1f MB/s",
                  task, f"{totals.documents:,}", f"{totals.tokens:,}",
                  f"{totals.rejected_docs + totals.rejected_files:,}", seconds,
                  totals.text_bytes / 1e6 / max(seconds, 1e-9))
        yield beam.pvalue.TaggedOutput(TASKS, receipt)

    def _receipted(self, written: ShardReceipt | SpillReceipt, task: ReadTask) -> ShardReceipt | SpillReceipt:
        self.receipts.write(written)
        if isinstance(written, ShardReceipt):
            self.written.inc(written.documents)
        self._log("task %s of %s (%s): wrote %s, %s documents, %s tokens", task, written.name,
                  f"{written.documents:,}", f"{written.tokens:,}")
        return written


class _Shards:
    """Where a task's documents go without --shuffle-seed: its own shards, in input order, the
    next one started once one holds `shard_size` bytes of ids. `parts`: the shards so far."""

    def __init__(self, settings: EncodeSettings, task: int, key: str, vocab_size: int, metadata: dict,
                 parts: int):
        self.settings, self.task, self.key = settings, task, key
        self.vocab_size, self.metadata, self.parts = vocab_size, metadata, parts
        self.writer: ShardWriter | None = None

    def add(self, doc: Document, ids, text_bytes: int, items: int) -> ShardReceipt | None:
        """Add a document (the task's `items`-th item); a shard's receipt when it filled it."""
        if self.writer is None:
            s = self.settings
            self.writer = open_shard(s.output_dir, shard_name(self.task, self.parts), self.vocab_size,
                                     self.metadata, s.read_options.keep, s.formats)
        self.writer.add(doc.id, ids, doc.source, text_bytes, doc.fields)
        if self.writer.token_bytes >= self.settings.shard_size:
            return self.close(items)
        return None

    def close(self, items: int) -> ShardReceipt | None:
        if self.writer is None:
            return None
        receipt = close_shard(self.writer, self.settings.output_dir, self.task, self.parts, self.key, items)
        self.writer, self.parts = None, self.parts + 1
        return receipt

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()


class EncodeTasks(beam.PTransform):
    """ReadTasks -> ShardReceipts (main output; SpillReceipts with --shuffle-seed), TaskReceipts
    (`tasks`) and Rejections (`rejected`). `tokenizer_file`: the PCollection of the one TokenizerFile."""

    def __init__(self, tokenizer_file, settings: EncodeSettings):
        super().__init__()
        self.tokenizer_file, self.settings = tokenizer_file, settings

    def expand(self, tasks):
        return (tasks
                | "Spread" >> beam.Reshuffle()
                | "EncodeTask" >> beam.ParDo(_EncodeTask(Shared(), self.settings),
                                             beam.pvalue.AsSingleton(self.tokenizer_file))
                .with_outputs(TASKS, REJECTED, main="shards"))
