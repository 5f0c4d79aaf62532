"""The pipeline benchmark of issue 13: `tokfx encode --output-dir` and `tokfx run` against the
plain `multiprocessing.Pool` script (bench/plain_encode.py) around our `Tokenizer` and around
tiktoken, `tokfx run --train-sample` against `tokfx run` and `tokfx encode --shuffle-seed`
against `tokfx encode` (issue 28), at several corpus
sizes, side by side: median wall time, MB/s and the peak RSS of each
job's whole process tree. A benchmark, not a test: it prints, it asserts nothing.

Run with the interpreter where tokfx is installed, from outside the checkout (the pipeline's
multi_processing workers import tokfx from the installed package):
    cd /tmp && /path/to/.venv/bin/python /path/to/bench/bench_pipeline.py \\
        [--sizes 200,1000] [--repeats 3] [--workers 2] [--workdir /tmp/tokfx-bench]

Corpus: bench/jsonl_corpus.py (en_10M as 3-5 KB documents in 8 (--files) .jsonl.zst files, repeated with
10 % of words mutated per copy), built once per size and kept under --workdir. Encoding uses
GPT-2's vocabulary (tests/fixtures) saved as a tokfx tokenizer directory; `tokfx run` trains a
--vocab-size 32000 BPE tokenizer itself. Every job is a subprocess with a fresh output directory,
deleted after it; within a repeat the jobs run one after the other, each repeat in a rotated
order. MB/s counts the documents' text as UTF-8 (10^6 bytes per MB), not the compressed input.
Peak RSS: every 0.2 s, the RSS of the job's process and all its descendants (from /proc),
summed; the largest sum seen (pages shared between processes count once per process).

--per-worker 1,2,4 (issue 28) first prints what one worker costs: its start-up step by step in
fresh interpreters (bench/worker_start.py), and `tokfx encode --output-dir` at each number of
workers beside the floor, as many bare Beam SDK workers, with each worker process's peak RSS
and CPU seconds; `--jobs ''` skips the table above.
"""
import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from jsonl_corpus import FILES, build, describe  # noqa: E402

FIXTURES = BENCH.parent / "tests" / "fixtures"
EOT = "<|endoftext|>"
JOBS = ("plain-tokfx", "plain-tiktoken", "encode", "encode-shuffle", "run", "run-sample")
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def tree_processes(root: int) -> dict[int, tuple[int, float, str]]:
    """`root` and all its descendants: pid -> (RSS bytes, CPU seconds so far (user + system),
    command line); empty once `root` is gone."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue  # exited meanwhile
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])  # the name may hold spaces
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = {}, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, ()))
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                rss = int(f.read().split()[1]) * PAGE
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        found[pid] = (rss, (int(fields[11]) + int(fields[12])) / TICKS, command)
    return found


def is_worker(command: str) -> bool:
    """A multi_processing worker's Python process (not the shell that starts it)."""
    return not command.startswith("/bin/sh") and ("beam_jobs.worker" in command or "sdk_worker_main" in command)


def run_measured(command: list[str], cwd: Path, interval: float = 0.2) -> dict:
    """Run `command`; its wall time, peak process-tree RSS, exit code and output's tail, and per
    worker process its peak RSS and CPU seconds (as last sampled, up to `interval` before it
    ended)."""
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
        peak, workers = 0, {}
        while process.poll() is None:
            found = tree_processes(process.pid)
            peak = max(peak, sum(rss for rss, _, _ in found.values()))
            for pid, (rss, cpu, name) in found.items():
                if is_worker(name):
                    old = workers.get(pid, (0, 0.0))
                    workers[pid] = (max(old[0], rss), max(old[1], cpu))
            time.sleep(interval)
        seconds = time.perf_counter() - start
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
    return {"seconds": seconds, "peak_rss": peak, "returncode": process.returncode, "output": output,
            "workers": list(workers.values())}


def gpt2_tokenizer(workdir: Path) -> Path:
    """GPT-2's vocabulary and merges as a tokfx tokenizer directory (what `tokfx encode` takes)."""
    directory = workdir / "gpt2-tokenizer"
    if not (directory / "tokfx.json").exists():
        from tokfx import Tokenizer
        Tokenizer.from_gpt2_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT]).save(directory)
    return directory


