"""Pure-Python twin of tokfx._path_segment: PathPiece and greedy segmentation over a piece's base
symbols. Tokens are given by id as symbol sequences (None for an id never produced); a repeated
token keeps its lowest id."""
from __future__ import annotations

from collections.abc import Sequence

from tokfx.reference.unigram import token_ids, viterbi

MASK = (1 << 64) - 1


def _mix(h: int) -> int:
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & MASK
    return h ^ (h >> 31)


class _SplitMix:
    def __init__(self, seed: int, symbols: Sequence[int]):
        h = _mix(seed ^ len(symbols))
        for s in symbols:
            h = _mix(h ^ s)
        self.state = h

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        return _mix(self.state)


def forward(symbols: Sequence[int], tokens, max_width: int = 16, mode: str = "pathpiece-l",
            seed: int = 0) -> tuple[list[int], list[int], list[int], list[int]]:
    """Per end position: (pl, chosen width, chosen token id, sc)."""
    ids = token_ids(tokens)
    rng = _SplitMix(seed, symbols)
    pl, width, token, sc = [], [], [], []
    for e in range(len(symbols)):
        best, ties, chosen = None, 0, (0, -1)
        for w in range(1, min(max_width, e + 1) + 1):
            t = ids.get(tuple(symbols[e - w + 1:e + 1]))
            if t is None:
                continue
            cost = (pl[e - w] if w <= e else 0) + 1
            if best is None or cost < best:
                best, ties, chosen = cost, 1, (w, t)
            elif cost == best:
                ties += 1
                if mode == "pathpiece-l" or rng.next() % ties == 0:
                    chosen = (w, t)
        if best is None:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        pl.append(best)
        width.append(chosen[0])
        token.append(chosen[1])
        sc.append(ties)
    return pl, width, token, sc


def segment(symbols: Sequence[int], tokens, max_width: int = 16, mode: str = "pathpiece-l",
            seed: int = 0, scores: Sequence[float] | None = None,
            float_bits: int = 64) -> list[tuple[int, int, int]]:
    """(start, end exclusive, token id) of each token, in order. `scores`: each token's log
    probability, for mode "likelihood" (tokfx.reference.unigram.viterbi, in float32 sums with
    float_bits 32)."""
    if mode == "likelihood":
        found = viterbi(symbols, tokens, scores, max_width, float32=float_bits == 32)
        if found is None:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        return found[1]
    if mode == "greedy":
        return _greedy(symbols, tokens, max_width)
    _, width, token, _ = forward(symbols, tokens, max_width, mode, seed)
    out, e = [], len(symbols) - 1
    while e >= 0:
        out.append((e - width[e] + 1, e + 1, token[e]))
        e -= width[e]
    return out[::-1]


def _greedy(symbols: Sequence[int], tokens, max_width: int) -> list[tuple[int, int, int]]:
    ids = token_ids(tokens)
    out, s = [], 0
    while s < len(symbols):
        w = next(w for w in range(min(max_width, len(symbols) - s), 0, -1)
                 if tuple(symbols[s:s + w]) in ids)
        out.append((s, s + w, ids[tuple(symbols[s:s + w])]))
        s += w
    return out
