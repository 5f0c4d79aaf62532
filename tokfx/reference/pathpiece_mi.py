"""Pure-Python twin of tokfx._pathpiece_mi: the MI of each token occurrence of the chosen shortest
segmentation of a chunk of base symbols (docs/algorithms.md, PathPiece)."""
from __future__ import annotations

from collections.abc import Sequence

from tokfx.reference.path_segment import forward, token_ids

# The segmenter whose tie rule each tie_break draws the chosen path with.
TIE_MODES = {"longest": "pathpiece-l", "random": "pathpiece-r"}


def chunk_mi(symbols: Sequence[int], tokens, max_width: int = 16, tie_break: str = "longest",
             seed: int = 0) -> list[tuple[int, int, int, int | None]]:
    """(start, end exclusive, token id, MI) along the shortest segmentation that pathpiece-l
    (tie_break "longest") or pathpiece-r with `seed` (tie_break "random") chooses, MI by the
    formula of docs/algorithms.md (break inside, or a covering token; 0 when sc[e] > 1)."""
    if tie_break not in TIE_MODES:
        raise ValueError(f"unknown tie_break {tie_break!r}; known: {', '.join(TIE_MODES)}")
    ids = token_ids(tokens)
    n = len(symbols)
    if n == 0:
        return []
    pl, width, token, sc = forward(symbols, tokens, max_width, TIE_MODES[tie_break], seed)
    inf = float("inf")
    bpl = [inf] * n + [0]
    for i in range(n - 1, -1, -1):
        bpl[i] = min((bpl[i + w] + 1 for w in range(1, min(max_width, n - i) + 1)
                      if tuple(symbols[i:i + w]) in ids), default=inf)
    path, e = [], n - 1
    while e >= 0:
        path.append((e - width[e] + 1, e + 1, token[e]))
        e -= width[e]
    out = []
    for s, end, t in reversed(path):
        e = end - 1
        if sc[e] > 1:
            out.append((s, end, t, 0))
            continue
        inside = [pl[j] + bpl[j + 1] for j in range(s, e)]
        covering = [(pl[s2 - 1] if s2 else 0) + 1 + bpl[e2 + 1]
                    for s2 in range(max(0, e - max_width + 1), s + 1)
                    for e2 in range(e, min(n, s2 + max_width))
                    if (s2, e2) != (s, e) and tuple(symbols[s2:e2 + 1]) in ids]
        best = min(inside + covering, default=inf)
        out.append((s, end, t, None if best == inf else best - pl[n - 1]))
    return out


def mi_pass(symbols: Sequence[int], offsets: Sequence[int], counts: Sequence[int], tokens,
            max_width: int = 16, tie_break: str = "longest", seed: int = 0) -> tuple[list[int], int]:
    """(per token id the summed MI of its occurrences times the counts, the corpus token count)
    over chunks symbols[offsets[k]:offsets[k+1]] occurring counts[k] times; an occurrence no
    segmentation avoids (MI None) adds 0."""
    sums, total = [0] * len(tokens), 0
    for k, count in enumerate(counts):
        occurrences = chunk_mi(symbols[offsets[k]:offsets[k + 1]], tokens, max_width, tie_break, seed)
        total += count * len(occurrences)
        for _, _, t, mi in occurrences:
            sums[t] += count * (mi or 0)
    return sums, total
