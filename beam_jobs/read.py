"""Reading read tasks (beam_jobs.plan) on the workers: `TaskReader` reads one task's documents
and rejections with its progress (the counting and encoding passes read through it inside their
own DoFn); `ReadTasks`, ReadTasks -> documents and rejected records, is for the steps that need
documents as elements (the held-out documents of --eval-fraction).

Bad input goes through the one error policy (tokfx.formats.readers.policy): fail raises, skip
counts the Rejection and sends it to the `rejected` output.
"""
from __future__ import annotations

import time

import apache_beam as beam
from apache_beam.metrics import Metrics

from tokfx.formats.documents import Document, Rejection
from tokfx.formats.readers import ReadOptions, reader_for
from tokfx.formats.readers.policy import ErrorPolicy
from beam_jobs.files import open_raw
from beam_jobs.plan import ReadTask

REJECTED = "rejected"


class Policy:
    """The error policy in a Beam step: a skipped rejection is counted (unless `counted` is
    False: a pass that reads what another pass records) and tagged `rejected`."""

    def __init__(self, on_error: str, counted: bool = True):
        self.policy, self.counted = ErrorPolicy(on_error), counted
        self.rejected_docs = Metrics.counter("tokfx", "documents_rejected")
        self.rejected_files = Metrics.counter("tokfx", "files_rejected")

    def reject(self, rejection: Rejection):
        self.policy.reject(rejection)  # raises under fail
        if self.counted:
            (self.rejected_files if rejection.whole_file else self.rejected_docs).inc()
        return beam.pvalue.TaggedOutput(REJECTED, rejection)


class TaskReader:
    """The items (Documents and Rejections) of one read task, in file order, and how far into
    the task reading is (`done()`, a fraction of its stored bytes). With `utf8`, documents
    that need only their text may come as Texts (their UTF-8, many at once), where the format
    reads them so (Reader.read_texts)."""

    def __init__(self, task: ReadTask, options: ReadOptions, utf8: bool = False):
        self.task, self.options = task, options
        self.reader = reader_for(task.path)
        self.read = (self.reader.read_texts if utf8 else None) or self.reader.read
        # A part is in bytes for text only (row groups for Parquet: progress then unknown).
        self.known = task.part is None or self.reader.name == "text"
        self.start, self.end = task.part if task.part and self.known and task.part != (0, 0) else (0, task.size)
        self._raw = None

    def __iter__(self):
        with open_raw(self.task.path) as self._raw:
            yield from self.read(self._raw, self.task.path, self.options, self.task.part)

    def done(self) -> float | None:
        """Share of the task read so far (by the position in the stored file: a .txt part or a
        Parquet row group is read at once, so it moves in steps there); None where unknown."""
        if not self.known:
            return None
        if self._raw is None or self._raw.closed or self.end <= self.start:
            return 1.0 if self._raw is not None else 0.0
        return min(1.0, max(0.0, (self._raw.tell() - self.start) / (self.end - self.start)))


class _Read(beam.DoFn):
    """A ReadTask -> Documents (main output) and Rejections."""

    def __init__(self, on_error: str, options: ReadOptions, counted: bool):
        self.on_error, self.options, self.counted = on_error, options, counted
        self.usec = Metrics.counter("tokfx", "usec_read")

    def setup(self):
        self.policy = Policy(self.on_error, self.counted)

    def process(self, task: ReadTask):
        items, busy = iter(TaskReader(task, self.options)), 0.0
        while True:
            # Time only the reading: downstream steps run inside our yields.
            start = time.perf_counter()
            item = next(items, None)
            busy += time.perf_counter() - start
            if item is None:
                break
            yield item if isinstance(item, Document) else self.policy.reject(item)
        self.usec.inc(int(busy * 1e6))


class ReadTasks(beam.PTransform):
    """ReadTasks -> {"documents": Documents, "rejected": Rejections} (tokfx.formats.documents)."""

    def __init__(self, options: ReadOptions, on_error: str = "fail", counted: bool = True):
        """`counted`: whether the rejections count in the run's metrics (not when another pass
        reads and records the same ones)."""
        super().__init__()
        ErrorPolicy(on_error)  # refuse an unknown policy here, not in every worker
        self.read = _Read(on_error, options, counted)

    def expand(self, tasks):
        # Reshuffle spreads the tasks over workers (else they stay fused in one bundle).
        read = (tasks
                | "Spread" >> beam.Reshuffle()
                | "Read" >> beam.ParDo(self.read).with_outputs(
                    REJECTED, main="documents"))
        return {"documents": read.documents, "rejected": read[REJECTED]}
