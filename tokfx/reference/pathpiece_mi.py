"""Pure-Python twin of tokfx._pathpiece_mi: the MI of each token occurrence of the PathPiece-L
segmentation of a chunk of base symbols (docs/algorithms.md, PathPiece)."""
from __future__ import annotations

from collections.abc import Sequence

from tokfx.reference.path_segment import forward, segment, token_ids


def chunk_mi(symbols: Sequence[int], tokens, max_width: int = 16) -> list[tuple[int, int, int, int | None]]:
    """(start, end exclusive, token id, MI) along the PathPiece-L segmentation, MI by the
    formula of docs/algorithms.md (break inside, or a covering token; 0 when sc[e] > 1)."""
    ids = token_ids(tokens)
    n = len(symbols)
    pl, _, _, sc = forward(symbols, tokens, max_width)
    inf = float("inf")
    bpl = [inf] * n + [0]
    for i in range(n - 1, -1, -1):
        bpl[i] = min((bpl[i + w] + 1 for w in range(1, min(max_width, n - i) + 1)
                      if tuple(symbols[i:i + w]) in ids), default=inf)
    out = []
    for s, end, t in segment(symbols, tokens, max_width):
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
