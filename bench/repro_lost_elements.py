"""Standalone reproduction (no tokfx): Apache Beam 2.77's FnApiRunner silently drops elements
under --direct_running_mode=multi_processing --direct_num_workers=2.

Pattern (the old `tokfx run`): tasks -> Reshuffle -> a FlatMap yielding many 4 KB documents ->
(a) Count.Globally, (b) a side input computed from the documents, (c) a ParDo with that side
input keying each document to one of a few keys -> GroupByKey -> per key. Because (c) waits for
(b), the documents are materialized in the runner and re-sent to the workers, each worker's
share in several ~10 MB chunks.

Cause: the runner sends those chunks through a TimeBasedBufferingClosableOutputStream
(apache_beam/runners/worker/data_plane.py); its periodic flush thread (every
DATA_BUFFER_TIME_LIMIT_MS = 1000 ms, fn_api_runner/worker_handlers.py) runs
`self._flush_callback(self.get()); self._clear()` under `_flush_lock`, but `write()` (the Cython
OutputStream.write) takes no lock. A chunk written while the flush callback has released the GIL
is wiped by `_clear()`. See docs/lost_documents.md.

  python bench/repro_lost_elements.py                 # 64 MB, runner flush every 1 ms: ~3 s
  python bench/repro_lost_elements.py --issue-size    # 886 MB, Beam's defaults: ~35 s, loses in ~1 run of 3
  ... --locked-write    the fix: write() takes the flush lock -> nothing lost
  ... --flush-ms 0      the workaround: no time-based flush in the runner -> nothing lost
  python bench/repro_lost_elements.py --stream        # the race alone, no pipeline: instant

Exit status 1 when elements were lost.
"""
import argparse
import json
import logging
import os
import tempfile
import time

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner import worker_handlers
from apache_beam.runners.worker import data_plane

NS = "repro"


def lock_writes():
    """The fix: serialize write() with the periodic flush."""
    def write(self, b, nested=False):
        with self._flush_lock:
            data_plane.OutputStream.write(self, b, nested)
    data_plane.TimeBasedBufferingClosableOutputStream.write = write


def stream_race():
    """The race without a pipeline: write 50 x 1 MB while a 10 ms periodic flush's callback
    blocks (as _GrpcDataChannel._enqueue_to_send does when its send queue is full)."""
    delivered = []

    def flush_callback(data):
        delivered.append(len(data))
        time.sleep(0.05)

    stream = data_plane.TimeBasedBufferingClosableOutputStream(
        lambda data: delivered.append(len(data)), flush_callback, time_flush_threshold_ms=10)
    for _ in range(50):
        stream.write(b"x" * (1 << 20))
        time.sleep(0.005)
    stream.close()
    print(f"beam {beam.__version__}: TimeBasedBufferingClosableOutputStream: written "
          f"{50 << 20:,} bytes, delivered {sum(delivered):,}")
    return sum(delivered) == 50 << 20


def make_docs(task, docs_per_task, doc_bytes):
    read = Metrics.counter(NS, "read")
    block = (b"%08d" % task) * (doc_bytes // 8 + 1)
    for i in range(docs_per_task):
        read.inc()
        yield task, i, block[:doc_bytes]


class Encode(beam.DoFn):
    def __init__(self, num_keys):
        self.num_keys = num_keys
        self.seen = Metrics.counter(NS, "encode_in")

    def process(self, doc, side):
        self.seen.inc()
        yield (doc[0] * 7919 + doc[1]) % self.num_keys, doc


def per_key(kv):
    ids = [(t, i) for t, i, _ in kv[1]]
    Metrics.counter(NS, "grouped_out").inc(len(ids))
    return ids


def check(ids_lists, report):
    have = {tuple(x) for ids in ids_lists for x in ids}
    missing = {}
    for t in range(report["tasks"]):
        lost = [i for i in range(report["docs_per_task"]) if (t, i) not in have]
        if lost:
            missing[t] = [lost[0], lost[-1], len(lost)]
    with open(report["path"], "w") as f:
        json.dump({"got": len(have), "missing": missing}, f)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--megabytes", type=int, default=64)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--doc-bytes", type=int, default=4000)
    ap.add_argument("--num-keys", type=int, default=4)
    ap.add_argument("--flush-ms", type=int, default=1,
                    help="the runner's time-based flush period (Beam's default 1000; "
                         "0 turns it off, the workaround)")
    ap.add_argument("--issue-size", action="store_true",
                    help="886 MB with Beam's default 1000 ms flush (the issue's setting)")
    ap.add_argument("--locked-write", action="store_true", help="apply the fix")
    ap.add_argument("--stream", action="store_true", help="the race alone, no pipeline")
    args, beam_args = ap.parse_known_args(argv)
    if args.stream:
        return stream_race()
    if args.issue_size:
        args.megabytes, args.flush_ms = 886, 1000
    worker_handlers.DATA_BUFFER_TIME_LIMIT_MS = args.flush_ms  # read by the runner's GrpcServer
    if args.locked_write:
        lock_writes()
    beam_args = beam_args or ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    docs_per_task = args.megabytes * 1_000_000 // args.doc_bytes // args.tasks
    expected = args.tasks * docs_per_task
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    report = {"tasks": args.tasks, "docs_per_task": docs_per_task, "path": path}

    start = time.time()
    p = beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner", *beam_args]))
    docs = (p | beam.Create(range(args.tasks)) | beam.Reshuffle()
            | "Read" >> beam.FlatMap(make_docs, docs_per_task, args.doc_bytes))
    docs | "Count" >> beam.combiners.Count.Globally()
    side = docs | "Side" >> beam.CombineGlobally(lambda xs: sum(1 for _ in xs))
    (docs
     | "Encode" >> beam.ParDo(Encode(args.num_keys), beam.pvalue.AsSingleton(side))
     | "Group" >> beam.GroupByKey()
     | "PerKey" >> beam.Map(per_key)
     | "All" >> beam.combiners.ToList()
     | "Check" >> beam.Map(check, report))
    result = p.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in
                result.metrics().query(MetricsFilter().with_namespace(NS))["counters"]}
    with open(path) as f:
        rep = json.load(f)
    os.unlink(path)
    print(f"beam {beam.__version__}; {args.tasks} tasks x {docs_per_task} docs x "
          f"{args.doc_bytes} B = {expected * args.doc_bytes / 1e6:.0f} MB, {args.num_keys} keys,"
          f" runner flush every {args.flush_ms} ms{', locked write' if args.locked_write else ''};"
          f" {' '.join(beam_args)}")
    print(f"counters: {counters}")
    print(f"expected {expected}, got {rep['got']}; missing per task [first, last, count]:"
          f" {rep['missing']}")
    print(f"{time.time() - start:.1f} s")
    return rep["got"] == expected


if __name__ == "__main__":
    logging.getLogger().setLevel(logging.WARNING)
    raise SystemExit(0 if main() else 1)
