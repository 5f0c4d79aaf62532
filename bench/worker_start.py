"""Helpers of bench_pipeline.py's per-worker table, each run in a fresh interpreter:

    python bench/worker_start.py steps tokfx TOKENIZER_PICKLE  # a tokfx worker's start-up, step by step
    python bench/worker_start.py steps beam                  # Beam's SDK worker alone (the floor)
    python bench/worker_start.py floor N                     # a pipeline of N bare SDK workers

`steps` does, in one process, what a `tokfx encode --output-dir` worker does before its first
document (beam_jobs.worker: the log set up and tokfx imported, then Beam's SDK worker; the
steps' modules, imported when their code is unpickled; the tokenizer, built from the bytes that
travel in the graph: a pickled beam_jobs.records.TokenizerFile) and prints one JSON line: the CPU seconds (user + system) and RSS after
each step. `beam` stops after Beam's SDK worker module. `floor` runs N multi_processing workers
of Beam's own command on the FnApiRunner with a DoFn that does nothing but wait for 0.5 s per
element (so that every worker gets some), for the process-tree RSS measured around it.
"""
import json
import os
import pickle
import sys
import time


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def steps(kind: str, tokenizer_pickle: str | None) -> None:
    out, last = [], 0.0

    def mark(step: str) -> None:
        nonlocal last
        cpu = _cpu()
        out.append({"step": step, "cpu_s": cpu - last, "rss_mb": _rss_mb()})
        last = cpu

    mark("interpreter")
    if kind == "tokfx":
        import beam_jobs.worker  # noqa: F401
        import tokfx  # noqa: F401
        mark("beam_jobs.worker, tokfx")
    from apache_beam.runners.worker import sdk_worker_main  # noqa: F401
    mark("Beam's SDK worker")
    if kind == "tokfx":
        import beam_jobs.encode  # noqa: F401
        import beam_jobs.manifest  # noqa: F401
        import beam_jobs.records  # noqa: F401
        mark("the steps' modules")
        with open(tokenizer_pickle, "rb") as f:
            tokenizer = pickle.load(f).load()
        # The RSS with the tokenizer held, as a worker holds it (before 2026-11-27 it was dropped
        # first: what its building left behind was counted, not the tokenizer).
        mark("tokenizer loaded")
        del tokenizer
    print(json.dumps(out))


def floor(workers: int) -> None:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    options = PipelineOptions(["--runner=FnApiRunner", f"--direct_num_workers={workers}",
                               "--direct_running_mode=multi_processing"])
    with beam.Pipeline(options=options) as p:
        (p | beam.Create(range(4 * workers)) | beam.Reshuffle() | beam.Map(lambda x: time.sleep(0.5) or x))


if __name__ == "__main__":
    if sys.argv[1] == "steps":
        steps(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        floor(int(sys.argv[2]))
