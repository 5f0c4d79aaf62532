"""The counting pass's flush size (beam_jobs.count.FLUSH_ENTRIES): what one worker of `tokfx run`
spends counting, at several table sizes, with other workers counting beside it.

    cd /tmp && PYTHONPATH=/path/to/checkout python /path/to/checkout/bench/bench_count_flush.py \
        --corpus DIR_OF_JSONL_ZST --files 4 --processes 2 --flush 1048576,262144,131072

Each process does a worker's work on the same documents (the first `--files` files of a
bench_pipeline.py corpus). `--stage count` (the default): the documents are read and
pre-tokenized in memory before the clock starts; the pre-tokens of 1 MB batches are added into
a CountTable, written to a count file cut into beam_jobs.count.PARTS parts once it holds
`--flush` keys and at the end. `--stage pass`: the counting pass's DoFn itself
(beam_jobs.count._CountTasks, one bundle of every file's read task): reading (zstd, JSON),
pre-tokenizing, counting and writing, as a worker of `tokfx run` does them, reading between
two batches included (it evicts the table from the cache). Then the summing of every part over
the count files written (what the Sum step spreads over the workers). CPU seconds of the
process (time.process_time), the median of `--repeats`, so other load on the machine weighs less
than in wall time; the processes run side by side, as a run's workers do. Every flush size
gives the same sums (checked: the number of keys and occurrences summed). A benchmark, not a
test: it prints.
"""
from __future__ import annotations

import argparse
import glob
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
from array import array
from itertools import accumulate
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import beam_jobs.count  # noqa: E402
from beam_jobs.count import PARTS, CountSettings, _CountTasks  # noqa: E402
from beam_jobs.count_files import new_count_file, sum_count_parts, write_count_file  # noqa: E402
from beam_jobs.plan import plan_reads  # noqa: E402
from beam_jobs.read import TaskReader  # noqa: E402
from tokfx._count_table import CountTable, count_pieces  # noqa: E402
from tokfx.counting.pretoken_counter import BATCH_BYTES  # noqa: E402
from tokfx.formats.readers import ReadOptions  # noqa: E402
from tokfx.formats.readers.policy import ErrorPolicy  # noqa: E402
from tokfx.pre_tokenizers import PreTokenizer  # noqa: E402


def batches(files: list[str]) -> tuple[list[tuple[bytes, array]], int]:
    """The documents' text as the counter batches it, with each batch's piece ends."""
    plan = plan_reads(files, ReadOptions(), 1 << 40, ErrorPolicy("fail"))
    pretokenizer, out, chunks, size, total = PreTokenizer("gpt2"), [], [], 0, 0
    for task in plan.tasks:
        for document in TaskReader(task, plan.options):
            data = document.text.encode("utf-8")
            chunks.append(data)
            size += len(data)
            total += len(data)
            if size >= BATCH_BYTES:
                out.append(chunks)
                chunks, size = [], 0
    out.append(chunks)
    joined = [b"".join(c) for c in out]
    return [(data, pretokenizer.piece_ends(data, array("q", accumulate(map(len, c)))))
            for data, c in zip(joined, out)], total


def count_batches(work: list[tuple[bytes, array]], flush: int, work_dir: str) -> list[str]:
    """--stage count: the pre-tokenized batches counted and written; the count files."""
    table, paths = CountTable(), []
    for data, ends in work:
        count_pieces(table, data, ends)
        if len(table) >= flush:
            paths.append(new_count_file(work_dir, "pretoken"))
            write_count_file(paths[-1], table.split_packed(PARTS))
            table = CountTable()
    paths.append(new_count_file(work_dir, "pretoken"))
    write_count_file(paths[-1], table.split_packed(PARTS))
    return paths


def count_pass(files: list[str], flush: int, work_dir: str) -> list[str]:
    """--stage pass: the counting pass's DoFn over the files' read tasks; the count files."""
    plan = plan_reads(files, ReadOptions(), 1 << 40, ErrorPolicy("fail"))
    settings = CountSettings(work_dir, plan.options, "fail", "gpt2", (), False, 0.0, False,
                             len(plan.tasks), False)
    beam_jobs.count.FLUSH_ENTRIES = flush  # read by the DoFn as it counts
    dofn = _CountTasks(settings)
    dofn.setup()
    dofn.start_bundle()
    out = [item for task in plan.tasks for item in dofn.process(task)]
    out += [item.value for item in dofn.finish_bundle()]
    return [path for _, path in out]


def one_flush_size(work, flush: int, stage: str) -> tuple[float, float, int, int, int]:
    """(CPU s counting and writing, CPU s summing, count files, keys, occurrences); `work`: the
    pre-tokenized batches (--stage count) or the files (--stage pass)."""
    work_dir = tempfile.mkdtemp(prefix="tokfx-count-flush-")
    try:
        start = time.process_time()
        paths = (count_batches if stage == "count" else count_pass)(work, flush, work_dir)
        counted = time.process_time() - start
        start, keys, occurrences = time.process_time(), 0, 0
        for part in range(PARTS):
            summed = sum_count_parts(paths, part)
            keys, occurrences = keys + len(summed), occurrences + summed.total()
        return counted, time.process_time() - start, len(paths), keys, occurrences
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)


def worker(args) -> list[tuple[int, float, float, int, int, int]]:
    files, flushes, repeats, stage = args
    work = batches(files)[0] if stage == "count" else files
    results = []
    for flush in flushes:
        runs = [one_flush_size(work, flush, stage) for _ in range(repeats)]
        counted = statistics.median(r[0] for r in runs)
        summed = statistics.median(r[1] for r in runs)
        results.append((flush, counted, summed, *runs[0][2:]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="a directory of part-*.jsonl.zst (bench/jsonl_corpus.py)")
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--flush", default="1048576,262144,131072")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stage", choices=("count", "pass"), default="count",
                        help="count: counting and writing pre-tokenized batches; pass: the counting pass's "
                             "DoFn (reading and pre-tokenizing too)")
    args = parser.parse_args()
    files = sorted(glob.glob(str(Path(args.corpus) / "part-*.jsonl.zst")))[:args.files]
    flushes = [int(f) for f in args.flush.split(",")]
    _, text_bytes = batches(files[:1])
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"{len(files)} files ({len(files)} x {text_bytes / 1e6:.0f} MB of text), {args.processes} processes"
          f" side by side, median of {args.repeats}, --stage {args.stage}; load average {load} at the start")
    with multiprocessing.Pool(args.processes) as pool:
        per_process = pool.map(worker, [(files, flushes, args.repeats, args.stage)] * args.processes)
    print(f"  {'flush keys':>10} {'count+write CPU s' if args.stage == 'count' else 'pass CPU s':>18} {'sum CPU s':>10} {'files':>6} {'keys summed':>12}")
    for rows in zip(*per_process):
        flush, keys = rows[0][0], rows[0][4]
        assert all(r[4:] == rows[0][4:] for r in rows)  # the same sums whatever the flush size
        print(f"  {flush:>10,} {' / '.join(f'{r[1]:.2f}' for r in rows):>18}"
              f" {' / '.join(f'{r[2]:.2f}' for r in rows):>10} {rows[0][3]:>6} {keys:>12,}")


if __name__ == "__main__":
    main()
