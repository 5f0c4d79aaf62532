"""Pure-Python twin of tokfx._ngrams: the most frequent n-grams of a corpus's pieces."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def top_ngrams(pieces: Sequence[Sequence[int]], counts: Sequence[int], how_many: int,
               max_width: int) -> list[tuple[int, ...]]:
    """The `how_many` most frequent n-grams of 2..max_width symbols inside the pieces (each
    counted its piece's count times); most frequent first, ties by their symbols."""
    return [gram for gram, _ in top_ngram_counts(pieces, counts, how_many, max_width)]


def top_ngram_counts(pieces: Sequence[Sequence[int]], counts: Sequence[int], how_many: int,
                     max_width: int) -> list[tuple[tuple[int, ...], int]]:
    """As top_ngrams, each n-gram with its count."""
    grams: Counter = Counter()
    for piece, count in zip(pieces, counts):
        piece = tuple(piece)
        for n in range(2, min(max_width, len(piece)) + 1):
            for start in range(len(piece) - n + 1):
                grams[piece[start:start + n]] += count
    return [(g, grams[g]) for g in sorted(grams, key=lambda g: (-grams[g], g))[:how_many]]
