"""Token embeddings for SaGe: skip-gram word2vec (gensim, the optional extra `tokfx[sage]`) over
pieces tokenized into token ids, each piece a sentence repeated its count times (shuffled).

SaGe's own code trains on the corpus lines, as `context="line"` does (a sentence is a line); with
`context="pretoken"` a sentence is one pre-token and word2vec's context never crosses a pre-token
*(ours)*. Tokens that
never occur get small uniform vectors in [-0.5/dim, 0.5/dim), as the official code does.
"""
from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

# The official SaGe 2.0 settings (word2vec skip-gram); gensim's other defaults are kept.
DIMENSION = 50
WINDOW = 5
NEGATIVE = 15
ALPHA = 0.025
MIN_COUNT = 1
EPOCHS = 5


class RepeatedSentences:
    """Each sentence `counts[k]` times, all occurrences in one seeded random order (so that
    word2vec's decaying learning rate does not meet a frequent piece in one run); iterable again
    for every epoch."""

    def __init__(self, sentences: Sequence[list[str]], counts: Sequence[int], seed: int):
        self.sentences = sentences
        self.order = np.random.default_rng(seed).permutation(
            np.repeat(np.arange(len(sentences)), np.asarray(counts, dtype=np.int64)))

    def __iter__(self):
        sentences = self.sentences
        for k in self.order.tolist():
            yield sentences[k]


def _stable_hash(text: str) -> int:
    # gensim seeds each initial vector from hashfxn(word + seed); Python's str hash changes
    # from process to process, so it would make training irreproducible.
    return zlib.crc32(text.encode())


def train_embeddings(pieces_ids: Sequence[Sequence[int]], counts: Sequence[int], vocab_size: int,
                     seed: int = 0) -> np.ndarray:
    """(vocab_size, DIMENSION) float64 embeddings by token id, from the tokenized pieces."""
    try:
        from gensim.models import Word2Vec
    except ImportError:
        raise ImportError("the sage trainer needs gensim: pip install 'tokfx[sage]'") from None
    sentences = [[str(i) for i in ids] for ids in pieces_ids]
    # One worker: gensim's result is reproducible for a seed only then.
    model = Word2Vec(RepeatedSentences(sentences, counts, seed), vector_size=DIMENSION, window=WINDOW,
                     negative=NEGATIVE, alpha=ALPHA, min_count=MIN_COUNT, sg=1, epochs=EPOCHS,
                     workers=1, seed=seed, hashfxn=_stable_hash)
    rng = np.random.default_rng(seed)
    embeddings = rng.uniform(-0.5 / DIMENSION, 0.5 / DIMENSION, size=(vocab_size, DIMENSION))
    for key, row in model.wv.key_to_index.items():
        embeddings[int(key)] = model.wv.vectors[row]
    return embeddings
