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
            skip_whole: bool = False, float32: bool = False, start: float = 0.0,
            margins: list[float] | None = None) -> tuple[float, list[tuple[int, int, int]]] | None:
    """(score, [(start, end exclusive, token id)]) of the most likely segmentation, the longest
    last token winning ties at each end position; None when there is none. float32: path
    scores summed in float32, as sentencepiece sums them; paths start from `start`. margins:
    appended, at each position with two candidates or more, the chosen one's score minus the
    best other one's (viterbi32.pxd's margin is their smallest)."""
    ids = token_ids(tokens)
    n = len(symbols)
    best: list[tuple[float, int, int] | None] = []
    for e in range(n):
        chosen = None
        candidates = []
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
            candidates.append(score)
            if chosen is None or score >= chosen[0]:
                chosen = (score, w, t)
        if margins is not None and len(candidates) > 1:
            candidates.remove(chosen[0])
            margins.append(chosen[0] - max(candidates))
        best.append(chosen)
    if n and best[-1] is None:
        return None
    out, e = [], n - 1
    while e >= 0:
        _, w, t = best[e]
        out.append((e - w + 1, e + 1, t))
        e -= w
    return (best[-1][0] if n else start), out[::-1]


# viterbi32_segments.pxd: its cache's limits and threshold
MAX_CACHED_SEGMENT = 64


def crossings(symbols: Sequence[int], tokens) -> list[int]:
    """The positions 0 < p < len(symbols) that no token can span: none holds symbols[p - 1]
    before its last symbol, or none holds symbols[p] after its first."""
    before_last = {x for t in tokens if t is not None for x in t[:-1]}
    after_first = {x for t in tokens if t is not None for x in t[1:]}
    return [p for p in range(1, len(symbols))
            if symbols[p - 1] not in before_last or symbols[p] not in after_first]


def segment_threshold(margin: float, length: int, max_score: float, start: float) -> float:
    """The running scores S, |S| below it, from which the segment makes the same choices as
    from `start` (the bound in viterbi32_segments.pxd), in the core's order of operations."""
    return margin * (1.0 - 1.0 / 1048576.0) * 4194304.0 / length - abs(start) - 2.0 * length * max_score


def viterbi32_segments(symbols: Sequence[int], tokens, scores: Sequence[float], max_width: int, start: float,
                       cache: dict) -> tuple[float, list[int], int] | None:
    """As viterbi32_segments.pxd (float32 Viterbi cut at the crossings, each segment of 2 to
    MAX_CACHED_SEGMENT symbols cached in `cache` with its threshold): (the score at the end, the
    token ids, how many segments the cache served); None when there is no path. The ids and the
    score are viterbi(float32=True)'s over the whole of symbols, whatever the cache holds."""
    max_score = max((abs(_f32(s)) for t, s in zip(tokens, scores) if t is not None), default=0.0)
    running, ids, hits = _f32(start), [], 0
    cuts = [0, *crossings(symbols, tokens), len(symbols)] if symbols else [0]  # no segment in no text
    for a, b in zip(cuts, cuts[1:]):
        segment = tuple(symbols[a:b])
        cacheable = 2 <= len(segment) <= MAX_CACHED_SEGMENT
        held = cache.get(segment) if cacheable else None
        if held is not None and abs(running) < held[1]:
            for t in held[0]:
                running = _f32(running + _f32(scores[t]))
            ids += held[0]
            hits += 1
            continue
        margins: list[float] = []
        found = viterbi(segment, tokens, scores, max_width, float32=True, start=running, margins=margins)
        if found is None:
            return None
        threshold = segment_threshold(min(margins, default=math.inf), len(segment), max_score, running)
        running, path = found
        ids += [t for _, _, t in path]
        if cacheable and threshold > (0.0 if held is None else held[1]):
            cache[segment] = ([t for _, _, t in path], threshold)
    return running, ids, hits


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
