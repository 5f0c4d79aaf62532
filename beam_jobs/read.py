"""ReadCorpus: file patterns in; documents and rejected records out.

Files are matched through Beam's FileSystems. A .jsonl[.gz|.zst] file is one read task (a
compressed stream cannot be split); a .txt file is cut into byte ranges at special tokens with
`tokfx.pre_tokenizers.boundaries.find_chunk_boundaries`, one read task each, so several workers read it.
"""
from __future__ import annotations

import logging
import time

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from tokfx.formats.documents import CorpusError, Document, Rejection, utf8_length
from tokfx.formats.readers.jsonl import is_jsonl, read_jsonl
from tokfx.formats.readers.text import split_text_documents
from tokfx.pre_tokenizers.boundaries import find_chunk_boundaries
from beam_jobs.files import open_raw

REJECTED = "rejected"
log = logging.getLogger(__name__)


class _Policy:
    """Bad input: raise (fail) or pass the rejection on to the `rejected` output (skip)."""

    def __init__(self, on_error: str):
        self.on_error = on_error
        self.rejected_docs = Metrics.counter("tokfx", "documents_rejected")
        self.rejected_files = Metrics.counter("tokfx", "files_rejected")

    def reject(self, rejection: Rejection):
        if self.on_error == "fail":
            raise CorpusError(rejection.message)
        (self.rejected_files if rejection.line is None else self.rejected_docs).inc()
        return beam.pvalue.TaggedOutput(REJECTED, rejection)


class _PlanReads(beam.DoFn):
    """A file pattern -> read tasks (path, byte range or None for a whole file)."""

    def __init__(self, on_error: str, special_tokens: tuple[str, ...], txt_range_bytes: int):
        self.on_error, self.special_tokens = on_error, special_tokens
        self.txt_range_bytes = txt_range_bytes

    def setup(self):
        self.policy = _Policy(self.on_error)

    def process(self, pattern: str):
        matched = sorted(m.path for result in FileSystems.match([pattern]) for m in result.metadata_list)
        if not matched:
            yield self.policy.reject(Rejection(pattern, None, "the pattern matches no file"))
        for path in matched:
            if is_jsonl(path):
                yield path, None
                continue
            with open_raw(path) as f:
                size = f.seek(0, 2)
                if size == 0:
                    yield self.policy.reject(Rejection(path, None, "empty file"))
                    continue
                ranges = -(-size // self.txt_range_bytes) if self.special_tokens else 1
                bounds = find_chunk_boundaries(f, ranges, self.special_tokens)
            yield from ((path, (start, end)) for start, end in zip(bounds, bounds[1:]))


class _ReadTask(beam.DoFn):
    """A read task -> Documents (main output) and Rejections."""

    def __init__(self, on_error: str, text_field: str, id_field: str | None,
                 special_tokens: tuple[str, ...], progress: bool):
        self.on_error, self.text_field, self.id_field = on_error, text_field, id_field
        self.special_tokens, self.progress = special_tokens, progress
        self.documents = Metrics.counter("tokfx", "documents_read")
        self.bytes = Metrics.counter("tokfx", "bytes_read")
        self.usec = Metrics.counter("tokfx", "usec_read")

    def setup(self):
        self.policy = _Policy(self.on_error)

    def _items(self, path: str, byte_range):
        with open_raw(path) as f:
            if byte_range is None:
                yield from read_jsonl(f, path, self.text_field, self.id_field)
                return
            start, end = byte_range
            f.seek(start)
            yield from split_text_documents(f.read(end - start), start, path, self.special_tokens)

    def process(self, task):
        items, busy = self._items(*task), 0.0
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
        path, byte_range = task
        where = f" bytes {byte_range[0]:,}-{byte_range[1]:,}" if byte_range else ""
        if self.progress:
                log.info("read %s%s: %s documents, %s bytes, %s rejected", path, where,
                     f"{documents:,}", f"{size:,}", f"{rejected:,}")


class ReadCorpus(beam.PTransform):
    """File patterns -> {"documents": Documents, "rejected": Rejections} (tokfx.formats.documents).

    With `progress`, each read task logs what it read."""

    def __init__(self, patterns, *, text_field="text", id_field=None, special_tokens=(),
                 on_error="fail", txt_range_bytes=32 << 20, progress=False):
        super().__init__()
        self.patterns = list(patterns)
        self.read_args = (on_error, text_field, id_field, tuple(special_tokens), progress)
        self.plan_args = (on_error, tuple(special_tokens), txt_range_bytes)

    def expand(self, pbegin):
        planned = (pbegin
                   | "Patterns" >> beam.Create(self.patterns)
                   | "Plan" >> beam.ParDo(_PlanReads(*self.plan_args)).with_outputs(
                       REJECTED, main="tasks"))
        # Reshuffle spreads the tasks over workers (else they stay fused in one bundle).
        read = (planned.tasks
                | "Spread" >> beam.Reshuffle()
                | "Read" >> beam.ParDo(_ReadTask(*self.read_args)).with_outputs(
                    REJECTED, main="documents"))
        rejected = ((planned[REJECTED], read[REJECTED])
                    | "AllRejected" >> beam.Flatten())
        return {"documents": read.documents, "rejected": rejected}
