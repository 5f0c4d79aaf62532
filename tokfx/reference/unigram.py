"""Pure-Python twin of tokfx._unigram and of the likelihood segmenter (lattice.pxd): Viterbi and
forward-backward over a piece's lattice, in the cores' order of operations, so that floats agree
to the last bit."""
from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from itertools import accumulate

NEG_INF = -math.inf


def token_ids(tokens) -> dict[tuple[int, ...], int]:
    """Symbol sequence -> token id; a repeated token keeps its lowest id (the cores' trie)."""
    ids = {}
    for i, t in enumerate(tokens):
        if t is not None:
            ids.setdefault(tuple(t), i)
    return ids


def log_sum_exp(x: float, y: float) -> float:
    lo, hi = (x, y) if x < y else (y, x)
    if hi == NEG_INF or hi > lo + 50.0:
        return hi
    return hi + math.log(math.exp(lo - hi) + 1.0)


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def viterbi(symbols: Sequence[int], tokens, scores: Sequence[float], max_width: int = 16,
            skip_whole: bool = False, float32: bool = False,
            start: float = 0.0) -> tuple[float, list[tuple[int, int, int]]] | None:
    """(score, [(start, end exclusive, token id)]) of the most likely segmentation, the longest
    last token winning ties at each end position; None when there is none. float32: path
    scores summed in float32, as sentencepiece sums them; paths start from `start`."""
    ids = token_ids(tokens)
    n = len(symbols)
    best: list[tuple[float, int, int] | None] = []
    for e in range(n):
        chosen = None
        for w in range(1, min(max_width, e + 1) + 1):
            t = ids.get(tuple(symbols[e - w + 1:e + 1]))
            if t is None:
                continue
            if w <= e:
                if best[e - w] is None:
                    continue
                before = best[e - w][0]
            elif skip_whole and e == n - 1:
                continue
            else:
                before = start
            score = _f32(_f32(before) + _f32(scores[t])) if float32 else before + scores[t]
            if chosen is None or score >= chosen[0]:
                chosen = (score, w, t)
        best.append(chosen)
    if n and best[-1] is None:
        return None
    out, e = [], n - 1
    while e >= 0:
        _, w, t = best[e]
        out.append((e - w + 1, e + 1, t))
        e -= w
    return (best[-1][0] if n else start), out[::-1]


def forward_backward(symbols: Sequence[int], tokens, scores: Sequence[float],
                     max_width: int = 16) -> tuple[list[float], list[float]]:
    """(alpha, beta): log sums over the paths of symbols[:i] and symbols[i:]."""
    ids = token_ids(tokens)
    n = len(symbols)
    alpha, beta = [NEG_INF] * (n + 1), [NEG_INF] * (n + 1)
    alpha[0] = beta[n] = 0.0
    for e in range(n):
        acc = NEG_INF
        for w in range(1, min(max_width, e + 1) + 1):
            t = ids.get(tuple(symbols[e - w + 1:e + 1]))
            if t is not None and alpha[e + 1 - w] != NEG_INF:
                acc = log_sum_exp(acc, alpha[e + 1 - w] + scores[t])
        alpha[e + 1] = acc
    for s in range(n - 1, -1, -1):
        acc = NEG_INF
        for w in range(1, min(max_width, n - s) + 1):
            t = ids.get(tuple(symbols[s:s + w]))
            if t is not None and beta[s + w] != NEG_INF:
                acc = log_sum_exp(acc, beta[s + w] + scores[t])
        beta[s] = acc
    return alpha, beta


