"""CountPretokens: documents -> one {pre-token bytes: count} CountTable, ready for a single reducer.

Each bundle counts into a local CountTable (tokfx._count_table: native memory, some 50 bytes a
pre-token, pickled as three flat buffers) and, in `finish_bundle` (or sooner, once it holds
`FLUSH_ENTRIES` keys, so that a worker's table stays bounded however large its bundle), emits it
cut into `PARTS` parts by a fixed hash of the pre-token: a few dozen elements per bundle, not
one per distinct pre-token (Beam's per-element cost was five times the counting itself).
`CombinePerKey` adds up each part's tables on its own reducer, so the summing spreads over
workers; pruning by `min_count` happens per part, and the funnel joins the disjoint parts,
keeping only the `max_pretokens` most frequent, trimming as it merges.
"""
from __future__ import annotations

import time

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from tokfx._count_table import CountTable
from tokfx.counting.texts import count_lines_into
from tokfx.pre_tokenizers import PreTokenizer

# Reducers that the summing spreads over; enough for a cluster, few enough that a bundle's
# parts stay large.
PARTS = 64
# A bundle's table is emitted once it holds this many keys (some 50 MB): the local runner gives
# a worker one bundle for all its read tasks.
FLUSH_ENTRIES = 1 << 20


class _CountInBundle(beam.DoFn):
    def __init__(self, pattern: str, special_tokens: tuple[str, ...], lines: bool):
        self.pattern, self.special_tokens, self.lines = pattern, special_tokens, lines
        self.units = Metrics.counter("tokfx", "lines" if lines else "pretokens")
        self.usec = Metrics.counter("tokfx", "usec_count")

    def setup(self):
        self.pretokenizer = PreTokenizer(self.pattern, self.special_tokens)
        specials = self.pretokenizer.specials
        self.count_into = (lambda text, counts: count_lines_into(text, counts, specials)) if self.lines \
            else self.pretokenizer.count_into

    def start_bundle(self):
        self.counts = CountTable()

    def process(self, doc):
        start = time.perf_counter()
        self.count_into(doc.text, self.counts)
        self.usec.inc(int((time.perf_counter() - start) * 1e6))
        if len(self.counts) >= FLUSH_ENTRIES:
            yield from self._emit()

    def finish_bundle(self):
        for item in self._emit():
            yield WindowedValue(item, MIN_TIMESTAMP, [GlobalWindow()])

    def _emit(self):
        self.units.inc(self.counts.total())
        for part, counts in enumerate(self.counts.split(PARTS)):
            if counts:
                yield part, counts
        self.counts = CountTable()


class _SumCounts(beam.CombineFn):
    """CountTables -> their sum."""

    def create_accumulator(self):
        return CountTable()

    def add_input(self, acc, counts):
        acc.update(counts)
        return acc

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        merged = next(accumulators)
        for acc in accumulators:
            merged.update(acc)
        return merged

    def extract_output(self, acc):
        return acc


class _JoinParts(beam.CombineFn):
    """CountTables with disjoint pretokens (the parts) -> one table, at most `limit` entries.

    Trimming a part to its top `limit` loses nothing: every key is in one part only, so the
    global top `limit` is among the union of the parts' tops.
    """

    def __init__(self, limit: int | None):
        self.limit = limit

    def _trim(self, counts: CountTable) -> CountTable:
        if self.limit is not None and len(counts) > 2 * self.limit:
            return counts.most_frequent(self.limit)
        return counts

    def create_accumulator(self):
        return CountTable()

    def add_input(self, acc, part):
        acc.update(part)
        return self._trim(acc)

    def merge_accumulators(self, accumulators):
        merged = CountTable()
        for acc in accumulators:
            merged.update(acc)
            merged = self._trim(merged)
        return merged

    def extract_output(self, acc):
        return acc.most_frequent(self.limit) if self.limit is not None else acc


class CountPretokens(beam.PTransform):
    """Documents -> a single element: the {pretoken: count} CountTable that training starts from.

    With `lines`, the {line: count} table instead (tokfx.counting.texts.count_lines_into: what SaGe's
    context="line" trains on besides the pre-tokens); `min_count` and `max_pretokens` then do
    not apply."""

    def __init__(self, pattern="gpt2", special_tokens=(), min_count=1, max_pretokens=None, lines=False):
        super().__init__()
        if lines and (min_count > 1 or max_pretokens is not None):
            raise ValueError("lines are counted without pruning (min_count, max_pretokens)")
        self.pattern, self.special_tokens = pattern, tuple(special_tokens)
        self.min_count, self.max_pretokens, self.lines = min_count, max_pretokens, lines

    def expand(self, documents):
        parts = (documents
                 | "CountInBundle" >> beam.ParDo(_CountInBundle(self.pattern, self.special_tokens, self.lines))
                 | "Sum" >> beam.CombinePerKey(_SumCounts())
                 | "MinCount" >> beam.Map(lambda kv, n: kv[1].at_least(n), self.min_count))
        # An empty part makes the funnel's output exist for an empty corpus too. (The default
        # value CombineGlobally would add instead goes through a side input, whose cache sizes
        # the whole counts dict object by object: 0.25 s per 60,000 pre-tokens.)
        empty = documents.pipeline | "EmptyPart" >> beam.Create([CountTable()])
        return ((parts, empty)
                | "AllParts" >> beam.Flatten()
                | "Funnel" >> beam.CombineGlobally(_JoinParts(self.max_pretokens)).without_defaults())
