"""Beam pipeline throughput on en_10M: counting vs the library's own multi-process counting at
several input sizes (wall-time ratios, and the marginal throughput between the smallest and the
largest), and `tokfx run` end to end on en_10M as sharded .jsonl.zst, with each stage's share.

Run with an interpreter where tokfx is installed, from outside the checkout (multi_processing
workers import tokfx from the installed package):
    cd /tmp && /path/to/.venv/bin/python /path/to/bench/bench_pipeline.py [--repeats 3] [--workers 2]
        [--count-scales 1,16,64] [--scale 1]
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).parent))
from corpora import SEPARATOR, load  # noqa: E402

import tokfx  # noqa: E402
from beam_jobs.pipelines import run  # noqa: E402

EOT = "<|endoftext|>"
STAGES = ("read", "count", "train", "encode", "write")


def write_shards(directory: Path, text: str, shards: int) -> list[Path]:
    """en_10M cut into paragraph documents, round-robin into `shards` .jsonl.zst files."""
    docs = [p for book in text.split(SEPARATOR) for p in book.split("\n\n") if p.strip()]
    paths = []
    for s in range(shards):
        lines = "".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs[s::shards])
        path = directory / f"en_10M-{s:02d}.jsonl.zst"
        path.write_bytes(zstandard.ZstdCompressor(level=3).compress(lines.encode("utf-8")))
        paths.append(path)
    return paths


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def write_corpus(tmp: Path, scale: int) -> tuple[Path, float]:
    txt = tmp / f"en_10M-x{scale}.txt"
    txt.write_text(SEPARATOR.join([load("en_10M")] * scale), encoding="utf-8")
    return txt, txt.stat().st_size / 1e6


def count_series(tmp: Path, scale: int, workers: int, repeats: int) -> tuple[float, float, float, float]:
    """(MB, library, Beam in process, Beam with `workers` workers) medians in seconds. Beam reads
    the .txt in as many ranges as the library counts (4 per process), at least 1 MiB each."""
    txt, size_mb = write_corpus(tmp, scale)
    range_bytes = max(1 << 20, -(-txt.stat().st_size // (workers * 4)))
    count_args = ["--input", str(txt), "--output", str(tmp / "counts.parquet"), "--txt-range-bytes", str(range_bytes)]
    beam_workers = ["--direct_running_mode=multi_processing", f"--direct_num_workers={workers}", "-q"]
    lib, in_process, beam = [], [], []
    for _ in range(repeats):
        lib.append(timed(lambda: tokfx.count_pretokens_file(txt, special_tokens=[EOT], processes=workers))[0])
        in_process.append(timed(lambda: run("count", [*count_args, "-q"]))[0])
        beam.append(timed(lambda: run("count", [*count_args, *beam_workers]))[0])
    txt.unlink()
    return size_mb, *map(statistics.median, (lib, in_process, beam))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--count-scales", default="1,16,64",
                        help="counting on en_10M repeated this many times (comma-separated; '' skips)")
    parser.add_argument("--scale", type=int, default=1, help="tokfx run on en_10M repeated this many times (0 skips)")
    args = parser.parse_args()
    beam_workers = ["--direct_running_mode=multi_processing",
                    f"--direct_num_workers={args.workers}", "-q"]
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        tmp = Path(tmp)
        series = [count_series(tmp, int(x), args.workers, args.repeats) for x in args.count_scales.split(",") if x]
        for (size_mb, lib_s, one_s, beam_s), scale in zip(series, args.count_scales.split(",")):
            print(f"counting {scale} x en_10M ({size_mb:.1f} MB, {args.workers} processes/workers,"
                  f" median of {args.repeats}):")
            print(f"  tokfx.count_pretokens_file        {lib_s:6.2f} s  {size_mb / lib_s:6.1f} MB/s")
            print(f"  tokfx count (DirectRunner, 1)     {one_s:6.2f} s  {size_mb / one_s:6.1f} MB/s")
            print(f"  tokfx count (multi_processing)    {beam_s:6.2f} s  {size_mb / beam_s:6.1f} MB/s"
                  f"   Beam / library throughput = {lib_s / beam_s:.2f}")
        if len(series) > 1:
            # The slope between the smallest and the largest input: throughput once Beam's fixed
            # cost (worker start-up, graph translation) is paid.
            (mb0, lib0, _, beam0), (mb1, lib1, _, beam1) = series[0], series[-1]
            lib_rate, beam_rate = (mb1 - mb0) / (lib1 - lib0), (mb1 - mb0) / (beam1 - beam0)
            print(f"marginal throughput {mb0:.0f} -> {mb1:.0f} MB: library {lib_rate:.1f} MB/s, Beam {beam_rate:.1f} MB/s,"
                  f" Beam / library = {beam_rate / lib_rate:.2f}; Beam's fixed cost about"
                  f" {beam0 - mb0 / beam_rate:.2f} s")
        if not args.scale:
            return
        text = SEPARATOR.join([load("en_10M")] * args.scale)
        size_mb = len(text.encode("utf-8")) / 1e6
        write_shards(tmp, text, shards=8)

        runs = []
        for i in range(args.repeats):
            seconds, counters = timed(lambda: run("run", [
                "--input", str(tmp / "en_10M-*.jsonl.zst"), "--output", str(tmp / f"out{i}"),
                "--vocab-size", str(args.vocab_size), "--num-shards", "8", *beam_workers]))
            runs.append((seconds, counters))
        seconds, counters = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
        busy = {s: counters.get(f"usec_{s}", 0) / 1e6 for s in STAGES}
        total_busy = sum(busy.values())
        print(f"tokfx run on {args.scale} x en_10M as 8 .jsonl.zst shards, vocab {args.vocab_size},"
              f" {args.workers} workers (median of {args.repeats} by wall time):")
        print(f"  {seconds:.2f} s wall, {size_mb / seconds:.2f} MB/s;"
              f" {counters['documents_written']:,} documents, {counters['tokens']:,} tokens")
        print("  stage shares of processing time summed over workers: " + ", ".join(
            f"{s} {busy[s]:.2f} s ({100 * busy[s] / total_busy:.0f} %)" for s in STAGES))
        print(f"  wall time outside the stages' own processing (Beam, shuffles, startup):"
              f" {max(0.0, seconds - total_busy / args.workers):.2f} s or more")


if __name__ == "__main__":
    main()
