"""Beam pipeline throughput on en_10M: counting vs the library's own multi-process counting,
and `tokfx run` end to end on en_10M as sharded .jsonl.zst, with each stage's share.

Run with an interpreter where tokfx is installed (multi_processing workers import it from
there): /tmp/pipe-venv/bin/python bench/bench_pipeline.py [--repeats 3] [--workers 2]
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--scale", type=int, default=1, help="en_10M repeated this many times")
    args = parser.parse_args()
    beam_workers = ["--direct_running_mode=multi_processing",
                    f"--direct_num_workers={args.workers}", "-q"]
    text = SEPARATOR.join([load("en_10M")] * args.scale)
    size_mb = len(text.encode("utf-8")) / 1e6
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        tmp = Path(tmp)
        txt = tmp / "en_10M.txt"
        txt.write_text(text, encoding="utf-8")
        write_shards(tmp, text, shards=8)

        lib, in_process, beam = [], [], []
        count_args = ["--input", str(txt), "--output", str(tmp / "counts.parquet"),
                      "--txt-range-bytes", str(1 << 20)]
        for _ in range(args.repeats):
            lib.append(timed(lambda: tokfx.count_pretokens_file(
                txt, special_tokens=[EOT], processes=args.workers))[0])
            in_process.append(timed(lambda: run("count", [*count_args, "-q"]))[0])
            beam.append(timed(lambda: run("count", [*count_args, *beam_workers]))[0])
        lib_s, one_s, beam_s = map(statistics.median, (lib, in_process, beam))
        print(f"counting {args.scale} x en_10M ({size_mb:.1f} MB, {args.workers} processes/workers,"
              f" median of {args.repeats}):")
        print(f"  tokfx.count_pretokens_file        {lib_s:6.2f} s  {size_mb / lib_s:5.2f} MB/s")
        print(f"  tokfx count (DirectRunner, 1)     {one_s:6.2f} s  {size_mb / one_s:5.2f} MB/s")
        print(f"  tokfx count (multi_processing)    {beam_s:6.2f} s  {size_mb / beam_s:5.2f} MB/s"
              f"   Beam / library throughput = {lib_s / beam_s:.2f}")

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
