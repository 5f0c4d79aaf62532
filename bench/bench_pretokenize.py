"""Throughput of pre-tokenization: `regex.findall` against the native `piece_ends`, and `piece_ends`
followed by `count_pieces` into a fresh CountTable (what counting a batch costs).

    python bench/bench_pretokenize.py [--patterns gpt2 cl100k ...] [--corpora en_10M ...] [--runs 5]
    python bench/bench_pretokenize.py --side-by-side [--patterns qwen2 ... deepseek-v3] [--corpora en_10M zh_5M]

MB/s are UTF-8 megabytes (2**20 bytes) per second, median of --runs runs. `regex.findall` gets the
decoded text, the native functions get its UTF-8 bytes, as each is called in the library.
--side-by-side: one row a pattern, regex.findall and the native piece_ends on each corpus side by
side (by default the patterns of open models' tokenizer files, and DeepSeek V3's sequence of
three: `sequence_piece_ends` against regex.findall over each stage's pieces in turn).
"""
import argparse

import regex

from corpora import load
from timing import median_seconds
from tokfx import _pretokenize
from tokfx._count_table import CountTable, count_pieces
from tokfx.pre_tokenizers import sequence_piece_ends
from tokfx.pre_tokenizers.patterns import DEEPSEEK_V3_SPLITS, PATTERNS

CORPORA = ["en_10M", "zh_5M", "ja_1M", "ko_4M"]
# Named sequences of named patterns (a Hugging Face Sequence of Splits).
SEQUENCES = {"deepseek-v3": DEEPSEEK_V3_SPLITS}
SIDE_BY_SIDE_PATTERNS = ["qwen2", "tekken", "digits-1-3", "cjk-runs", "deepseek", "digits", "deepseek-v3"]


def regex_stages(names, text: str):
    """A run of regex.findall over each stage's pieces in turn."""
    compiled = [regex.compile(PATTERNS[name]) for name in names]

    def run():
        pieces = [text]
        for pattern in compiled:
            pieces = [piece for previous in pieces for piece in pattern.findall(previous)]
        return pieces
    return run


def side_by_side(patterns, corpora, runs: int) -> None:
    texts = {corpus: load(corpus) for corpus in corpora}
    print("MB/s of regex.findall and the native splitter (piece_ends; sequence_piece_ends for a"
          " sequence), and the speed-up, on each corpus")
    print(f"{'pattern':12}" + "".join(f" {corpus + ' regex':>14} {'native':>8} {'x':>6}" for corpus in corpora))
    for name in patterns:
        names = SEQUENCES.get(name, (name,))
        row = f"{name:12}"
        for corpus in corpora:
            text = texts[corpus]
            data = text.encode("utf-8")
            megabytes = len(data) / 2**20
            regex_s = median_seconds(regex_stages(names, text), runs)
            native_s = median_seconds(lambda: sequence_piece_ends(data, names), runs)
            row += f" {megabytes / regex_s:14.1f} {megabytes / native_s:8.1f} {regex_s / native_s:6.1f}"
        print(row, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patterns", nargs="+", choices=sorted(_pretokenize.FAST_PATTERNS | SEQUENCES.keys()))
    parser.add_argument("--corpora", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--side-by-side", action="store_true")
    args = parser.parse_args()
    if args.side_by_side:
        side_by_side(args.patterns or SIDE_BY_SIDE_PATTERNS, args.corpora or ["en_10M", "zh_5M"], args.runs)
        return
    args.patterns = args.patterns or ["gpt2"]
    args.corpora = args.corpora or CORPORA
    if SEQUENCES.keys() & set(args.patterns):
        parser.error("a sequence runs only with --side-by-side")

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
