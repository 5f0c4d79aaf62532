"""The cjk alphabet against bytes: base symbols/char, tokens/char, Rényi efficiency, training time.

For each corpus, pre-token counts once (GPT-2 pattern, <|endoftext|> split out); then per
alphabet and vocabulary size, BPE training (process CPU time, median of --runs, counting
excluded), encoding of the same corpus, and the metrics of tokfx.eval.metrics over it.

    PYTHONPATH=.:bench python bench/bench_cjk.py [--corpora zh_5M ja_1M ko_4M] [--vocab 8000 32000]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpora import load  # noqa: E402

import tokfx  # noqa: E402
from tokfx.alphabet import Alphabet  # noqa: E402
from tokfx.eval.metrics import base_symbols_per_char, renyi_efficiency, token_counts  # noqa: E402

EOT = "<|endoftext|>"
KANA = (0x38, 0x39, 0x3A, 0x3B)


def alphabets(corpus: str) -> list[tuple[str, Alphabet]]:
    chosen = [("bytes", Alphabet.named("bytes")), ("cjk", Alphabet.named("cjk"))]
    if corpus.startswith("ja"):
        chosen.append(("cjk+38", Alphabet.named("cjk", KANA)))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpora", nargs="+", default=["zh_5M", "ja_1M", "ko_4M"])
    parser.add_argument("--vocab", nargs="+", type=int, default=[8000, 32000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'corpus':7} {'alphabet':8} {'vocab':>6} {'sym/char':>9} {'tok/char':>9} "
          f"{'renyi2.5':>9} {'train s':>8} {'vs bytes':>9}")
    for corpus in args.corpora:
        text = load(corpus)
        docs = [d for d in text.split(EOT) if d]
        chars = sum(map(len, docs))
        counts = tokfx.count_pretokens(text, special_tokens=[EOT])
        for vocab_size in args.vocab:
            chosen = alphabets(corpus)
            seconds = {label: [] for label, _ in chosen}
            trained = {}
            # Alphabets take turns, so that load from other jobs falls on all of them alike.
            for _ in range(args.runs):
                for label, alphabet in chosen:
                    start = time.process_time()
                    trained[label] = tokfx.train(counts, vocab_size=vocab_size, special_tokens=[EOT],
                                                 alphabet=alphabet.name, cjk_groups=alphabet.groups or None)
                    seconds[label].append(time.process_time() - start)
            byte_seconds = statistics.median(seconds["bytes"])
            for label, alphabet in chosen:
                tok = trained[label]
                symbols = sum(base_symbols_per_char(d, alphabet) * len(d) for d in docs) / chars
                outputs = [tok.encode_ordinary(d) for d in docs]
                assert all(tok.decode(ids) == d for ids, d in zip(outputs, docs))
                tokens = sum(map(len, outputs))
                efficiency = renyi_efficiency(token_counts(outputs), tok.vocab_size)
                median = statistics.median(seconds[label])
                print(f"{corpus:7} {label:8} {vocab_size:6} {symbols:9.3f} {tokens / chars:9.3f} "
                      f"{efficiency:9.3f} {median:8.2f} {median / byte_seconds:8.2f}x", flush=True)

if __name__ == "__main__":
    main()
