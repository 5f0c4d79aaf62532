"""Pure-Python twin of tokfx._bpe_train, the plain way: BPE training recounts every pair, merges
the best and repeats; Scaffold-BPE training also recounts standalone frequencies every step.
Tests compare the merges and the event logs with the core's.

A Scaffold-BPE step takes the best candidate among the pairs and the flagged tokens: a flagged
token is unflagged; a pair is merged, and each of its parts that is learned, normal and now
occurs strictly less often than the best remaining candidate is flagged scaffold.
"""
from collections import Counter

from tokfx._bpe_train import ScaffoldEvent

MERGED, FLAGGED, UNFLAGGED = ScaffoldEvent.MERGED, ScaffoldEvent.FLAGGED, ScaffoldEvent.UNFLAGGED


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


def standalone_counts(words: list[tuple[list[int], int]]) -> Counter:
    """How often each token occurs as a whole symbol of the words."""
    counts = Counter()
    for symbols, count in words:
        for symbol in symbols:
            counts[symbol] += count
    return counts


def candidates(words, keys, scaffold) -> list[tuple]:
    """(count, key, key, left, right) of every pair, and of every flagged token as the pair
    (token, "") with id -1 on the right: max() is BPE's tie rule over both."""
    pair_counts, frequency = count_pairs(words), standalone_counts(words)
    return ([(count, keys[left], keys[right], left, right) for (left, right), count in pair_counts.items()]
            + [(frequency[token], keys[token], b"", token, -1) for token in scaffold])


def train_scaffold_merges(word_counts: dict[tuple[int, ...], int], symbol_keys: list[bytes],
                          num_normal: int) -> list[tuple[int, int, int, int]]:
    """The event log until `num_normal` learned tokens are normal; events as the core's."""
    keys = list(symbol_keys)
    words = [(list(symbols), count) for symbols, count in word_counts.items()]
    scaffold: set[int] = set()
    normal, log = 0, []
    while normal < num_normal:
        best = max(candidates(words, keys, scaffold), default=None)
        if best is None:
            break
        count, _, _, left, right = best
        if right == -1:
            scaffold.remove(left)
            log.append((UNFLAGGED, left, count, 0))
            normal += 1
            continue
        new_id = len(keys)
        keys.append(keys[left] + keys[right])
        log.append((MERGED, left, right, count))
        words = [(merge(symbols, (left, right), new_id), n) for symbols, n in words]
        normal += 1
        head = max((c[0] for c in candidates(words, keys, scaffold)), default=0)
        frequency = standalone_counts(words)
        for part in dict.fromkeys((left, right)):
            if part >= len(symbol_keys) and part not in scaffold and frequency[part] < head:
                scaffold.add(part)
                log.append((FLAGGED, part, frequency[part], head))
                normal -= 1
    return log