def digamma(x: float) -> float:
    """As tokfx._unigram.digamma (sentencepiece's Digamma): the recurrence up to 7, then the
    asymptotic series."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + \
        (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4


def piece_ranges(pieces, ranges: int = 8) -> list[tuple[int, int]]:
    """As tokfx._unigram.piece_ranges, over the pieces themselves: range r starts at the first
    piece with at least r / ranges of the symbols before it."""
    offsets = [0, *accumulate(map(len, pieces))]
    total, end = offsets[-1], len(pieces)
    bounds = [next(k for k in range(end + 1) if k == end or offsets[k] * ranges >= r * total)
              for r in range(ranges)]
    return list(zip(bounds, bounds[1:] + [end]))


def e_step(pieces, counts, tokens, scores, max_width: int = 16) -> tuple[list[float], float]:
    """As tokfx._unigram.e_step: summed per piece range, then the ranges in order."""
    expected, likelihood = [0.0] * len(tokens), 0.0
    for first, last in piece_ranges(pieces):
        part, part_likelihood = _e_step_range(pieces[first:last], counts[first:last], tokens, scores,
                                              max_width)
        expected = [total + x for total, x in zip(expected, part)]
        likelihood += part_likelihood
    return expected, likelihood


def _e_step_range(pieces, counts, tokens, scores, max_width: int) -> tuple[list[float], float]:
    ids = token_ids(tokens)
    expected, likelihood = [0.0] * len(tokens), 0.0
    for piece, count in zip(pieces, counts):
        piece = list(piece)
        n = len(piece)
        if not n:
            continue
        alpha, beta = forward_backward(piece, tokens, scores, max_width)
        log_z = alpha[n]
        if log_z == NEG_INF:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        likelihood += float(count) * log_z
        for s in range(n):
            if alpha[s] == NEG_INF:
                continue
            for w in range(1, min(max_width, n - s) + 1):
                t = ids.get(tuple(piece[s:s + w]))
                if t is not None and beta[s + w] != NEG_INF:
                    expected[t] += float(count) * math.exp(alpha[s] + scores[t] + beta[s + w] - log_z)
    return expected, likelihood


def viterbi_counts(pieces, counts, tokens, scores, max_width: int = 16) -> tuple[list[int], int]:
    freq, corpus_tokens = [0] * len(tokens), 0
    for piece, count in zip(pieces, counts):
        if not len(piece):
            continue
        found = viterbi(list(piece), tokens, scores, max_width)
        if found is None:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        for _, _, t in found[1]:
            freq[t] += count
        corpus_tokens += count * len(found[1])
    return freq, corpus_tokens


def alternatives(tokens, scores, max_width: int = 16) -> list[list[int] | None]:
    found = []
    for i, token in enumerate(tokens):
        if len(token) <= 1:
            found.append([])
            continue
        alt = viterbi(list(token), tokens, scores, max_width, skip_whole=True)
        if alt is None:
            found.append([])
        elif alt[0] > scores[i]:
            found.append(None)
        else:
            found.append([t for _, _, t in alt[1]])
    return found


def prune_keys(tokens, scores, freq, pieces: int, max_width: int = 16) -> tuple[list[int], list[float]]:
    """As tokfx._unigram.prune_keys."""
    return prune_keys_of(alternatives(tokens, scores, max_width), scores, freq, pieces)


def prune_keys_of(alts, scores, freq, pieces: int) -> tuple[list[int], list[float]]:
    """(kinds, values) from each token's alternative (alternatives()) and its Viterbi count."""
    total = sum(freq)
    log_total = math.log(total) if total > 0 else 0.0
    kinds, values = [], []
    for i, alt in enumerate(alts):
        if freq[i] == 0 or alt is None:
            kind, value = 0, scores[i]
        elif not alt:
            kind, value = 2, 0.0
        else:
            log_prob = math.log(freq[i]) - log_total
            # Without token i its occurrences go to its alternative's tokens.
            log_total_alt = math.log(total + freq[i] * (len(alt) - 1))
            log_prob_alt = 0.0  # a loop, not sum(): Python 3.12's sum() of floats compensates
            for n in alt:
                log_prob_alt += math.log(freq[n] + freq[i]) - log_total_alt
            kind, value = 1, freq[i] / pieces * (log_prob - log_prob_alt)
        kinds.append(kind)
        values.append(value)
    return kinds, values
