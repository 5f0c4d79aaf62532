"""Pure-Python twin of tokfx._training_steps, the trainers' steps around their cores: each
as the trainer did it in numpy before (the cuts and the line ends), or as plainly as it can be
said, so that the core must give the numbers the trainer gave."""
from __future__ import annotations

import math
from collections.abc import Sequence


def symbol_counts(symbols: Sequence[int], offsets: Sequence[int], counts: Sequence[int],
                  alphabet_size: int) -> list[int]:
    found = [0] * alphabet_size
    for k, count in enumerate(counts):
        for s in symbols[offsets[k]:offsets[k + 1]]:
            if 0 <= s < alphabet_size:
                found[s] += count
    return found


def fallback_apart(symbols: Sequence[int], offsets: Sequence[int], counts: Sequence[int],
                   char_base: int) -> tuple[list[int], list[int]]:
    """The numpy code of tokfx.models.bpe.merge_loop before the core: every piece start, and
    the positions before and after a fallback symbol, are cuts; a cut's count is that of the
    piece it falls in."""
    import numpy as np

    found = np.asarray(symbols, dtype=np.int32)
    ends = np.asarray(offsets, dtype=np.int64)
    fallback = found < char_base
    starts = np.zeros(len(found) + 1, dtype=bool)
    starts[ends] = True
    starts[:-1] |= fallback
    starts[1:-1] |= fallback[:-1]
    cut = np.flatnonzero(starts)
    word = np.searchsorted(ends, cut[:-1], side="right") - 1
    return cut.tolist(), np.asarray(counts, dtype=np.int64)[word].tolist()


def piece_ends_counts(pretoken_offsets: Sequence[int], piece_offsets: Sequence[int],
                      per_pretoken: Sequence[int]) -> list[int]:
    """The numpy code of tokfx.models.unigram.piece_line_ends before the core."""
    import numpy as np

    starts = np.asarray(pretoken_offsets, dtype=np.int64)
    piece_ends = np.asarray(piece_offsets, dtype=np.int64)[1:]
    key = np.searchsorted(starts, piece_ends) - 1
    last = starts[key + 1] == piece_ends
    return np.where(last, np.asarray(per_pretoken, dtype=np.int64)[key], 0).tolist()


def below_threshold(expected: Sequence[float], first: int, n: int, threshold: float) -> list[int]:
    return [i for i in range(first, n) if expected[i] < threshold]


def kept_expected(expected: Sequence[float], n: int, dropped, threshold: float):
    dropped = set(dropped)
    ids = [i for i in range(n) if i not in dropped]
    values = [expected[i] for i in ids]
    counted = [v >= threshold for v in values]
    total = 0.0  # left to right, as Python 3.11's sum (3.12's compensates)
    for v in values:
        if v >= threshold:
            total += v
    return ids, values, counted, total


def floored(scores: Sequence[float], minus: float, estimated: Sequence[bool], below: float) -> list[float]:
    lowest = min((s - minus for s, e in zip(scores, estimated) if e), default=0.0)
    return [s - minus if e else lowest - below for s, e in zip(scores, estimated)]


def key_order(kinds: Sequence[int], values: Sequence[float], first: int) -> tuple[list[int], list[tuple[int, int]]]:
    def key(i):
        return kinds[i], (math.isnan(values[i]), 0.0 if math.isnan(values[i]) else values[i])

    ids = sorted(range(first, len(kinds)), key=key)
    runs, start = [], 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or kinds[ids[i]] != kinds[ids[start]] or values[ids[i]] != values[ids[start]]:
            if i - start > 1:
                runs.append((start, i))
            start = i
    return ids, runs
