"""CountTasks: read tasks -> the corpus's pre-token counts (and line counts, for SaGe's
context="line"), summed, pruned and ready for the single training reducer.

1. One DoFn call per read task reads its documents and counts them into the bundle's CountTable
   (tokfx._count_table: native memory, some 45 bytes a pre-token): Beam's per-element cost is
   paid per task, not per document. Once the table holds `FLUSH_ENTRIES` keys, and at the end
   of the bundle, it is written to a count file cut into `PARTS` parts by a fixed hash of the
   key (beam_jobs.count_files), so a worker's memory stays bounded whatever its share.
2. One step per part sums that part of every count file, drops the keys counted fewer than
   `min_count` times, keeps the `max_pretokens` most frequent (exact: every key is in one part
   only, so the global top is among the parts' tops) and writes the sum to a count file.
3. `Counted.load` joins the parts into one table in the reducer that needs it, in key order,
   trimmed to `max_pretokens` (tokfx._count_table.join_disjoint).

Only file paths go through the runner (a local runner holds what it shuffles in the launcher's
memory). The files live in the run's work directory, which the launcher removes once the run
is done.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from tokfx._count_table import CountTable, join_disjoint
from tokfx.counting.pretoken_counter import PretokenCounter
from tokfx.counting.texts import count_lines_into
from tokfx.formats.documents import Rejection, Texts
from tokfx.formats.readers import ReadOptions
from tokfx.formats.shards.placement import is_held_out
from tokfx.pre_tokenizers import PreTokenizer
from beam_jobs.count_files import new_count_file, read_packed_part, sum_count_parts, write_count_file
from beam_jobs.memory import release_free_memory
from beam_jobs.progress import COUNTING, EVERY, PassReporter
from beam_jobs.read import REJECTED, Policy, TaskReader

log = logging.getLogger(__name__)

# Parts that the summing spreads over; enough for a cluster, few enough that a count file's
# parts stay large.
PARTS = 64
# A bundle's table is written once it holds this many keys (some 22 MB): the local runner gives
# a worker one bundle for all its read tasks. Small enough that the table's lookups stay fast
# while two workers count side by side: counting 200 MB took 2.73-2.87 CPU s per worker with
# 2^20 keys, 2.05-2.13 s with 2^18 before the table was fetched ahead (bench/README.md,
# "Counting faster"); since then 2^19 counts as fast as 2^18 (4 files of the 1 GB corpus a
# worker: 4.88 CPU s either way, 5.0 with 2^20) and leaves a third fewer entries to sum (0.15
# against 0.23 CPU s: "Counting reads a chunk at a time"). The sums, and so the trained
# tokenizer, are the same whatever the flush size.
FLUSH_ENTRIES = 1 << 19
PRETOKEN, LINE = "pretoken", "line"


def count_work_dir(output: str) -> str:
    """Where `tokfx count --output FILE` keeps its count files while it runs (`tokfx run` keeps
    them in its output directory)."""
    return output + ".counting"


class Counted(NamedTuple):
    """What counting gives the reducer: the count files of the summed parts (disjoint keys),
    and the most entries to keep of their union."""
    paths: tuple[str, ...]
    limit: int | None

    def load(self) -> CountTable:
        """The parts joined, trimmed to `limit`, in key order (whatever order the parts came in)."""
        return join_disjoint((read_packed_part(path, 0) for path in self.paths), self.limit)


class CountSettings(NamedTuple):
    work_dir: str  # where the count files go: a directory every worker can write and read
    options: ReadOptions
    on_error: str
    pattern: str
    special_tokens: tuple[str, ...]  # cut the documents' text before counting
    lines: bool  # count lines too
    eval_fraction: float  # documents held out of training are not counted
    record_rejected: bool  # rejections go to the REJECTED output (else another pass records them)
    task_count: int
    progress: bool
    progress_dir: str | None = None  # where the run's progress is reported (beam_jobs.progress)
    progress_every: float = EVERY


class _CountTasks(beam.DoFn):
    """ReadTasks -> (kind, count file path), kind PRETOKEN or LINE."""

    def __init__(self, settings: CountSettings):
        self.settings = settings
        self.documents = Metrics.counter("tokfx", "documents_counted")
        self.occurrences = {PRETOKEN: Metrics.counter("tokfx", "pretokens"), LINE: Metrics.counter("tokfx", "lines")}
        self.read_usec = Metrics.counter("tokfx", "usec_read")
        self.count_usec = Metrics.counter("tokfx", "usec_count")

    def setup(self):
        s = self.settings
        self.policy = Policy(s.on_error, counted=s.record_rejected)
        self.pretokenizer = PreTokenizer(s.pattern, s.special_tokens)
        self.reporter = PassReporter(s.progress_dir, COUNTING, s.progress_every) if s.progress_dir else None

    def start_bundle(self):
        self.tables = {PRETOKEN: CountTable()}
        self.counter = PretokenCounter(self.pretokenizer, self.tables[PRETOKEN])
        if self.settings.lines:
            self.tables[LINE] = CountTable()

    def process(self, task):
        s, documents, read_s, count_s = self.settings, 0, 0.0, 0.0
        # Texts come as UTF-8 where nothing else of a document is needed (no held-out ids, no
        # lines, no normalizer): a JSON-lines reader then makes no str, and reads a chunk of
        # the file a call (bench/README.md, "Counting reads UTF-8", "... a chunk at a time").
        utf8 = self.counter.takes_utf8 and not s.eval_fraction and not s.lines
        reader = TaskReader(task, s.options, utf8)
        items = iter(reader)
        if self.reporter:
            self.reporter.start(task.index, reader)
        while True:
            start = time.perf_counter()
            item = next(items, None)
            read_s += time.perf_counter() - start
            if item is None:
                break
            if isinstance(item, Rejection):
                rejected = self.policy.reject(item)  # raises under fail
                if s.record_rejected:
                    yield rejected
                continue
            read = len(item.ends) if isinstance(item, Texts) else 1
            documents += read
            if self.reporter:
                self.reporter.document(read)
            start = time.perf_counter()
            if isinstance(item, Texts):
                self.counter.add_texts(item.data, item.ends)
            elif s.eval_fraction and is_held_out(item.id, s.eval_fraction):
                continue
            else:
                self.counter.add(item.text)
                if s.lines:
                    count_lines_into(item.text, self.tables[LINE], self.pretokenizer.specials)
            count_s += time.perf_counter() - start
            if max(map(len, self.tables.values())) >= FLUSH_ENTRIES:
                yield from self._flush()
        if self.reporter:
            self.reporter.end()
        self.documents.inc(documents)
        self.read_usec.inc(int(read_s * 1e6))
        self.count_usec.inc(int(count_s * 1e6))
        if s.progress:
            log.info("counted task %s of %s (%s): %s documents", f"{task.index + 1:,}",
                     f"{s.task_count:,}", task.describe(), f"{documents:,}")

    def finish_bundle(self):
        if self.reporter:
            self.reporter.write()
        for item in self._flush():
            yield WindowedValue(item, MIN_TIMESTAMP, [GlobalWindow()])

    def _flush(self):
        start = time.perf_counter()
        self.counter.flush()  # the batch of text not yet counted
        self.count_usec.inc(int((time.perf_counter() - start) * 1e6))
        for kind, table in self.tables.items():
            if table:
                self.occurrences[kind].inc(table.total())
                path = new_count_file(self.settings.work_dir, kind)
                write_count_file(path, table.split_packed(PARTS))
                self.tables[kind] = CountTable()
                yield kind, path
        self.counter = PretokenCounter(self.pretokenizer, self.tables[PRETOKEN])
        release_free_memory()  # the tables just written (13 MB off a 2-worker `tokfx run` at 100 MB)


def _sum_part(job: tuple[int, Iterable[str]], work_dir: str, kind: str, min_count: int,
              limit: int | None) -> str:
    part, paths = job
    summed = sum_count_parts(sorted(paths), part).at_least(min_count)
    if limit is not None:
        summed = summed.most_frequent(limit)
    destination = new_count_file(work_dir, f"{kind}-sum")
    write_count_file(destination, [summed.packed()])
    return destination


class _SumParts(beam.PTransform):
    """The count files of one kind -> a single Counted."""

    def __init__(self, work_dir: str, kind: str, min_count: int, limit: int | None):
        super().__init__()
        self.work_dir, self.kind, self.min_count, self.limit = work_dir, kind, min_count, limit

    def expand(self, paths):
        # One shuffle: each part's step gets the paths of every count file (all of them hold
        # every part), grouped by part, which spreads the steps over the workers. A list of all
        # the files sent on by part took two (ToList, then Reshuffle): 0.1 s more of a 1 GB
        # `tokfx run` with 2 workers (bench/README.md, "Counting reads a chunk at a time, one
        # shuffle before the sums").
        return (paths
                | "Parts" >> beam.FlatMap(lambda path: [(part, path) for part in range(PARTS)])
                | "ByPart" >> beam.GroupByKey()
                | "Sum" >> beam.Map(_sum_part, self.work_dir, self.kind, self.min_count, self.limit)
                | "AllParts" >> beam.combiners.ToList()
                | "Counted" >> beam.Map(lambda summed, limit: Counted(tuple(sorted(summed)), limit), self.limit))


class CountTasks(beam.PTransform):
    """ReadTasks -> {PRETOKEN: a single Counted, LINE: a single Counted (with `lines`),
    REJECTED: the Rejections (with `record_rejected`)}.

    Lines (tokfx.counting.texts.count_lines_into: what SaGe's context="line" trains on besides
    the pre-tokens) are counted without pruning."""

    def __init__(self, settings: CountSettings, min_count: int = 1, max_pretokens: int | None = None):
        """`max_pretokens`: None or 0 keeps all."""
        super().__init__()
        if min_count < 1:
            raise ValueError(f"--min-pretoken-count must be at least 1, got {min_count}")
        if max_pretokens is not None and max_pretokens < 0:
            raise ValueError(f"--max-pretokens must be 0 (keep all) or more, got {max_pretokens}")
        self.settings, self.min_count, self.max_pretokens = settings, min_count, max_pretokens or None

    def expand(self, tasks):
        files = (tasks
                 # Reshuffle spreads the tasks over workers (else they stay fused in one bundle).
                 | "Spread" >> beam.Reshuffle()
                 | "Count" >> beam.ParDo(_CountTasks(self.settings)).with_outputs(REJECTED, main="files"))
        kinds = {PRETOKEN: (self.min_count, self.max_pretokens)}
        if self.settings.lines:
            kinds[LINE] = (1, None)
        counted = {REJECTED: files[REJECTED]}
        for kind, (min_count, limit) in kinds.items():
            counted[kind] = ((files.files | f"Only{kind}" >> beam.Filter(lambda item, k: item[0] == k, kind)
                              | f"Path{kind}" >> beam.Map(lambda item: item[1]))
                             | f"Sum{kind}" >> _SumParts(self.settings.work_dir, kind, min_count, limit))
        return counted