def commands(job: str, files: list[str], tokenizer: Path, out: Path, args) -> list[str]:
    # The installed tokfx, or the one PYTHONPATH names (`-m`: the same entry point as the command).
    tokfx = [sys.executable, "-m", "tokfx.cli"]
    beam = ["-q", f"--direct_num_workers={args.workers}", "--direct_running_mode=multi_processing"]
    pattern = str(Path(files[0]).parent / "part-*.jsonl.zst")
    if job.startswith("plain"):
        return [sys.executable, str(BENCH / "plain_encode.py"), str(tokenizer), *files, "--output-dir", str(out),
                "--workers", str(args.workers), *(["--tiktoken"] if job == "plain-tiktoken" else [])]
    if job.startswith("encode"):
        shuffle = ["--shuffle-seed", "1"] if job == "encode-shuffle" else []
        return [*tokfx, "encode", str(tokenizer), "--output-dir", str(out), "--input", pattern, *shuffle, *beam]
    sample = ["--train-sample", args.train_sample] if job == "run-sample" else []
    return [*tokfx, "run", "--input", pattern, "--output", str(out), "--vocab-size", str(args.vocab_size),
            *sample, *beam]


def tokens_written(job: str, result: dict, out: Path) -> int | None:
    """The job's own token count: the plain script prints it, the pipelines' manifest holds it."""
    try:
        if job.startswith("plain"):
            return json.loads(result["output"].strip().splitlines()[-1])["tokens"]
        return json.loads((out / "manifest.json").read_text())["totals"]["tokens"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def bench_size(megabytes: float, tokenizer: Path, args) -> dict:
    info = build(args.workdir, megabytes, args.mutate, args.seed, args.files)
    print(f"\n== {describe(info)}", flush=True)
    results: dict[str, list[dict]] = {job: [] for job in args.jobs}
    for repeat in range(args.repeats):
        order = args.jobs[repeat % len(args.jobs):] + args.jobs[:repeat % len(args.jobs)]
        for job in order:
            out = args.workdir / f"out-{job}"
            shutil.rmtree(out, ignore_errors=True)
            result = run_measured(commands(job, info["files"], tokenizer, out, args), cwd=args.workdir)
            result["tokens"] = tokens_written(job, result, out)
            shutil.rmtree(out, ignore_errors=True)
            results[job].append(result)
            status = "ok" if result["returncode"] == 0 else f"FAILED (exit {result['returncode']})"
            print(f"  repeat {repeat + 1} {job:15} {result['seconds']:8.2f} s "
                  f"{result['peak_rss'] / 1e6:8.0f} MB peak  {status}", flush=True)
            if result["returncode"] != 0:
                print("    " + "\n    ".join(result["output"].strip().splitlines()[-15:]), flush=True)
    return {"info": info, "results": results}


def start_up_steps(tokenizer: Path, args) -> None:
    """What a worker spends before its first document, step by step (bench/worker_start.py),
    in fresh interpreters: a tokfx encode worker and Beam's SDK worker alone; medians."""
    from beam_jobs.records import TokenizerFile
    from tokfx import Tokenizer

    pickled = args.workdir / "tokenizer-file.pickle"
    pickled.write_bytes(pickle.dumps(TokenizerFile.of(Tokenizer.load(tokenizer))))
    print(f"\nstart-up of one worker process, step by step (fresh interpreters, median of {args.start_repeats}):")
    print(f"  {'worker':7} {'step':28} {'CPU s':>6} {'RSS MB after':>13}")
    for kind in ("tokfx", "beam"):
        runs = []
        for _ in range(args.start_repeats):
            done = subprocess.run([sys.executable, str(BENCH / "worker_start.py"), "steps", kind, str(pickled)],
                                  cwd=args.workdir, capture_output=True, text=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        total = statistics.median(sum(step["cpu_s"] for step in run) for run in runs)
        for i, step in enumerate(runs[0]):
            print(f"  {kind:7} {step['step']:28} {statistics.median(r[i]['cpu_s'] for r in runs):6.2f}"
                  f" {statistics.median(r[i]['rss_mb'] for r in runs):13.0f}")
        print(f"  {kind:7} {'in all':28} {total:6.2f}")


def per_worker(tokenizer: Path, args) -> None:
    """`tokfx encode --output-dir` at each number of workers of --per-worker, and the floor: as
    many bare Beam SDK workers with a DoFn that only sleeps (bench/worker_start.py floor)."""
    info = build(args.workdir, args.per_worker_size, args.mutate, args.seed, args.files)
    mb = info["text_bytes"] / 1e6
    print(f"\n== per-worker cost: {describe(info)}", flush=True)
    start_up_steps(tokenizer, args)
    rows = []
    for workers in [int(n) for n in args.per_worker.split(",")]:
        for job in ("floor", "encode"):
            runs = []
            for _ in range(args.repeats):
                out = args.workdir / "out-per-worker"
                shutil.rmtree(out, ignore_errors=True)
                command = ([sys.executable, str(BENCH / "worker_start.py"), "floor", str(workers)] if job == "floor"
                           else commands("encode", info["files"], tokenizer, out, argparse.Namespace(**{**vars(args), "workers": workers})))
                result = run_measured(command, cwd=args.workdir)
                shutil.rmtree(out, ignore_errors=True)
                if result["returncode"] != 0:
                    print(f"  {job} with {workers} workers FAILED:\n    "
                          + "\n    ".join(result["output"].strip().splitlines()[-15:]), flush=True)
                    continue
                runs.append(result)
                print(f"  {job:6} {workers} workers {result['seconds']:7.2f} s {result['peak_rss'] / 1e6:6.0f} MB tree peak,"
                      f" workers' peak RSS {', '.join(f'{rss / 1e6:.0f}' for rss, _ in result['workers'])} MB,"
                      f" CPU {', '.join(f'{cpu:.1f}' for _, cpu in result['workers'])} s", flush=True)
            if runs:
                rows.append((job, workers, runs))
    print(f"\nper worker process, {mb:.0f} MB of text, median of {args.repeats} (worker figures: over all workers of all runs)")
    print(f"  {'job':7} {'workers':>7} {'wall s':>7} {'MB/s':>6} {'tree peak MB':>12} {'worker peak RSS MB':>19}"
          f" {'(max)':>6} {'worker CPU s':>12}")
    for job, workers, runs in rows:
        seconds = statistics.median(r["seconds"] for r in runs)
        rss = [w[0] / 1e6 for r in runs for w in r["workers"]]
        cpu = [w[1] for r in runs for w in r["workers"]]
        speed = f"{mb / seconds:6.2f}" if job == "encode" else f"{'-':>6}"
        print(f"  {job:7} {workers:7} {seconds:7.2f} {speed} {statistics.median(r['peak_rss'] for r in runs) / 1e6:12.0f}"
              f" {statistics.median(rss) if rss else 0:19.0f} {max(rss, default=0):6.0f} {statistics.median(cpu) if cpu else 0:12.2f}")


def summary(runs: list[dict], text_mb: float) -> dict | None:
    ok = [r for r in runs if r["returncode"] == 0]
    if not ok:
        return None
    seconds = statistics.median(r["seconds"] for r in ok)
    return {"seconds": seconds, "mb_s": text_mb / seconds, "rss_mb": statistics.median(r["peak_rss"] for r in ok) / 1e6,
            "rss_max_mb": max(r["peak_rss"] for r in ok) / 1e6, "runs": len(ok), "of": len(runs),
            "tokens": {r["tokens"] for r in ok}}


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="200,1000", help="corpus sizes in MB of text, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--vocab-size", type=int, default=32000, help="tokfx run's vocabulary")
    parser.add_argument("--train-sample", default="10%", help="run-sample's --train-sample")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tokfx-bench"),
                        help="corpora (kept), tokenizer and the jobs' outputs (deleted after each job)")
    parser.add_argument("--mutate", type=float, default=0.1, help="share of words mutated per repeated copy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", type=int, default=FILES,
                        help="the corpus's number of .jsonl.zst files (a read task each)")
    parser.add_argument("--jobs", default=",".join(JOBS), help=f"a subset of {','.join(JOBS)}, or none: ''")
    parser.add_argument("--per-worker", default="", help="the per-worker table at these numbers of workers, e.g. 1,2,4")
    parser.add_argument("--per-worker-size", type=float, default=100, help="its corpus, MB of text")
    parser.add_argument("--start-repeats", type=int, default=5, help="fresh interpreters per start-up measurement")
    args = parser.parse_args()
    args.jobs = [job for job in args.jobs.split(",") if job]
    if unknown := set(args.jobs) - set(JOBS):
        parser.error(f"unknown jobs: {', '.join(sorted(unknown))}")
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    tokenizer = gpt2_tokenizer(args.workdir)
    sizes = [float(s) for s in args.sizes.split(",")]
    print(f"tokfx pipeline benchmark: {args.workers} workers, median of {args.repeats}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} at the start; GPT-2 vocabulary for encoding, "
          f"tokfx run trains {args.vocab_size:,}")
    if args.per_worker:
        per_worker(tokenizer, args)
    if not args.jobs:
        return
    tables = {size: bench_size(size, tokenizer, args) for size in sizes}

    for size, table in tables.items():
        mb = table["info"]["text_bytes"] / 1e6
        print(f"\n{mb:.0f} MB of text ({table['info']['documents']:,} documents, {len(table['info']['files'])} .jsonl.zst files), "
              f"{args.workers} workers, median of {args.repeats}; MB/s of uncompressed text")
        print(f"  {'job':15} {'wall s':>8} {'MB/s':>7} {'peak tree RSS MB':>17} {'(max)':>7}  tokens")
        for job in args.jobs:
            s = summary(table["results"][job], mb)
            if s is None:
                print(f"  {job:15} {'FAILED':>8}")
                continue
            failed = f"  ({s['of'] - s['runs']} of {s['of']} runs failed)" if s["runs"] < s["of"] else ""
            tokens = ", ".join(f"{t:,}" if t is not None else "?" for t in sorted(s["tokens"], key=str))
            print(f"  {job:15} {s['seconds']:8.2f} {s['mb_s']:7.2f} {s['rss_mb']:17.0f} {s['rss_max_mb']:7.0f}  "
                  f"{tokens}{failed}")
        table["summary"] = {job: summary(table["results"][job], mb) for job in args.jobs}

    print("\nissue 13's targets:")
    for size, table in tables.items():
        s = table["summary"]
        speed = {job: (s[job] or {}).get("mb_s") for job in JOBS if job in s}
        print(f"  {size:g} MB: encode / plain-tokfx throughput {ratio(speed.get('encode'), speed.get('plain-tokfx'))}"
              f" (target >= 0.8 at >= 1 GB); run / encode {ratio(speed.get('run'), speed.get('encode'))} (>= 0.6);"
              f" encode / plain-tiktoken {ratio(speed.get('encode'), speed.get('plain-tiktoken'))};"
              f" run-sample / run {ratio(speed.get('run-sample'), speed.get('run'))}"
              f" (--train-sample {args.train_sample}: whole files of the {len(table['info']['files'])}, by hash);"
              f" encode-shuffle / encode {ratio(speed.get('encode-shuffle'), speed.get('encode'))}"
              f" (--shuffle-seed 1)")
    if len(sizes) > 1:
        small, large = tables[min(sizes)]["summary"], tables[max(sizes)]["summary"]
        for job in ("encode", "run"):
            if job in small and small[job] and large[job]:
                a, b = small[job]["rss_mb"], large[job]["rss_mb"]
                print(f"  peak tree RSS of {job}: {max(sizes):g} MB / {min(sizes):g} MB = {b / a:.2f} (target <= 1.2),"
                      f" {a:.0f} and {b:.0f} MB (target < 1000 MB at both)")


if __name__ == "__main__":
    main()
