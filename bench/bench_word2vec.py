"""SaGe's word2vec: ours (tokfx._word2vec) against gensim's Word2Vec, one worker each, same
settings (skip-gram, dimension 50, window 5, 15 negatives, alpha 0.025, min count 1, 5 epochs),
same sentences in the same order: the lines of the SaGe anchor corpus (bench_sage.py) encoded
by our BPE of --vocab-size tokens. Prints the medians of --runs wall
times, their ratio, and how much the 10 nearest neighbours of the 200 most frequent tokens agree
(ours vs gensim, against gensim seed 1 vs seed 2: the noise floor).

    cd /tmp && /path/to/.venv/bin/python /path/to/bench/bench_word2vec.py [--runs 3] [--vocab-size 4096]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_sage import anchor_text  # noqa: E402

import tokfx  # noqa: E402
from tokfx.models.sage.word2vec import (ALPHA, DIMENSION, EPOCHS, NEGATIVE, WINDOW, initial_vectors,  # noqa: E402
                            nearest_neighbours, neighbour_agreement, train_embeddings)
from tokfx.reference.word2vec import occurrence_order  # noqa: E402


def gensim_embeddings(ordered: list[list[str]], vocab_size: int, seed: int) -> np.ndarray:
    """gensim's word2vec over the sentences as words, in our order (made outside the timing)."""
    from gensim.models import Word2Vec
    model = Word2Vec(ordered, vector_size=DIMENSION, window=WINDOW, negative=NEGATIVE, alpha=ALPHA, min_count=1,
                     sg=1, epochs=EPOCHS, workers=1, seed=seed)
    out = initial_vectors(vocab_size, seed).astype(np.float64)
    for key, row in model.wv.key_to_index.items():
        out[int(key)] = model.wv.vectors[row]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--vocab-size", type=int, default=4096)
    args = parser.parse_args()
    text = anchor_text()
    tokenizer = tokfx.train(text, "bpe", vocab_size=args.vocab_size, special_tokens=())
    sentences = [tokenizer.encode(line) for line in text.splitlines() if line.strip()]
    print(f"anchor corpus: {len(text.encode()):,} bytes, {len(sentences):,} lines, "
          f"{sum(map(len, sentences)):,} tokens (BPE {args.vocab_size:,}); x {EPOCHS} epochs")
    times = {"gensim": [], "ours": []}
    vectors = {}
    for run in range(args.runs):
        ordered = [[str(i) for i in sentences[k]] for k in occurrence_order([1] * len(sentences), run + 1)]
        for name in ("gensim", "ours"):
            start = time.perf_counter()
            if name == "gensim":
                vectors[name, run] = gensim_embeddings(ordered, args.vocab_size, run + 1)
            else:
                vectors[name, run] = train_embeddings(sentences, [1] * len(sentences), args.vocab_size, run + 1)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, t in times.items():
        print(f"{name:7s} {medians[name]:6.2f} s (median of {args.runs}: {', '.join(f'{s:.2f}' for s in t)})")
    print(f"ours / gensim time: {medians['ours'] / medians['gensim']:.2f} "
          f"({medians['gensim'] / medians['ours']:.1f}x faster)")
    frequency = np.bincount([i for s in sentences for i in s], minlength=args.vocab_size)
    frequent = np.argsort(-frequency)[:200]
    near = {key: nearest_neighbours(v, frequent) for key, v in vectors.items()}
    if args.runs >= 2:
        agree = neighbour_agreement
        across = np.mean([agree(near["ours", a], near["gensim", b]) for a in range(2) for b in range(2)])
        print(f"10-nearest-neighbour agreement: gensim seed 1 vs 2 {agree(near['gensim', 0], near['gensim', 1]):.3f},"
              f" ours seed 1 vs 2 {agree(near['ours', 0], near['ours', 1]):.3f}, ours vs gensim {across:.3f}")


if __name__ == "__main__":
    main()
