"""CountPretokens: documents -> one {pre-token bytes: count} dict, ready for a single reducer.

Each bundle counts into a local dict and emits it in `finish_bundle` (emitting (pretoken, 1)
per pre-token is 2-3x slower); `CombinePerKey(sum)` adds the bundles up; pruning by
`min_count` happens before the funnel, and the funnel keeps only the `max_pretokens` most
frequent, trimming as it merges.
"""
from __future__ import annotations

import time

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from tokfx.counts_file import most_frequent
from tokfx.pretokenize import PreTokenizer


class _CountInBundle(beam.DoFn):
    def __init__(self, pattern: str, special_tokens: tuple[str, ...]):
        self.pattern, self.special_tokens = pattern, special_tokens
        self.pretokens = Metrics.counter("tokfx", "pretokens")
        self.usec = Metrics.counter("tokfx", "usec_count")

    def setup(self):
        self.pretokenizer = PreTokenizer(self.pattern, self.special_tokens)

    def start_bundle(self):
        self.counts: dict[bytes, int] = {}

    def process(self, doc):
        start = time.perf_counter()
        self.pretokenizer.count_into(doc.text, self.counts)
        self.usec.inc(int((time.perf_counter() - start) * 1e6))

    def finish_bundle(self):
        self.pretokens.inc(sum(self.counts.values()))
        for item in self.counts.items():
            yield WindowedValue(item, MIN_TIMESTAMP, [GlobalWindow()])
        self.counts = {}


class _CollectCounts(beam.CombineFn):
    """(pretoken, count) pairs with distinct pretokens -> one dict, at most `limit` entries.

    Trimming a part to its top `limit` loses nothing: every key arrives once, so the global
    top `limit` is among the union of the parts' tops.
    """

    def __init__(self, limit: int | None):
        self.limit = limit

    def _trim(self, counts: dict) -> dict:
        if self.limit is not None and len(counts) > 2 * self.limit:
            return most_frequent(counts, self.limit)
        return counts

    def create_accumulator(self):
        return {}

    def add_input(self, acc, item):
        acc[item[0]] = item[1]
        return self._trim(acc)

    def merge_accumulators(self, accumulators):
        merged: dict[bytes, int] = {}
        for acc in accumulators:
            merged.update(acc)
            merged = self._trim(merged)
        return merged

    def extract_output(self, acc):
        return most_frequent(acc, self.limit) if self.limit is not None else acc


class CountPretokens(beam.PTransform):
    """Documents -> a single element: the {pretoken: count} dict that training starts from."""

    def __init__(self, pattern="gpt2", special_tokens=(), min_count=1, max_pretokens=None):
        super().__init__()
        self.pattern, self.special_tokens = pattern, tuple(special_tokens)
        self.min_count, self.max_pretokens = min_count, max_pretokens

    def expand(self, documents):
        min_count = self.min_count
        return (documents
                | "CountInBundle" >> beam.ParDo(_CountInBundle(self.pattern, self.special_tokens))
                | "Sum" >> beam.CombinePerKey(sum)
                | "MinCount" >> beam.Filter(lambda kv: kv[1] >= min_count)
                | "Funnel" >> beam.CombineGlobally(_CollectCounts(self.max_pretokens)))
