"""Where tokfx's encode of a sentencepiece model (Unigram or BPE) spends its time, beside
sentencepiece's own encode: CPU seconds per stage, which a loaded machine moves less than wall time.

    PYTHONPATH=.:bench:tests python bench/bench_spm_stages.py [--models unigram bpe] [--chars 2000000] [--runs 5]

The models are bench_byo.py's (8,000 pieces trained on en_10M's first 2 MB, with and without
byte fallback); each corpus's first --chars characters as documents of about 4 KB, one call each.
Stages: normalize (the pre-tokenizer's normalized text), utf8 (its UTF-8 encode), pretok (the
pre-tokenizer's piece ends on it: sentencepiece's whitespace split), segment (the encoder core's
encode_pieces on it: symbols, Viterbi, merges or cached pieces, the list of ids), total
(Tokenizer.encode), spm (SentencePieceProcessor.encode). Best of --runs, time.process_time.
"""
import argparse
import tempfile
import time

import sentencepiece

from bench_byo import documents
from corpora import load
from tokfx import Tokenizer


def cpu_seconds(run, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["unigram"], choices=["unigram", "bpe"])
    parser.add_argument("--corpora", nargs="+", default=["en_10M", "zh_5M"])
    parser.add_argument("--chars", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    lines = load("en_10M")[:2_000_000].splitlines()
    print(f"{'model':14} {'corpus':8} {'normalize':>9} {'utf8':>6} {'pretok':>6} {'segment':>8} {'total':>6}"
          f" {'spm':>6} {'spm/tokfx':>9}")
    with tempfile.TemporaryDirectory() as directory:
        models = {}
        for model_type in args.models:
            for fallback in (True, False):
                prefix = f"{directory}/{model_type}-{fallback}"
                sentencepiece.SentencePieceTrainer.train(
                    sentence_iterator=iter(lines), model_prefix=prefix, model_type=model_type, vocab_size=8000,
                    byte_fallback=fallback, character_coverage=0.9995, num_threads=2, minloglevel=2)
                models[f"{model_type} {'bytes' if fallback else 'unk'}"] = f"{prefix}.model"
        for corpus in args.corpora:
            docs = documents(load(corpus)[:args.chars])
            for name, path in models.items():
                ours, peer = Tokenizer.load(path), sentencepiece.SentencePieceProcessor(model_file=path)
                if [ours.encode(d) for d in docs] != [peer.encode(d) for d in docs]:
                    raise SystemExit(f"{name} {corpus}: tokfx and sentencepiece give different ids")
                normalized = [ours.pretokenizer.normalized(d) for d in docs]
                data = [n.encode("utf-8") for n in normalized]
                ends = [ours.pretokenizer.piece_ends(d) for d in data]
                encoder = ours._encoder
                # A float32 Unigram takes the running score it starts from; BPE takes none.
                score = (0.0,) if name.startswith("unigram") else ()
                times = [cpu_seconds(run, args.runs) for run in (
                    lambda: [ours.pretokenizer.normalized(d) for d in docs],
                    lambda: [n.encode("utf-8") for n in normalized],
                    lambda: [ours.pretokenizer.piece_ends(d) for d in data],
                    lambda: [encoder.encode_pieces(d, e, False, *score) for d, e in zip(data, ends)],
                    lambda: [ours.encode(d) for d in docs],
                    lambda: [peer.encode(d) for d in docs])]
                print(f"{name:14} {corpus:8} {times[0]:9.3f} {times[1]:6.3f} {times[2]:6.3f} {times[3]:8.3f}"
                      f" {times[4]:6.3f} {times[5]:6.3f} {times[5] / times[4]:9.2f}", flush=True)


if __name__ == "__main__":
    main()
