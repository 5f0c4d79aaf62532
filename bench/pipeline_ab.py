"""`tokfx encode --output-dir` and `tokfx run` of several checkouts, alternated in one run: the
wall time and the CPU time of each job's whole process tree (the launcher and its workers, from
getrusage of the children), and the medians. What a change to either pass is worth where the
machine's own speed drifts between minutes (this 2-core VM's did by 10 % and more): each
repeat runs every checkout's job in turn, so a drift weighs on all of them alike.

    cd /tmp && python /path/to/checkout/bench/pipeline_ab.py --checkouts A,B --corpus 'DIR/part-*.jsonl.zst' \
        --tokenizer GPT2_TOKENIZER_DIR [--repeats 5] [--jobs encode,run] [--workers 2]

A checkout runs as PYTHONPATH=checkout (its extensions built in place). The corpus and the GPT-2
tokenizer directory are those bench_pipeline.py builds in its --workdir. A benchmark, not a test:
it prints, it asserts nothing but that each job exits 0.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def command(job: str, args, out: str) -> list[str]:
    beam = ["-q", f"--direct_num_workers={args.workers}", "--direct_running_mode=multi_processing"]
    if job == "encode":
        return ["encode", args.tokenizer, "--output-dir", out, "--input", args.corpus, *beam]
    return ["run", "--input", args.corpus, "--output", out, "--vocab-size", str(args.vocab_size), *beam]


def timed(checkout: str, job: str, args, out: str) -> tuple[float, float]:
    """(wall s, CPU s of the process tree) of one job."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tokfx.cli", *command(job, args, out)], cwd=tempfile.gettempdir(),
                          env={**os.environ, "PYTHONPATH": checkout}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{checkout}: tokfx {job} exited {done.returncode}: {done.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkouts", required=True, help="comma-separated checkout directories")
    parser.add_argument("--corpus", required=True, help="the input glob, e.g. 'DIR/part-*.jsonl.zst'")
    parser.add_argument("--tokenizer", required=True, help="tokfx encode's tokenizer directory")
    parser.add_argument("--jobs", default="encode,run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=32000, help="tokfx run's vocabulary")
    args = parser.parse_args()
    checkouts, jobs = args.checkouts.split(","), args.jobs.split(",")
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as work:
        for repeat in range(1, args.repeats + 1):
            for job in jobs:
                for checkout in checkouts:
                    wall, cpu = timed(checkout, job, args, os.path.join(work, "out"))
                    times.setdefault((checkout, job), []).append((wall, cpu))
                    print(f"{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.2f} repeat {repeat} {job:6} "
                          f"wall {wall:6.2f} s  CPU {cpu:6.2f} s  {checkout}", flush=True)
    print(f"medians of {args.repeats}, {args.workers} workers")
    for checkout in checkouts:
        wall = {job: statistics.median(t[0] for t in times[(checkout, job)]) for job in jobs}
        cpu = {job: statistics.median(t[1] for t in times[(checkout, job)]) for job in jobs}
        line = "  ".join(f"{job} wall {wall[job]:.2f} s CPU {cpu[job]:.2f} s" for job in jobs)
        if {"encode", "run"} <= set(jobs):
            line += f"  run / encode {wall['encode'] / wall['run']:.3f}"
        print(f"  {checkout}: {line}")


if __name__ == "__main__":
    main()
