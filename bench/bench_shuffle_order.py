"""How random `--shuffle-seed`'s order is (issue 28): `tokfx encode --output-dir --shuffle-seed`
on a small corpus of 8 files, for several seeds, against a uniform shuffle. A benchmark, not a
test: it prints, it asserts nothing.

    PYTHONPATH=. python bench/bench_shuffle_order.py [--megabytes 10] [--seeds 5] [--shard-size 1M]

For each seed: the share of adjacent documents (in the shards' order, the shards in the
manifest's order) that come from the same input file, next to what a uniformly random
permutation gives in expectation, sum n_f (n_f - 1) / (N (N - 1)) over the files f, and its
standard deviation over 2,000 permutations drawn with numpy; the longest run of one file; and,
per shard, how far each file's share of the shard is from its share of the corpus (the largest
difference, in documents). The unshuffled output's same-file share is printed as the baseline.
Corpus: bench/jsonl_corpus.py (en_10M as 3-5 KB documents, round-robin into 8 .jsonl.zst files).
"""
import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_pipeline import gpt2_tokenizer  # noqa: E402
from jsonl_corpus import build, describe  # noqa: E402

from beam_jobs.pipelines import run  # noqa: E402


def files_in_order(out: Path) -> tuple[list[str], list[list[str]]]:
    """The input file of every document in output order, and per shard."""
    manifest = json.loads((out / "manifest.json").read_text())
    shards = []
    for shard in manifest["shards"]:
        sources = pq.read_table(out / "shards" / f"{shard['name']}.parquet", columns=["source"]).column("source")
        shards.append([source.rsplit(":", 1)[0] for source in sources.to_pylist()])
    return [f for shard in shards for f in shard], shards


def same_file_share(files: list) -> float:
    return sum(a == b for a, b in zip(files, files[1:])) / (len(files) - 1)


def longest_run(files: list) -> int:
    best = run_length = 1
    for a, b in zip(files, files[1:]):
        run_length = run_length + 1 if a == b else 1
        best = max(best, run_length)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=10)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--shard-size", default="1M")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tokfx-bench"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    info = build(args.workdir, args.megabytes)
    tokenizer = gpt2_tokenizer(args.workdir)
    pattern = str(Path(info["files"][0]).parent / "part-*.jsonl.zst")
    print(describe(info))
    with tempfile.TemporaryDirectory() as tmp:
        def encode(name: str, *extra: str) -> tuple[list[str], list[list[str]]]:
            out = Path(tmp) / name
            run("encode", ["--tokenizer", str(tokenizer), "--input", pattern, "--output", str(out),
                           "--shard-size", args.shard_size, "-q", *extra])
            return files_in_order(out)

        plain, _ = encode("plain")
        sizes = Counter(plain)
        n = len(plain)
        expected = sum(k * (k - 1) for k in sizes.values()) / (n * (n - 1))
        codes = np.array([sorted(sizes).index(f) for f in plain])
        rng = np.random.default_rng(0)
        drawn = [np.mean(p[1:] == p[:-1]) for p in (rng.permutation(codes) for _ in range(2000))]
        runs = [longest_run(list(rng.permutation(codes))) for _ in range(200)]
        print(f"{n:,} documents in {len(sizes)} files; uniform shuffle: same-file share {expected:.4f}"
              f" (sd {np.std(drawn):.4f} over 2,000 permutations), longest run of one file median"
              f" {int(np.median(runs))} (max {max(runs)} over 200)")
        print(f"unshuffled: same-file share {same_file_share(plain):.4f}, longest run {longest_run(plain):,}")
        print(f"{'seed':>6} {'same-file share':>16} {'z vs uniform':>13} {'longest run':>12} {'shards':>7}"
              f" {'max |file share - corpus share| in a shard, documents':>55}")
        for seed in range(args.seeds):
            files, shards = encode(f"seed-{seed}", "--shuffle-seed", str(seed))
            share = same_file_share(files)
            worst = max(abs(Counter(shard)[f] - len(shard) * sizes[f] / n) for shard in shards for f in sizes)
            print(f"{seed:>6} {share:>16.4f} {(share - expected) / np.std(drawn):>13.2f}"
                  f" {longest_run(files):>12} {len(shards):>7} {worst:>55.1f}")


if __name__ == "__main__":
    main()
