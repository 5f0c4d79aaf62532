"""PathPiece on en_10M (or the corpus named with --corpus), FirstSpace pre-tokenization:

- corpus token count (the training corpus itself, special tokens split out) of PathPiece-L, BPE
  (merges), the BPE vocabulary segmented by PathPiece-L, greedy over either vocabulary,
  PathPiece-R over the PathPiece vocabulary, and PathPiece-L from an n-gram initial vocabulary;
- overlap of the PathPiece and BPE vocabularies of each size;
- construction time (initial BPE, each round on stderr with progress, total);
- Tokenizer.encode throughput of each way (native FirstSpace pre-tokenization included, one
  cold run);
- segmentation throughput of the cores (pre-tokenization excluded: the same piece ends for
  all), pathpiece-l and greedy vs BPE merges over the same BPE vocabulary, each run with a fresh
  encoder (cold piece cache), median of --repeats.

Run after installing (the installed tokfx, with its built extensions, is used):
    python bench/bench_pathpiece.py [--corpus en_10M] [--initial 65536] [--sizes 32768,16384]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from corpora import SEPARATOR, load  # noqa: E402

import tokfx  # noqa: E402
from tokfx._bpe_encode import BPEEncoder  # noqa: E402
from tokfx._path_segment import PathSegmenter  # noqa: E402
from tokfx.segmenters.bpe import base_symbol_ids  # noqa: E402

EOT = "<|endoftext|>"
PATTERN = "firstspace"


def timed(run):
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def corpus_tokens(tokenizer, docs) -> int:
    return sum(len(tokenizer.encode(doc)) for doc in docs)


def throughput(tokenizer, data: bytes, ends, repeats: int) -> dict[str, float]:
    """Median MB/s of each core over the same pieces, a fresh encoder (cold cache) per run."""
    special = set(tokenizer.special_tokens.values())
    tokens = [None if i in special else list(t) for i, t in enumerate(tokenizer.tokens)]
    ids = {tokenizer.id_to_token(i): i for i in reversed(range(tokenizer.vocab_size))}
    makers = {
        "bpe": lambda: BPEEncoder(tokenizer.merge_ids, base_symbol_ids(ids, tokenizer.alphabet)),
        "pathpiece-l": lambda: PathSegmenter(tokens, "pathpiece-l"),
        "greedy": lambda: PathSegmenter(tokens, "greedy"),
    }
    speeds = {}
    for name, make in makers.items():
        runs = []
        for _ in range(repeats):
            encoder = make()
            runs.append(len(data) / 1e6 / timed(lambda: encoder.encode_pieces(data, ends))[0])
        speeds[name] = statistics.median(runs)
    return speeds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="en_10M")
    parser.add_argument("--initial", type=int, default=65536)
    parser.add_argument("--sizes", default="32768,16384")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    text = load(args.corpus)
    docs = text.split(SEPARATOR)
    seconds, counts = timed(lambda: tokfx.count_pretokens(text, PATTERN, [EOT]))
    print(f"{args.corpus}: {len(text.encode()) / 1e6:.1f} MB, {len(docs)} documents;"
          f" {len(counts):,} distinct pre-tokens ({PATTERN}) counted in {seconds:.1f} s")

    rows = []
    for size in sizes:
        bpe_s, bpe = timed(lambda: tokfx.train(counts, "bpe", size, [EOT], PATTERN))
        print(f"\n== {size:,} tokens: PathPiece from an initial BPE vocabulary of {args.initial:,} ==",
              flush=True)
        pp_s, pathpiece = timed(lambda: tokfx.train(counts, "pathpiece", size, [EOT], PATTERN,
                                                    initial_size=args.initial, progress=True))
        print(f"PathPiece construction {pp_s:.1f} s in all (BPE to {size:,} alone: {bpe_s:.1f} s)")
        ngram_s, from_ngrams = timed(lambda: tokfx.train(counts, "pathpiece", size, [EOT], PATTERN,
                                                         initial_vocab="ngram", initial_size=args.initial))
        print(f"PathPiece from the {args.initial:,} most frequent n-grams: {ngram_s:.1f} s in all")
        ways = {
            "PathPiece-L": pathpiece,
            "BPE (merges)": bpe,
            "BPE vocab + PathPiece-L": bpe.with_segmenter("pathpiece-l"),
            "BPE vocab + greedy": bpe.with_segmenter("greedy"),
            "PathPiece vocab + greedy": pathpiece.with_segmenter("greedy"),
            "PathPiece-R": pathpiece.with_segmenter("pathpiece-r"),
            "PathPiece-L, n-gram initial": from_ngrams,
        }
        counted, seconds = {}, {}
        for name, tok in ways.items():
            seconds[name], counted[name] = timed(lambda: corpus_tokens(tok, docs))
        base = counted["BPE (merges)"]
        megabytes = len(text.encode()) / 1e6
        for name, n in counted.items():
            print(f"  {name:<28} {n:>11,} tokens  {n / base:.4f}x BPE"
                  f"  (Tokenizer.encode {megabytes / seconds[name]:.1f} MB/s, one run)")
        learned = [set(tok.tokens[:-1]) for tok in (pathpiece, bpe)]
        overlap = len(learned[0] & learned[1])
        print(f"  vocabulary overlap with BPE: {overlap:,} of {size - 1:,} ({overlap / (size - 1):.1%})")
        rows.append((size, counted, overlap))

    bpe = tokfx.train(counts, "bpe", sizes[0], [EOT], PATTERN)
    data = text.replace(EOT, "").encode()
    ends = bpe.pretokenizer.piece_ends(data)
    speeds = throughput(bpe, data, ends, args.repeats)
    print(f"\nsegmentation cores over the {sizes[0]:,}-token BPE vocabulary, {len(data) / 1e6:.1f} MB,"
          f" median of {args.repeats} cold runs:")
    for name, speed in speeds.items():
        print(f"  {name:<12} {speed:6.1f} MB/s  {speed / speeds['bpe']:.2f}x BPE")


if __name__ == "__main__":
    main()
