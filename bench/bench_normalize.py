"""Throughput of sentencepiece's normalizer: tokfx.normalizers.SentencePieceNormalizer against
sentencepiece.SentencePieceNormalizer, on whole corpora and line by line.

    python bench/bench_normalize.py [--rules nmt_nfkc identity] [--corpora en_5M zh_5M ...] [--runs 5]

MB/s are UTF-8 megabytes (2**20 bytes) per second, median of --runs runs; each side is given the
str (sentencepiece a list of lines in one call for the line-by-line column). "build" is the time
to build our normalizer (decoding the rules' trie). The outputs are compared, so a number comes
only with equal results.
"""
import argparse
import time

import sentencepiece

from bench_pretokenize import median_seconds
from corpora import load
from tokfx.formats.protobuf_wire import MessageReader
from tokfx.normalizers import SentencePieceNormalizer

CORPORA = ["en_5M", "zh_5M", "ja_1M", "ko_4M"]


def normalizers(rule_name: str) -> tuple[sentencepiece.SentencePieceNormalizer, SentencePieceNormalizer, float]:
    reference = sentencepiece.SentencePieceNormalizer(rule_name=rule_name)
    spec = dict((n, v) for n, _, v in MessageReader(reference.serialized_normalizer_spec(), "spec", "", {}))
    start = time.perf_counter()
    ours = SentencePieceNormalizer(spec.get(2, b""))
    return reference, ours, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="+", default=["nmt_nfkc", "identity"])
    parser.add_argument("--corpora", nargs="+", default=CORPORA)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    print("MB/s: tokfx and sentencepiece, on the whole text and line by line; build: seconds")
    print(f"{'corpus':7} {'rules':9} {'MB':>5} {'tokfx':>7} {'spm':>7} {'tokfx/l':>8} {'spm/l':>7} {'build':>6}")
    for corpus in args.corpora:
        text = load(corpus)
        lines = text.split("\n")
        megabytes = len(text.encode("utf-8")) / 2**20
        for rule_name in args.rules:
            reference, ours, build = normalizers(rule_name)
            assert ours.normalize(text) == reference.normalize(text)
            assert [ours.normalize(line) for line in lines] == reference.normalize(lines)
            speeds = [megabytes / median_seconds(run, args.runs) for run in (
                lambda: ours.normalize(text), lambda: reference.normalize(text),
                lambda: [ours.normalize(line) for line in lines], lambda: reference.normalize(lines))]
            print(f"{corpus:7} {rule_name:9} {megabytes:5.1f} {speeds[0]:7.1f} {speeds[1]:7.1f} {speeds[2]:8.1f}"
                  f" {speeds[3]:7.1f} {build:6.2f}", flush=True)


if __name__ == "__main__":
    main()
