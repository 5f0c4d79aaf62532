"""Throughput of pre-tokenization: `regex.findall` against the native `piece_ends`, and `piece_ends`
followed by `count_pieces` into a fresh CountTable (what counting a batch costs).

    python bench/bench_pretokenize.py [--patterns gpt2 cl100k ...] [--corpora en_10M ...] [--runs 5]

MB/s are UTF-8 megabytes (2**20 bytes) per second, median of --runs runs. `regex.findall` gets the
decoded text, the native functions get its UTF-8 bytes, as each is called in the library.
"""
import argparse
import statistics
import time

import regex

from corpora import load
from tokfx import _pretokenize
from tokfx._count_table import CountTable, count_pieces
from tokfx.pre_tokenizers.patterns import PATTERNS

CORPORA = ["en_10M", "zh_5M", "ja_1M", "ko_4M"]


def median_seconds(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", nargs="+", default=["gpt2"], choices=sorted(_pretokenize.FAST_PATTERNS))
    parser.add_argument("--corpora", nargs="+", default=CORPORA)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    print("MB/s of regex.findall, piece_ends and count_pieces; then the speed-ups over regex.findall")
    print(f"{'corpus':8} {'pattern':8} {'MB':>6} {'regex':>8} {'ends':>8} {'count':>8} {'ends x':>7} {'count x':>8}")
    for corpus in args.corpora:
        text = load(corpus)
        data = text.encode("utf-8")
        megabytes = len(data) / 2**20
        for name in args.patterns:
            compiled = regex.compile(PATTERNS[name])
            regex_s = median_seconds(lambda: compiled.findall(text), args.runs)
            ends_s = median_seconds(lambda: _pretokenize.piece_ends(data, name), args.runs)
            count_s = median_seconds(lambda: count_pieces(CountTable(), data, _pretokenize.piece_ends(data, name)), args.runs)
            print(f"{corpus:8} {name:8} {megabytes:6.1f} {megabytes / regex_s:8.1f} {megabytes / ends_s:8.1f}"
                  f" {megabytes / count_s:8.1f} {regex_s / ends_s:7.1f} {regex_s / count_s:8.1f}", flush=True)


if __name__ == "__main__":
    main()
