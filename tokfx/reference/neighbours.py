"""Pure-Python twin of ext/_neighbours.pyx: distinct neighbours within a window, per token."""
from collections.abc import Sequence


def distinct_neighbours(sequences: Sequence[Sequence[int]], window: int, vocab_size: int) -> list[int]:
    """For each id, how many distinct ids occur within `window` positions of one of its
    occurrences (the occurrence itself excluded), each sequence on its own."""
    seen: list[set[int]] = [set() for _ in range(vocab_size)]
    for ids in sequences:
        for i, token in enumerate(ids):
            seen[token].update(ids[max(0, i - window):i], ids[i + 1:i + 1 + window])
    return [len(s) for s in seen]
