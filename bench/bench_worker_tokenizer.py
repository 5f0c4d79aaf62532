"""The tokenizer a pipeline worker unpickles (issue 28): its memory and its encoding CPU, for
checkouts side by side, alternated in the same run.

    python bench/bench_worker_tokenizer.py TOKENIZER_DIR CORPUS_DIR --checkouts A,B [--repeats 3]

Each repeat runs, for each checkout in turn (PYTHONPATH=checkout), one fresh interpreter that
does what a worker does with the tokenizer (beam_jobs.records.TokenizerFile.load): unpickle it
(a pickle that checkout made of TOKENIZER_DIR), then encode the `text` of every document of the
`.jsonl.zst` files of CORPUS_DIR with `encode_to_array`, as beam_jobs.encode does. Reported:
the RSS the unpickling adds (after the imports) and its CPU seconds; the encoding's CPU seconds
(time.process_time around the encode calls only, not reading or parsing) and MB/s of text; the
process's RSS at the end (the tokenizer with its piece cache filled, the last file's texts
freed) and its peak RSS (VmHWM), which includes a file's texts as read (one file at a time).
Medians over the repeats, and each checkout's encode CPU as a ratio to the first's.
"""
import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _status_mb(field: str) -> float:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def child_pickle(tokenizer_dir: str, out: str) -> None:
    from tokfx import Tokenizer

    Path(out).write_bytes(pickle.dumps(Tokenizer.load(tokenizer_dir), pickle.HIGHEST_PROTOCOL))


def child_measure(pickle_file: str, corpus_dir: str) -> None:
    import zstandard

    import tokfx  # noqa: F401  (the imports' memory is not the tokenizer's)
    import tokfx.tokenizer  # noqa: F401

    data = Path(pickle_file).read_bytes()
    rss, cpu = _status_mb("VmRSS"), time.process_time()
    tokenizer = pickle.loads(data)
    load_cpu, load_rss = time.process_time() - cpu, _status_mb("VmRSS") - rss
    del data
    encode_cpu, text_bytes, ids = 0.0, 0, 0
    for path in sorted(Path(corpus_dir).glob("*.jsonl.zst")):
        with open(path, "rb") as f:
            raw = zstandard.ZstdDecompressor().stream_reader(f).read()
        texts = [json.loads(line)["text"] for line in raw.splitlines()]
        del raw
        text_bytes += sum(len(t.encode("utf-8")) for t in texts)
        start = time.process_time()
        for text in texts:
            ids += len(tokenizer.encode_to_array(text))
        encode_cpu += time.process_time() - start
        del texts
    print(json.dumps({"load_rss": load_rss, "load_cpu": load_cpu, "encode_cpu": encode_cpu,
                      "mb": text_bytes / 1e6, "ids": ids, "end_rss": _status_mb("VmRSS"),
                      "peak_rss": _status_mb("VmHWM")}))


def run(checkout: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": checkout}
    return subprocess.run([sys.executable, __file__, *args], env=env, check=True, capture_output=True,
                          text=True, cwd=tempfile.gettempdir()).stdout


def main() -> None:
    if sys.argv[1:2] == ["--child-pickle"]:
        return child_pickle(*sys.argv[2:])
    if sys.argv[1:2] == ["--child-measure"]:
        return child_measure(*sys.argv[2:])
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_dir")
    parser.add_argument("corpus_dir")
    parser.add_argument("--checkouts", required=True, help="comma-separated checkouts (PYTHONPATH each)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    checkouts = [str(Path(c).resolve()) for c in args.checkouts.split(",")]
    results: dict[str, list[dict]] = {c: [] for c in checkouts}
    with tempfile.TemporaryDirectory() as work:
        pickles = {c: str(Path(work) / f"{i}.pickle") for i, c in enumerate(checkouts)}
        for checkout in checkouts:
            run(checkout, "--child-pickle", args.tokenizer_dir, pickles[checkout])
        for repeat in range(args.repeats):
            for checkout in checkouts:
                found = json.loads(run(checkout, "--child-measure", pickles[checkout], args.corpus_dir))
                results[checkout].append(found)
                print(f"repeat {repeat + 1} {checkout}: " + ", ".join(
                    f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in found.items()), flush=True)
    if len({r["ids"] for rs in results.values() for r in rs}) != 1:
        sys.exit("the checkouts' id counts differ: " + str({c: rs[0]["ids"] for c, rs in results.items()}))
    first = statistics.median(r["encode_cpu"] for r in results[checkouts[0]])
    print(f"\nmedians of {args.repeats}, {results[checkouts[0]][0]['mb']:.1f} MB of text,"
          f" {results[checkouts[0]][0]['ids']:,} ids, load average {os.getloadavg()[0]:.1f}")
    print(f"{'checkout':40} {'unpickle +RSS MB':>16} {'unpickle CPU s':>14} {'encode CPU s':>12}"
          f" {'MB/s':>6} {'ratio':>6} {'end RSS MB':>10} {'peak RSS MB':>11}")
    for checkout, rs in results.items():
        med = {key: statistics.median(r[key] for r in rs)
               for key in ("load_rss", "load_cpu", "encode_cpu", "end_rss", "peak_rss")}
        print(f"{checkout:40} {med['load_rss']:16.1f} {med['load_cpu']:14.3f} {med['encode_cpu']:12.2f}"
              f" {rs[0]['mb'] / med['encode_cpu']:6.1f} {med['encode_cpu'] / first:6.3f} {med['end_rss']:10.0f}"
              f" {med['peak_rss']:11.0f}")


if __name__ == "__main__":
    main()
