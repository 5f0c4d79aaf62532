"""PathPiece vocabulary construction (top-down; Schmidt et al. 2024, docs/algorithms.md).

Start from a large initial vocabulary (our BPE, or the most frequent n-grams), every base symbol
kept and no token wider than L; then each round segments every pre-token with PathPiece-L (or,
with tie_break "random", as pathpiece-r with the seed: the paper's PathPieceR), sums each
token's minimum increase MI (the extra tokens its pre-tokens would need without that occurrence)
over its occurrences times their counts, and drops the tokens with the smallest sums down to
the schedule's next size. Core: tokfx._pathpiece_mi.mi_pass.

The sums, so the vocabulary, do not depend on the tie rule: an occurrence that another shortest
path avoids has MI 0, and one of MI > 0 lies on every shortest path (docs/algorithms.md).
"""
from __future__ import annotations

import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tokfx._pathpiece_mi import mi_pass
from tokfx.models.base import Model, Target, Trainer
from tokfx.models.bpe.merge_loop import packed_words
from tokfx.models.top_down import (check_initial_vocab, check_max_width, check_schedule, initial_tokens,
                                   resolve_initial_size)
from tokfx.progress import Progress


def default_schedule(initial: int, target: int) -> list[int]:
    """Sizes after each round: every halving of the size in 4 equal steps of an eighth of the
    size where that halving starts (2^18 -> 229,376 -> ... -> 2^17 in steps of 32,768, then
    steps of 16,384, ...), the last step ending at the target."""
    sizes, top = [], initial
    while top > target:
        step = max(1, top // 8)
        size = top
        while size > max(top // 2, target):
            size = max(size - step, top // 2, target)
            sizes.append(size)
        top = size
    return sizes


@dataclass
class Round:
    """One round: the vocabulary kept (by id), and the corpus token count before the drop."""
    size: int
    tokens: list[tuple[int, ...]]
    corpus_tokens: int
    seconds: float


TIE_BREAKS = ("longest", "random")  # the paper's PathPieceL and PathPieceR


def prune_rounds(symbols: array, offsets: array, counts: array, tokens: list[tuple[int, ...]],
                 sizes: Sequence[int], alphabet_size: int, max_width: int, tie_break: str = "longest",
                 seed: int = 0) -> Iterator[Round]:
    """Drop tokens round by round down to each size in `sizes`. `tokens[:alphabet_size]` are the
    base symbols, never dropped; the kept tokens keep their order. Each round segments each
    pre-token as pathpiece-l does (tie_break "longest") or as pathpiece-r with `seed` does
    ("random")."""
    for size in sizes:
        if not alphabet_size <= size <= len(tokens):
            raise ValueError(f"cannot prune {len(tokens)} tokens to {size} keeping {alphabet_size} base symbols")
        start = time.perf_counter()
        sums, corpus_tokens = mi_pass(symbols, offsets, counts, tokens, max_width, tie_break, seed)
        candidates = sorted(range(alphabet_size, len(tokens)), key=lambda i: (sums[i], tokens[i]))
        dropped = set(candidates[:len(tokens) - size])
        tokens = [t for i, t in enumerate(tokens) if i not in dropped]
        yield Round(size, tokens, corpus_tokens, time.perf_counter() - start)


class PathPieceTrainer(Trainer):
    """The tokenizer has no merges and segments with pathpiece-l, or with tie_break "random"
    pathpiece-r with the same seed (tokfx.train's `segmenter` picks another)."""
    name = "pathpiece"

    @dataclass(frozen=True)
    class Params:
        """`initial_vocab`: "bpe", "ngram" or "unigram"; `initial_size` counts its tokens as vocab_size does
        (base symbols and special tokens included; default 4 x vocab_size, at most 2^18, and
        never below vocab_size). `schedule`: the vocab sizes after each round (special tokens
        included), decreasing to vocab_size (default: default_schedule). `max_width`: L, the
        widest token in base symbols. `tie_break`: how each round chooses among a pre-token's
        shortest segmentations: "longest" (the longest last token, as pathpiece-l: PathPieceL)
        or "random" (as pathpiece-r with `seed`, default 0: PathPieceR; the tokenizer then
        segments with pathpiece-r and that seed). `seed` only with "random"."""
        initial_vocab: str = "bpe"
        initial_size: int | None = None
        max_width: int = 16
        schedule: Sequence[int] | None = None
        tie_break: str = "longest"
        seed: int | None = None

    def __init__(self, params: Mapping | None = None):
        super().__init__(params)
        if self.params.tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie_break {self.params.tie_break!r}; known: {', '.join(TIE_BREAKS)}")
        if self.params.seed is not None and not 0 <= self.params.seed < 2**64:
            raise ValueError(f"seed must be in [0, 2**64), got {self.params.seed}")

    @classmethod
    def inert_params(cls, params: Mapping) -> dict[str, str]:
        if params.get("seed") is not None and params.get("tie_break", "longest") != "random":
            return {"seed": "applies only with tie_break 'random'"}
        return {}

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        p, alphabet, specials = self.params, target.alphabet, len(target.special_tokens)
        check_initial_vocab(p.initial_vocab)
        check_max_width(p.max_width)
        initial_size = resolve_initial_size(p.initial_size, target.vocab_size)
        sizes = list(p.schedule) if p.schedule is not None else default_schedule(initial_size, target.vocab_size)
        check_schedule(sizes, initial_size, target.vocab_size)

        start = time.perf_counter()
        packed = packed_words(counts, alphabet)
        tokens = initial_tokens(counts, p.initial_vocab, initial_size, target, p.max_width, progress,
                                self.name, packed)
        # A size the initial vocabulary already fits (BPE ran out of merges, or tokens wider than
        # L were dropped) needs no round.
        rounds = [target.without_specials(size) for size in sizes if target.without_specials(size) < len(tokens)]
        seed = p.seed or 0
        for number, done in enumerate(prune_rounds(*packed, tokens, rounds, alphabet.size, p.max_width,
                                                   p.tie_break, seed), 1):
            tokens = done.tokens
            progress.report(f"pathpiece: round {number}/{len(rounds)}: corpus {done.corpus_tokens:,} tokens,"
                            f" kept {done.size:,} tokens (+ {specials} special), {done.seconds:.2f} s")
        progress.report(f"pathpiece: {len(tokens) + specials:,} tokens in {time.perf_counter() - start:.2f} s")
        params = {"vocab_size": target.vocab_size, "initial_vocab": p.initial_vocab,
                  "initial_size": initial_size, "max_width": p.max_width, "schedule": sizes}
        if p.tie_break == "random":  # recorded only then: PathPieceL files keep their bytes
            params.update(tie_break=p.tie_break, seed=seed)
            return Model([alphabet.token(t) for t in tokens], params, segmenter="pathpiece-r",
                         segmenter_params={"max_width": p.max_width, "seed": seed})
        return Model([alphabet.token(t) for t in tokens], params, segmenter="pathpiece-l",
                     segmenter_params={"max_width": p.max_width})
