"""Byte-pair-encoding training, the plain way: recount every pair, merge the best, repeat.

The twin of the Cython merge loop (tokfx._bpe_train); tests compare the two.
"""
from collections import Counter


def count_pairs(words: list[tuple[list[int], int]]) -> Counter:
    """Every adjacent pair, overlapping ones included (`a a a` holds (a, a) twice)."""
    pair_counts = Counter()
    for symbols, count in words:
        for pair in zip(symbols, symbols[1:]):
            pair_counts[pair] += count
    return pair_counts


def merge(symbols: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace occurrences of `pair` by `new_id`, left to right, without overlap."""
    merged, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(symbols[i])
            i += 1
    return merged


def train_merges(word_counts: dict[tuple[int, ...], int], symbol_keys: list[bytes],
                 num_merges: int) -> list[tuple[int, int]]:
    """Up to `num_merges` merges; merge i creates id len(symbol_keys) + i.

    The most frequent pair wins; ties go to the greater (key(left), key(right)), then to the
    greater (left, right). A merged token's key is its parts' keys concatenated.
    """
    keys = list(symbol_keys)
    words = [(list(symbols), count) for symbols, count in word_counts.items()]
    merges = []
    for _ in range(num_merges):
        pair_counts = count_pairs(words)
        if not pair_counts:
            break
        best = max(pair_counts, key=lambda p: (pair_counts[p], keys[p[0]], keys[p[1]], p))
        new_id = len(keys)
        keys.append(keys[best[0]] + keys[best[1]])
        merges.append(best)
        words = [(merge(symbols, best, new_id), count) for symbols, count in words]
    return merges
