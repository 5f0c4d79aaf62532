"""Time the BPE merge loop alone (pre-token counting excluded) on en_10M and zh_5M at 32K vocab.

Run from the repository root after building: python bench/bench_train_core.py
rustbpe, when installed, is timed on the same text; it can only train from text, so its time
includes its own (parallel) pre-tokenization and counting and the ratio flatters us.
"""
import resource
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load  # noqa: E402

from tokfx.bpe_trainer import train_bpe_merges  # noqa: E402
from tokfx.patterns import GPT2  # noqa: E402

VOCAB_SIZE = 32_000
SPECIAL = "<|endoftext|>"
NUM_MERGES = VOCAB_SIZE - 256 - 1
REPEATS = 3


def pretoken_counts(text: str) -> Counter:
    pattern = regex.compile(GPT2)
    counts = Counter()
    for chunk in text.split(SPECIAL):
        counts.update(m.encode("utf-8") for m in pattern.findall(chunk))
    return counts


def median_seconds(run) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rustbpe_seconds(text: str) -> float | None:
    try:
        import rustbpe
    except ImportError:
        return None
    chunks = text.split(SPECIAL)
    # rustbpe's vocab_size counts the 256 bytes and its merges; it has no special tokens.
    return median_seconds(lambda: rustbpe.Tokenizer().train_from_iterator(
        iter(chunks), VOCAB_SIZE - 1, pattern=GPT2))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    for name in ("en_10M", "zh_5M"):
        text = load(name)
        counts = pretoken_counts(text)
        rss_before = peak_rss_mb()
        merges = train_bpe_merges(counts, NUM_MERGES)
        ours = median_seconds(lambda: train_bpe_merges(counts, NUM_MERGES))
        print(f"{name}: {len(counts):,} unique pre-tokens, {sum(map(len, counts)):,} bytes; "
              f"{len(merges):,} merges in {ours:.3f} s (median of {REPEATS}), "
              f"peak RSS {peak_rss_mb():.0f} MB (before training {rss_before:.0f} MB)")
        theirs = rustbpe_seconds(text)
        if theirs is not None:
            print(f"{name}: rustbpe from text (counting included) {theirs:.3f} s; "
                  f"rustbpe / tokfx = {theirs / ours:.2f}")


if __name__ == "__main__":
    main()
