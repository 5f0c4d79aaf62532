"""Throughput of sentencepiece's normalizer: tokfx.normalizers.SentencePieceNormalizer against
sentencepiece.SentencePieceNormalizer, on whole corpora and line by line; with --precompiled, the
same charsmap as a tokenizer.json's `Precompiled` normalizer (tokenizers' grapheme-cluster rule):
tokfx's step against tokenizers.normalizers.Precompiled's normalize_str.

    python bench/bench_normalize.py [--rules nmt_nfkc identity] [--corpora en_5M zh_5M ...] [--runs 5]
        [--precompiled]

MB/s are UTF-8 megabytes (2**20 bytes) per second, median of --runs runs; each side is given the
str (sentencepiece a list of lines in one call for the line-by-line column). "build" is the time
to build our normalizer (decoding the rules' trie). The outputs are compared, so a number comes
only with equal results.
"""
import argparse
import time

import base64

import sentencepiece
from tokenizers import normalizers as hf_normalizers

from bench_pretokenize import median_seconds
from corpora import load
from tokfx.formats.protobuf_wire import MessageReader
from tokfx.normalizers import SentencePieceNormalizer
from tokfx.normalizers.huggingface import huggingface_normalizer

CORPORA = ["en_5M", "zh_5M", "ja_1M", "ko_4M"]


def normalizers(rule_name: str) -> tuple[sentencepiece.SentencePieceNormalizer, SentencePieceNormalizer, float]:
    reference = sentencepiece.SentencePieceNormalizer(rule_name=rule_name)
    spec = dict((n, v) for n, _, v in MessageReader(reference.serialized_normalizer_spec(), "spec", "", {}))
    start = time.perf_counter()
    ours = SentencePieceNormalizer(spec.get(2, b""))
    return reference, ours, time.perf_counter() - start


def precompiled_rows(corpora: list[str], rule_name: str, runs: int):
    """(corpus, MB, tokfx MB/s, tokenizers MB/s, build s) of the charsmap as `Precompiled`."""
    spec = sentencepiece.SentencePieceNormalizer(rule_name=rule_name).serialized_normalizer_spec()
    charsmap = dict((n, v) for n, _, v in MessageReader(spec, "spec", "", {}))[2]
    start = time.perf_counter()
    ours = huggingface_normalizer({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    build = time.perf_counter() - start
    reference = hf_normalizers.Precompiled(charsmap)
    for corpus in corpora:
        text = load(corpus)
        lines = text.split("\n")
        assert [ours.normalize(line) for line in lines] == [reference.normalize_str(line) for line in lines]
        megabytes = len(text.encode("utf-8")) / 2**20
        speeds = [megabytes / median_seconds(run, runs) for run in (
            lambda: [ours.normalize(line) for line in lines], lambda: [reference.normalize_str(line) for line in lines])]
        yield corpus, megabytes, *speeds, build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="+", default=["nmt_nfkc", "identity"])
    parser.add_argument("--corpora", nargs="+", default=CORPORA)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--precompiled", action="store_true",
                        help="the first --rules charsmap as tokenizers' Precompiled, line by line")
    args = parser.parse_args()

    if args.precompiled:
        print(f"Precompiled ({args.rules[0]}), line by line, MB/s; build (s): the first one, with the class table")
        print(f"{'corpus':7} {'MB':>5} {'tokfx':>7} {'tokenizers':>10} {'ratio':>6} {'build':>6}")
        for corpus, megabytes, ours, peer, build in precompiled_rows(args.corpora, args.rules[0], args.runs):
            print(f"{corpus:7} {megabytes:5.1f} {ours:7.1f} {peer:10.1f} {ours / peer:6.2f} {build:6.2f}", flush=True)
        return

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
