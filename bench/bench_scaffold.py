"""Scaffold-BPE vs plain BPE at 8K and 32K vocab, side by side in one run.

Run from the repository root after building: python bench/bench_scaffold.py [CORPUS ALPHABET]
(default en_10M bytes; e.g. zh_5M cjk for a corpus whose merge loop takes longer).
Pre-tokens are counted once (tokfx.count_pretokens). Training time, the two alternating,
median of 7 runs' CPU time: the merge loop alone on packed input (train_merges vs
train_scaffold_merges), plus plain BPE run to as many merges as Scaffold-BPE's expanded
vocabulary needs (to separate the cost of the extra merges from the scaffold bookkeeping); and
the whole trainer from counts to Tokenizer (tokfx.train). Bytes per token: the corpus (the
training text) encoded by each. Encode speed: Tokenizer.encode of the corpus, median of 7 runs'
CPU time, the two alternating, with a fresh encoder per run (cold piece cache: every distinct
piece is merged, and for Scaffold-BPE demolished, once) and with one encoder reused (warm
cache, the steady state of a long encode job).
"""
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load  # noqa: E402

import tokfx  # noqa: E402
from tokfx import Tokenizer  # noqa: E402
from tokfx._bpe_train import train_merges, train_scaffold_merges  # noqa: E402
from tokfx.alphabet import Alphabet  # noqa: E402
from tokfx.models.bpe.merge_loop import packed_words, symbol_keys  # noqa: E402
from tokfx.formats.tokfx_json import tokenizer_to_dict  # noqa: E402

SPECIAL = "<|endoftext|>"
# CPU time (time.process_time; all of it single-threaded) of each run, median of REPEATS: on the
# shared 2-core machine wall times of these 0.05-0.3 s runs swung by 2x with other jobs' load.
REPEATS = 7


def alternating_medians(runs: dict) -> dict:
    """{name: median seconds}, running the callables in turn REPEATS times."""
    times = {name: [] for name in runs}
    for _ in range(REPEATS):
        for name, run in runs.items():
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def cold_encode(tokenizer, text):
    """A run with a fresh encoder (its own empty piece cache): only encode() is timed."""
    fresh = Tokenizer.from_dict(tokenizer_to_dict(tokenizer))
    start = time.process_time()
    fresh.encode(text)
    return time.process_time() - start


def main(corpus: str = "en_10M", alphabet_name: str = "bytes") -> None:
    text = load(corpus)
    alphabet = Alphabet.named(alphabet_name)
    keys = symbol_keys(alphabet)
    size_mb = len(text.encode("utf-8")) / 1e6
    start = time.perf_counter()
    counts = tokfx.count_pretokens(text, "gpt2", [SPECIAL])
    print(f"{corpus}: {size_mb:.1f} MB, {len(counts):,} distinct pre-tokens, counted in"
          f" {time.perf_counter() - start:.1f} s; {alphabet_name} alphabet")
    words = packed_words(counts, alphabet)
    for vocab_size in (8_000, 32_000):
        learned = vocab_size - alphabet.size - 1
        bpe = tokfx.train(counts, "bpe", vocab_size, [SPECIAL], alphabet=alphabet_name)
        scaffold = tokfx.train(counts, "scaffold-bpe", vocab_size, [SPECIAL], alphabet=alphabet_name)
        vocab = scaffold.scaffold
        expanded_merges = len(vocab.merges)
        core = alternating_medians({
            "bpe": lambda: train_merges(*words, keys, learned),
            "scaffold": lambda: train_scaffold_merges(*words, keys, learned),
            "bpe_expanded": lambda: train_merges(*words, keys, expanded_merges),
        })
        trainer = alternating_medians({
            "bpe": lambda: tokfx.train(counts, "bpe", vocab_size, [SPECIAL], alphabet=alphabet_name),
            "scaffold": lambda: tokfx.train(counts, "scaffold-bpe", vocab_size, [SPECIAL],
                                            alphabet=alphabet_name),
        })
        bpe_ids, scaffold_ids = bpe.encode(text), scaffold.encode(text)
        assert scaffold.decode(scaffold_ids) == text
        warm = alternating_medians({"bpe": lambda: bpe.encode(text),
                                    "scaffold": lambda: scaffold.encode(text)})
        cold = {"bpe": [], "scaffold": []}
        for _ in range(REPEATS):
            cold["bpe"].append(cold_encode(bpe, text))
            cold["scaffold"].append(cold_encode(scaffold, text))
        cold = {name: statistics.median(t) for name, t in cold.items()}
        nbytes = len(text.encode("utf-8"))
        print(f"\nvocab {vocab_size:,}: expanded vocabulary {vocab.expanded_size + 1:,}"
              f" ({len(vocab.merges):,} merges), {len(vocab.scaffold):,} scaffold tokens ="
              f" {len(vocab.scaffold) / (vocab.expanded_size + 1):.2%} of it")
        print(f"  bytes/token      bpe {nbytes / len(bpe_ids):.4f}   scaffold {nbytes / len(scaffold_ids):.4f}"
              f"   ({len(scaffold_ids) / len(bpe_ids) - 1:+.2%} tokens)")
        print(f"  merge loop s     bpe {core['bpe']:.3f}   scaffold {core['scaffold']:.3f}"
              f"   ratio {core['scaffold'] / core['bpe']:.2f}x   (bpe to {expanded_merges:,} merges"
              f" {core['bpe_expanded']:.3f}: scaffold/that {core['scaffold'] / core['bpe_expanded']:.2f}x)")
        print(f"  trainer s        bpe {trainer['bpe']:.3f}   scaffold {trainer['scaffold']:.3f}"
              f"   ratio {trainer['scaffold'] / trainer['bpe']:.2f}x")
        for name, medians in (("encode cold MB/s", cold), ("encode warm MB/s", warm)):
            print(f"  {name} bpe {size_mb / medians['bpe']:.1f}   scaffold {size_mb / medians['scaffold']:.1f}"
                  f"   time ratio {medians['scaffold'] / medians['bpe']:.2f}x")


if __name__ == "__main__":
    main(*sys.argv[1:])
