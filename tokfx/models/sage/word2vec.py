"""Token embeddings for SaGe: skip-gram word2vec with negative sampling (tokfx._word2vec, gensim's
algorithm on one seeded generator) over pieces tokenized into token ids, each piece a sentence
repeated its count times, all occurrences in one seeded random order (so that the decaying
learning rate does not meet a frequent piece in one run; the order is drawn as training goes,
tokfx.reference.word2vec.occurrence_order).

SaGe's own code trains gensim on the corpus lines, as `context="line"` does (a sentence is a
line); with `context="pretoken"` a sentence is one pre-token and word2vec's context never crosses
a pre-token *(ours)*. Tokens that never occur keep their initial small uniform vectors in
[-0.5/dim, 0.5/dim), as in the official code.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tokfx._word2vec import train_skipgram

# The official SaGe 2.0 settings (word2vec skip-gram), and gensim's defaults for the rest.
DIMENSION = 50
WINDOW = 5
NEGATIVE = 15
ALPHA = 0.025
MIN_ALPHA = 0.0001
EPOCHS = 5
SAMPLE = 1e-3


def initial_vectors(vocab_size: int, seed: int) -> np.ndarray:
    """float32 (vocab_size, DIMENSION), uniform in [-0.5/DIMENSION, 0.5/DIMENSION)."""
    rng = np.random.default_rng(seed)
    return (rng.random((vocab_size, DIMENSION), dtype=np.float32) - np.float32(0.5)) / np.float32(DIMENSION)


def train_embeddings(pieces_ids: Sequence[Sequence[int]], counts: Sequence[int], vocab_size: int,
                     seed: int = 0) -> np.ndarray:
    """(vocab_size, DIMENSION) float64 embeddings by token id, from the tokenized pieces."""
    lengths = np.fromiter((len(ids) for ids in pieces_ids), dtype=np.int64, count=len(pieces_ids))
    starts = np.zeros(len(pieces_ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    ids = np.fromiter((i for piece in pieces_ids for i in piece), dtype=np.int32, count=int(starts[-1]))
    vectors = initial_vectors(vocab_size, seed)
    train_skipgram(ids, starts, np.asarray(counts, dtype=np.int64), vectors, WINDOW, NEGATIVE, ALPHA, MIN_ALPHA,
                   EPOCHS, SAMPLE, seed)
    return vectors.astype(np.float64)


def nearest_neighbours(vectors: np.ndarray, rows: np.ndarray, k: int = 10) -> list[set[int]]:
    """The `k` rows of highest cosine similarity to each of `rows` (itself left out): how
    embeddings from two trainings (ours, gensim's, another seed) are compared."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similar = unit[rows] @ unit.T
    similar[np.arange(len(rows)), rows] = -np.inf
    return [set(np.argsort(-row)[:k].tolist()) for row in similar]


def neighbour_agreement(a: list[set[int]], b: list[set[int]]) -> float:
    """The mean share of neighbours two nearest_neighbours results have in common."""
    return float(np.mean([len(x & y) / len(x) for x, y in zip(a, b)]))
