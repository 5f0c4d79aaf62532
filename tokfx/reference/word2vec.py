"""Pure-Python twin of tokfx._word2vec.train_skipgram (skip-gram with negative sampling, gensim's
algorithm on one 48-bit generator): the same draws and the same float32 operations in the same
order, so the trained vectors are equal to the last bit. Slow; for tests on small inputs."""
from __future__ import annotations

import math

import numpy as np

MASK = (1 << 48) - 1
M64 = (1 << 64) - 1
MAX_EXP = np.float32(6)
TABLE_SIZE = 1000
F32 = np.float32


def lcg(state: int) -> int:
    return (state * 25214903917 + 11) & MASK


def splitmix64(state: int) -> tuple[int, int]:
    """(the new state, the draw)."""
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def occurrence_order(counts, seed: int):
    """Sentence indices, each counts[s] times, in the order one epoch takes them: draw r below
    the number of occurrences left, take the sentence whose running total of occurrences left
    first exceeds r."""
    left, state = list(counts), seed
    for remaining in range(sum(left), 0, -1):
        state, x = splitmix64(state)
        r, s, running = x % remaining, 0, left[0]
        while running <= r:
            s += 1
            running += left[s]
        left[s] -= 1
        yield s


def dot(a, b) -> np.float32:
    sums = [F32(0)] * 8
    for k in range(len(a)):
        sums[k % 8] = F32(sums[k % 8] + F32(a[k] * b[k]))
    return F32(F32(F32(sums[0] + sums[4]) + F32(sums[2] + sums[6])) +
               F32(F32(sums[1] + sums[5]) + F32(sums[3] + sums[7])))


def draw(cumulative: np.ndarray, state: int) -> int:
    x = (state >> 16) % int(cumulative[-1])
    return next(i for i, c in enumerate(cumulative) if int(c) > x)


def train_skipgram(ids, starts, counts, vectors: np.ndarray, window: int, negative: int, alpha: float,
                   min_alpha: float, epochs: int, sample: float, seed: int, table: np.ndarray) -> None:
    n_tokens, dim = vectors.shape
    token_count = [0] * n_tokens
    for s, count in enumerate(counts):
        for i in range(starts[s], starts[s + 1]):
            token_count[ids[i]] += count
    total = sum(token_count)
    if total == 0 or dim == 0:
        return
    threshold = sample * total
    keep = [0] * n_tokens
    for k, count in enumerate(token_count):
        if count:
            p = (math.sqrt(count / threshold) + 1) * (threshold / count) if sample > 0 else 1.0
            keep[k] = 4294967295 if p >= 1.0 else int(p * 4294967296.0)
    used = [k for k in range(n_tokens) if token_count[k]]
    weights = np.array([token_count[k] for k in used], dtype=np.float64) ** 0.75
    cumulative = np.round(np.cumsum(weights) / weights.sum() * (2 ** 31 - 1)).astype(np.uint32)
    targets = np.zeros_like(vectors)
    scale = F32(TABLE_SIZE) / (2 * MAX_EXP)
    state = seed & MASK
    for epoch in range(epochs):
        done = 0
        for s in occurrence_order(counts, seed):
            rate = F32(max(min_alpha, alpha - (alpha - min_alpha) * ((epoch * total + done) / (epochs * total))))
            done += starts[s + 1] - starts[s]
            kept = []
            for i in range(starts[s], starts[s + 1]):
                if keep[ids[i]] >= state >> 16:
                    kept.append(ids[i])
                state = lcg(state)
            for a in range(len(kept)):
                reduced = (state >> 16) % window
                state = lcg(state)
                for c in range(max(0, a - window + reduced), min(len(kept), a + window + 1 - reduced)):
                    if c == a:
                        continue
                    context = vectors[kept[c]]
                    work = np.zeros(dim, dtype=np.float32)
                    for d in range(negative + 1):
                        if d == 0:
                            target, label = kept[a], F32(1)
                        else:
                            target = used[draw(cumulative, state)]
                            state = lcg(state)
                            if target == kept[a]:
                                continue
                            label = F32(0)
                        f = dot(context, targets[target])
                        if f <= -MAX_EXP or f >= MAX_EXP:
                            continue
                        g = F32(F32(label - table[min(int(F32(F32(f + MAX_EXP) * scale)), TABLE_SIZE - 1)]) * rate)
                        work += g * targets[target]
                        targets[target] += g * context
                    context += F32(1) * work
