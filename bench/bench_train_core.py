"""Time the BPE merge loop alone (pre-token counting excluded) on en_10M and zh_5M at 32K vocab.

Run from the repository root after building: python bench/bench_train_core.py
rustbpe, when installed, is timed on the same text. It can only train from text, so its time
includes its own (parallel) pre-tokenization and counting; a 1-merge run measures that part,
and the difference estimates its merge loop alone.
"""
import resource
import sys
from collections import Counter
from pathlib import Path

import regex

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load  # noqa: E402
from timing import median_seconds  # noqa: E402

from tokfx.models.bpe.merge_loop import train_bpe_merges  # noqa: E402
from tokfx.pre_tokenizers.patterns import GPT2  # noqa: E402

try:
    import rustbpe
except ImportError:
    rustbpe = None

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


def rustbpe_seconds(text: str, num_merges: int) -> float:
    chunks = text.split(SPECIAL)
    # rustbpe's vocab_size counts the 256 bytes and its merges; it has no special tokens.
    return median_seconds(lambda: rustbpe.Tokenizer().train_from_iterator(
        iter(chunks), 256 + num_merges, pattern=GPT2), REPEATS)


def reset_peak_rss() -> bool:
    """Restart the kernel's peak-RSS mark (Linux), so the next peak is training's own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def rss_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) from /proc/self/status, else the lifetime peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    for name in ("en_10M", "zh_5M"):
        text = load(name)
        counts = pretoken_counts(text)
        rss_before = rss_mb("VmRSS")
        exact_peak = reset_peak_rss()
        merges = train_bpe_merges(counts, NUM_MERGES)
        peak = rss_mb("VmHWM")
        ours = median_seconds(lambda: train_bpe_merges(counts, NUM_MERGES), REPEATS)
        print(f"{name}: {len(counts):,} unique pre-tokens, {sum(map(len, counts)):,} bytes; "
              f"{len(merges):,} merges in {ours:.3f} s (median of {REPEATS})")
        print(f"{name}: RSS {rss_before:.0f} MB before training, peak {peak:.0f} MB during it"
              + ("" if exact_peak else " (lifetime peak: /proc/self/clear_refs unavailable)"))
        if rustbpe is not None:
            theirs = rustbpe_seconds(text, NUM_MERGES)
            their_counting = rustbpe_seconds(text, 1)
            their_merging = theirs - their_counting
            # On a busy machine the two runs' counting times differ by more than a short
            # merge loop takes; then only the total is meaningful.
            separable = their_merging > 0.2 * theirs
            print(f"{name}: rustbpe from text {theirs:.3f} s (1-merge run, ~its counting: "
                  f"{their_counting:.3f} s); rustbpe total / tokfx = {theirs / ours:.2f}; "
                  + (f"merge loop ~{their_merging:.3f} s, / tokfx = {their_merging / ours:.2f}"
                     if separable else "merge loop not separable from counting noise"))


if __name__ == "__main__":
    main()
