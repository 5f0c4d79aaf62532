"""Operations on {key bytes: count} tables (pre-token or line counts)."""
from __future__ import annotations

import heapq
from collections.abc import Mapping


def add_counts(total: dict[bytes, int], part: Mapping[bytes, int]) -> dict[bytes, int]:
    """Add `part` into `total` and return it."""
    for key, n in part.items():
        total[key] = total.get(key, 0) + n
    return total


def most_frequent(counts: Mapping[bytes, int], n: int) -> dict[bytes, int]:
    """The `n` most frequent pre-tokens; ties go to the smaller pre-token, so the cut is stable."""
    if len(counts) <= n:
        return dict(counts)
    return dict(heapq.nsmallest(n, counts.items(), key=lambda kv: (-kv[1], kv[0])))
