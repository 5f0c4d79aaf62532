"""Where a pipeline's wall time goes, stage by stage: runs a `tokfx` command in this process with
Beam's FnApiRunner timed at each stage (a fused group of steps, run on every worker), and prints
when each stage started (seconds since the command began) and how long it took.

    PYTHONPATH=. python bench/stage_times.py encode TOKENIZER --output-dir OUT --input 'DIR/*.jsonl.zst' \\
        --direct_num_workers=16 --direct_running_mode=multi_processing

The first stage also starts the workers (each imports Beam); a stage's time is the slowest of
its workers' bundles plus the runner's own work. A diagnostic, not a benchmark: it patches a
private method of Beam's runner (FnApiRunner._execute_bundle), so it may need adjusting for
another Beam version.
"""
import sys
import time

from apache_beam.runners.portability.fn_api_runner import fn_runner

from tokfx.cli.main import main

STARTED = time.perf_counter()
_execute_bundle = fn_runner.FnApiRunner._execute_bundle


def timed_execute_bundle(self, context, bundle_context, bundle_input):
    began = time.perf_counter()
    try:
        return _execute_bundle(self, context, bundle_context, bundle_input)
    finally:
        steps = bundle_context.stage.name.replace("ref_AppliedPTransform_", "").strip("()")
        print(f"stage at {began - STARTED:7.2f} s took {time.perf_counter() - began:6.2f} s: {steps[:160]}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    fn_runner.FnApiRunner._execute_bundle = timed_execute_bundle
    sys.exit(main(sys.argv[1:]))
