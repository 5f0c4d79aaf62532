"""Pure-Python twin of tokfx._bpe_train.train_wordpiece_merges, the plain way: every step
recounts every pair and every token's standalone frequency, merges the pair with the highest
count(ab) / (count(a) count(b)) (an exact fraction) and repeats. Tests compare the merges with
the core's."""
from fractions import Fraction

from tokfx.reference.bpe_train import count_pairs, merge, standalone_counts


def train_merges(word_counts: dict[tuple[int, ...], int], symbol_keys: list[bytes],
                 num_merges: int) -> list[tuple[int, int]]:
    """Up to `num_merges` merges; merge i creates id len(symbol_keys) + i.

    The highest score wins; ties go to the higher count(ab), then to the greater (key(left),
    key(right)), then to the greater (left, right). A merged token's key is its parts' keys
    concatenated.
    """
    keys = list(symbol_keys)
    words = [(list(symbols), count) for symbols, count in word_counts.items()]
    merges = []
    for _ in range(num_merges):
        pair_counts = count_pairs(words)
        if not pair_counts:
            break
        alone = standalone_counts(words)

        def rank(p):
            count = pair_counts[p]
            return Fraction(count, alone[p[0]] * alone[p[1]]), count, keys[p[0]], keys[p[1]], p

        best = max(pair_counts, key=rank)
        new_id = len(keys)
        keys.append(keys[best[0]] + keys[best[1]])
        merges.append(best)
        words = [(merge(symbols, best, new_id), count) for symbols, count in words]
    return merges
