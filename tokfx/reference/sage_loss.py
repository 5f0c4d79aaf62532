"""Pure-Python twin of tokfx._sage_loss: the SaGe ablation loss of every token over pieces of
base symbols with counts (docs/algorithms.md, SaGe; context within a piece, greedy segmentation and
ablation within a pre-token when the piece is cut into pre-tokens)."""
from __future__ import annotations

import math
from collections.abc import Sequence

from tokfx.reference.path_segment import segment, token_ids


def log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def pair_sum(sequence: Sequence[int], span_start: int, span_end: int, embeddings, window: int) -> float:
    """log sigmoid(e_t . e_c) summed over ordered pairs at distance 1..window with t or c in
    the span, target by target, context left to right, dimensions in order."""
    total = 0.0
    for t in range(len(sequence)):
        for c in range(t - window, t + window + 1):
            if c < 0 or c == t or c >= len(sequence):
                continue
            if not (span_start <= t < span_end or span_start <= c < span_end):
                continue
            dot = 0.0
            for a, b in zip(embeddings[sequence[t]], embeddings[sequence[c]]):
                dot += float(a) * float(b)
            total += log_sigmoid(dot)
    return total


def ablate(symbols: Sequence[int], tokens, max_width: int, start: int, width: int,
           base_starts: Sequence[int]) -> tuple[list[int], int]:
    """(ablated token ids, index of the base token where they rejoin): the longest token
    strictly shorter than `width` at `start`, then greedy until a start of the base
    segmentation (`base_starts`, ending with len(symbols))."""
    ids = token_ids(tokens)
    w = next(w for w in range(width - 1, 0, -1) if tuple(symbols[start:start + w]) in ids)
    out, i = [ids[tuple(symbols[start:start + w])]], start + w
    while i not in base_starts:
        w = next(w for w in range(min(max_width, len(symbols) - i), 0, -1)
                 if tuple(symbols[i:i + w]) in ids)
        out.append(ids[tuple(symbols[i:i + w])])
        i += w
    return out, base_starts.index(i)


def pretoken_ends(cut: Sequence[int] | None, n: int) -> list[int]:
    """The end of each pre-token of a piece of n symbols: before every flagged symbol
    (cut[i] true, i > 0), and n."""
    return [i for i in range(1, n) if cut is not None and cut[i]] + [n]


def piece_losses(symbols: Sequence[int], tokens, embeddings, max_width: int = 16,
                 context: int = 2, cut: Sequence[int] | None = None) -> list[tuple[int, float]]:
    """(token id, base pair sum - ablated pair sum) for each occurrence of width > 1 of the
    greedy segmentation of one piece (each of its pre-tokens apart), in order."""
    ends = pretoken_ends(cut, len(symbols))
    base = [(s + begin, e + begin, t) for begin, end in zip([0] + ends, ends)
            for s, e, t in segment(symbols[begin:end], tokens, max_width, "greedy")]
    ids = [t for _, _, t in base]
    starts = [s for s, _, _ in base] + [len(symbols)]
    out = []
    for loc, (s, e, t) in enumerate(base):
        if e - s < 2:
            continue
        end = next(end for end in ends if end > s)
        ablated, beyond = ablate(symbols[:end], tokens, max_width, s, e - s, starts)
        left, right = max(0, loc - context), min(len(ids), beyond + context)
        with_t = pair_sum(ids[left:right], loc - left, beyond - left, embeddings, context)
        sequence = ids[left:loc] + ablated + ids[beyond:right]
        without = pair_sum(sequence, loc - left, loc - left + len(ablated), embeddings, context)
        out.append((t, with_t - without))
    return out


def sage_losses(pieces: Sequence[Sequence[int]], counts: Sequence[int], tokens, embeddings,
                max_width: int = 16, context: int = 2,
                cuts: Sequence[Sequence[int]] | None = None) -> tuple[list[float], list[int], int]:
    """(loss per token id, occurrences of width > 1 per token id, corpus token count);
    `cuts[k]`: piece k's flags, one per symbol, true where a pre-token starts."""
    losses, occurrences, total = [0.0] * len(tokens), [0] * len(tokens), 0
    for k, (symbols, count) in enumerate(zip(pieces, counts)):
        cut = None if cuts is None else cuts[k]
        ends = pretoken_ends(cut, len(symbols))
        total += count * sum(len(segment(symbols[begin:end], tokens, max_width, "greedy"))
                             for begin, end in zip([0] + ends, ends))
        for t, loss in piece_losses(symbols, tokens, embeddings, max_width, context, cut):
            losses[t] += count * loss
            occurrences[t] += count
    return losses, occurrences, total
