"""ReadCorpus: file patterns in; documents and rejected records out.

Files are matched through Beam's FileSystems and read by their format's reader
(tokfx.formats.readers, chosen by suffix). A file its reader can cut into byte ranges (a .txt,
at its special tokens) is one read task per range of about `txt_range_bytes`, so several workers
read it; any other file is one read task (a compressed stream cannot be split). Bad input goes
through the one error policy (tokfx.formats.readers.policy): fail raises, skip counts the
Rejection and sends it to the `rejected` output.
"""
from __future__ import annotations

import logging
import time
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from tokfx.formats.documents import Document, Rejection, utf8_length
from tokfx.formats.readers import ReadOptions, reader_for
from tokfx.formats.readers.reader import ByteRange
from tokfx.formats.readers.policy import ErrorPolicy
from beam_jobs.files import open_raw

REJECTED = "rejected"
log = logging.getLogger(__name__)


class ReadTask(NamedTuple):
    """What one worker reads: a file, and the byte range of it (None: all of it)."""
    path: str
    byte_range: ByteRange | None


class _Policy:
    """The error policy in a Beam step: a skipped rejection is counted and tagged `rejected`."""

    def __init__(self, on_error: str):
        self.policy = ErrorPolicy(on_error)
        self.rejected_docs = Metrics.counter("tokfx", "documents_rejected")
        self.rejected_files = Metrics.counter("tokfx", "files_rejected")

    def reject(self, rejection: Rejection):
        self.policy.reject(rejection)  # raises under fail
        (self.rejected_files if rejection.whole_file else self.rejected_docs).inc()
        return beam.pvalue.TaggedOutput(REJECTED, rejection)


class _PlanReads(beam.DoFn):
    """A file pattern -> ReadTasks."""

    def __init__(self, on_error: str, special_tokens: tuple[str, ...], txt_range_bytes: int):
        self.on_error, self.txt_range_bytes = on_error, txt_range_bytes
        self.options = ReadOptions(separators=special_tokens)

    def setup(self):
        self.policy = _Policy(self.on_error)

    def process(self, pattern: str):
        matched = sorted(m.path for result in FileSystems.match([pattern]) for m in result.metadata_list)
        if not matched:
            yield self.policy.reject(Rejection(pattern, None, "the pattern matches no file",
                                               whole_file=True))
        for path in matched:
            reader = reader_for(path)
            if reader.ranges is None:
                yield ReadTask(path, None)
                continue
            with open_raw(path) as f:
                parts = max(1, -(-f.seek(0, 2) // self.txt_range_bytes))
                ranges = reader.ranges(f, parts, self.options)
            yield from (ReadTask(path, byte_range) for byte_range in ranges)


class _Read(beam.DoFn):
    """A ReadTask -> Documents (main output) and Rejections."""

    def __init__(self, on_error: str, options: ReadOptions, progress: bool):
        self.on_error, self.options, self.progress = on_error, options, progress
        self.documents = Metrics.counter("tokfx", "documents_read")
        self.bytes = Metrics.counter("tokfx", "bytes_read")
        self.usec = Metrics.counter("tokfx", "usec_read")

    def setup(self):
        self.policy = _Policy(self.on_error)

    def _items(self, task: ReadTask):
        with open_raw(task.path) as f:
            yield from reader_for(task.path).read(f, task.path, self.options, task.byte_range)

    def process(self, task: ReadTask):
        items, busy = self._items(task), 0.0
        documents = size = rejected = 0
        while True:
            # Time only the reading: downstream steps run inside our yields.
            start = time.perf_counter()
            item = next(items, None)
            busy += time.perf_counter() - start
            if item is None:
                break
            if isinstance(item, Document):
                documents += 1
                size += utf8_length(item.text)
                yield item
            else:
                rejected += 1
                yield self.policy.reject(item)
        self.documents.inc(documents)
        self.bytes.inc(size)
        self.usec.inc(int(busy * 1e6))
        where = f" bytes {task.byte_range[0]:,}-{task.byte_range[1]:,}" if task.byte_range else ""
        if self.progress:
            log.info("read %s%s: %s documents, %s bytes, %s rejected", task.path, where,
                     f"{documents:,}", f"{size:,}", f"{rejected:,}")


class ReadCorpus(beam.PTransform):
    """File patterns -> {"documents": Documents, "rejected": Rejections} (tokfx.formats.documents).

    With `progress`, each read task logs what it read."""

    def __init__(self, patterns, *, text_field="text", id_field=None, special_tokens=(),
                 on_error="fail", txt_range_bytes=32 << 20, progress=False):
        super().__init__()
        ErrorPolicy(on_error)  # refuse an unknown policy here, not in every worker
        self.patterns = list(patterns)
        options = ReadOptions(text_field, id_field, tuple(special_tokens))
        self.read_args = (on_error, options, progress)
        self.plan_args = (on_error, tuple(special_tokens), txt_range_bytes)

    def expand(self, pbegin):
        planned = (pbegin
                   | "Patterns" >> beam.Create(self.patterns)
                   | "Plan" >> beam.ParDo(_PlanReads(*self.plan_args)).with_outputs(
                       REJECTED, main="tasks"))
        # Reshuffle spreads the tasks over workers (else they stay fused in one bundle).
        read = (planned.tasks
                | "Spread" >> beam.Reshuffle()
                | "Read" >> beam.ParDo(_Read(*self.read_args)).with_outputs(
                    REJECTED, main="documents"))
        rejected = ((planned[REJECTED], read[REJECTED])
                    | "AllRejected" >> beam.Flatten())
        return {"documents": read.documents, "rejected": rejected}
