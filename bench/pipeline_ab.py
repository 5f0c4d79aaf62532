"""`tokfx encode --output-dir` and `tokfx run` of several checkouts, alternated in one run: the
wall time and the CPU time of each job's whole process tree (the launcher and its workers, from
getrusage of the children), the medians, and each checkout's differences from the first one
repeat by repeat. What a change to either pass is worth where the machine's own speed drifts
between minutes (this 2-core VM's did by 10 % and more): each repeat runs every checkout's job
in turn, in the reverse order every other repeat, so a drift weighs on all of them alike.

    cd /tmp && PYTHONPATH=/path/to/checkout python /path/to/checkout/bench/pipeline_ab.py --checkouts A,B \
        [--size 1000] [--repeats 5] [--jobs encode,run] [--workers 2] [--workdir /tmp/tokfx-bench]

A checkout runs as PYTHONPATH=checkout (its extensions built in place). The corpus, the GPT-2
tokenizer directory and each job's command line are bench_pipeline.py's (the corpus built in
--workdir unless it is there). A benchmark, not a test: it prints, it asserts nothing but that
each job exits 0.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_pipeline import JOBS, commands, gpt2_tokenizer
from jsonl_corpus import build


def timed(checkout: str, job: str, command: list[str], out: Path, workdir: Path) -> tuple[float, float]:
    """(wall s, CPU s of the process tree) of one job."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, env={**os.environ, "PYTHONPATH": checkout}, capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{checkout}: {job} exited {done.returncode}: {done.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkouts", required=True, help="comma-separated checkout directories")
    parser.add_argument("--size", type=float, default=1000, help="the corpus, MB of text")
    parser.add_argument("--jobs", default="encode,run", help=f"a subset of {','.join(JOBS)} but the plain ones")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=32000, help="tokfx run's vocabulary")
    parser.add_argument("--train-sample", default="10%", help="run-sample's --train-sample")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tokfx-bench"),
                        help="bench_pipeline.py's: the corpus (kept), the tokenizer and the jobs' outputs")
    args = parser.parse_args()
    checkouts, jobs = args.checkouts.split(","), args.jobs.split(",")
    if unknown := {job for job in jobs if job not in JOBS or job.startswith("plain")}:
        parser.error(f"unknown or plain jobs: {', '.join(sorted(unknown))}")
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    files, tokenizer = build(args.workdir, args.size)["files"], gpt2_tokenizer(args.workdir)
    out = args.workdir / "out-ab"
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for repeat in range(1, args.repeats + 1):
        for job in jobs:
            # Each checkout first in turn: the machine's state after the job before (its caches,
            # its clock) then weighs on no checkout more than another.
            for checkout in checkouts if repeat % 2 else checkouts[::-1]:
                wall, cpu = timed(checkout, job, commands(job, files, tokenizer, out, args), out, args.workdir)
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
    base = checkouts[0]
    for checkout in checkouts[1:]:
        for job in jobs:
            walls = [after[0] - before[0] for before, after in zip(times[(base, job)], times[(checkout, job)])]
            cpus = [after[1] - before[1] for before, after in zip(times[(base, job)], times[(checkout, job)])]
            print(f"  {checkout} - {base}, {job}, repeat by repeat: wall {statistics.median(walls):+.2f} s at the "
                  f"median ({', '.join(f'{d:+.2f}' for d in walls)}), faster in {sum(d < 0 for d in walls)} of "
                  f"{len(walls)}; CPU {statistics.median(cpus):+.2f} s at the median")


if __name__ == "__main__":
    main()
