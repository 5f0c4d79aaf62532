"""PathPiece vocabulary construction (top-down) as the registered trainer `pathpiece`.

Start from a large initial vocabulary (our BPE, or the most frequent n-grams), every base symbol
kept and no token wider than L; then each round segments every pre-token with PathPiece-L,
sums each token's minimum increase MI (the extra tokens its pre-tokens would need without that
occurrence) over its occurrences times their counts, and drops the tokens with the smallest
sums down to the schedule's next size (ALGORITHMS.md, PathPiece). Core: tokfx._shortest_path.
"""
from __future__ import annotations

import sys
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tokfx._shortest_path import mi_pass, top_ngrams
from tokfx.alphabet import BYTES, Alphabet
from tokfx.bpe_trainer import packed_words, token_bytes, train_bpe_merges
from tokfx.registry import register_trainer
from tokfx.tokenizer import Tokenizer

INITIAL_VOCABS = ("bpe", "ngram")
# The paper starts from 2^18 tokens for 2^15..2^17; ours by default starts from 4x the target
# (at most 2^18), since our corpora are far smaller than the paper's.
DEFAULT_INITIAL_FACTOR = 4
MAX_DEFAULT_INITIAL = 1 << 18


def resolve_initial_size(initial_size: int | None, vocab_size: int) -> int:
    """The initial vocabulary's size of a top-down trainer: as given (never below vocab_size),
    or DEFAULT_INITIAL_FACTOR x vocab_size, at most MAX_DEFAULT_INITIAL."""
    if initial_size is None:
        return max(vocab_size, min(DEFAULT_INITIAL_FACTOR * vocab_size, MAX_DEFAULT_INITIAL))
    if initial_size < vocab_size:
        raise ValueError(f"initial_size {initial_size} is smaller than vocab_size {vocab_size}")
    return initial_size


def check_schedule(sizes: Sequence[int], initial_size: int, vocab_size: int) -> None:
    """A top-down schedule (the sizes after each round) decreases from initial_size to vocab_size."""
    if any(b >= a for a, b in zip([initial_size, *sizes], sizes)) or [initial_size, *sizes][-1] != vocab_size:
        raise ValueError(f"schedule {list(sizes[:4])}...: the sizes must decrease from initial_size"
                         f" {initial_size} and end at vocab_size {vocab_size}")


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


def prune_rounds(symbols: array, offsets: array, counts: array, tokens: list[tuple[int, ...]],
                 sizes: Sequence[int], alphabet_size: int, max_width: int) -> Iterator[Round]:
    """Drop tokens round by round down to each size in `sizes`. `tokens[:alphabet_size]` are the
    base symbols, never dropped; the kept tokens keep their order."""
    for size in sizes:
        if not alphabet_size <= size <= len(tokens):
            raise ValueError(f"cannot prune {len(tokens)} tokens to {size} keeping {alphabet_size} base symbols")
        start = time.perf_counter()
        sums, corpus_tokens = mi_pass(symbols, offsets, counts, tokens, max_width)
        candidates = sorted(range(alphabet_size, len(tokens)), key=lambda i: (sums[i], tokens[i]))
        dropped = set(candidates[:len(tokens) - size])
        tokens = [t for i, t in enumerate(tokens) if i not in dropped]
        yield Round(size, tokens, corpus_tokens, time.perf_counter() - start)


@register_trainer("pathpiece")
def train_pathpiece_tokenizer(counts: Mapping[bytes, int], *, vocab_size: int,
                              special_tokens: Sequence[str], pattern: str, alphabet: Alphabet = BYTES,
                              progress: bool = False, initial_vocab: str = "bpe",
                              initial_size: int | None = None, max_width: int = 16,
                              schedule: Sequence[int] | None = None) -> Tokenizer:
    """`initial_vocab`: "bpe" or "ngram"; `initial_size` counts its tokens as vocab_size does
    (base symbols and special tokens included; default 4 x vocab_size, at most 2^18, and never
    below vocab_size). `schedule`: the vocab sizes
    after each round (special tokens included), decreasing to vocab_size (default:
    default_schedule). `max_width`: L, the widest token in base symbols. The tokenizer segments
    with pathpiece-l (tokfx.train's `segmenter` picks another)."""
    if initial_vocab not in INITIAL_VOCABS:
        raise ValueError(f"unknown initial vocabulary {initial_vocab!r}; known: {', '.join(INITIAL_VOCABS)}")
    if max_width < 1:
        raise ValueError(f"max_width must be at least 1, got {max_width}")
    specials = list(dict.fromkeys(special_tokens))
    initial_size = resolve_initial_size(initial_size, vocab_size)
    sizes = list(schedule) if schedule is not None else default_schedule(initial_size, vocab_size)
    check_schedule(sizes, initial_size, vocab_size)

    start = time.perf_counter()
    symbols, offsets, word_counts = packed_words(counts, alphabet)
    learned = initial_size - len(specials) - alphabet.size
    if initial_vocab == "bpe":
        initial = token_bytes(train_bpe_merges(counts, learned, alphabet=alphabet, progress=progress),
                              alphabet)[alphabet.size:]
    else:
        initial = top_ngrams(symbols, offsets, word_counts, learned, max_width)
    base = [(s,) for s in range(alphabet.size)]
    tokens = base + [tuple(t) for t in dict.fromkeys(initial) if 1 < len(t) <= max_width]
    if progress:
        print(f"pathpiece: initial {initial_vocab} vocabulary of {len(tokens):,} tokens (+"
              f" {len(specials)} special) in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    # A size the initial vocabulary already fits (BPE ran out of merges, or tokens wider than
    # L were dropped) needs no round.
    rounds = [size - len(specials) for size in sizes if size - len(specials) < len(tokens)]
    for number, done in enumerate(prune_rounds(symbols, offsets, word_counts, tokens, rounds,
                                               alphabet.size, max_width), 1):
        tokens = done.tokens
        if progress:
            print(f"pathpiece: round {number}/{len(rounds)}: corpus {done.corpus_tokens:,} tokens,"
                  f" kept {done.size:,} tokens (+ {len(specials)} special), {done.seconds:.2f} s",
                  file=sys.stderr)
    if progress:
        print(f"pathpiece: {len(tokens) + len(specials):,} tokens in"
              f" {time.perf_counter() - start:.2f} s", file=sys.stderr)
    special_ids = {name: len(tokens) + i for i, name in enumerate(specials)}
    all_tokens = [alphabet.token(t) for t in tokens] + [alphabet.token_of_text(name) for name in specials]
    params = {"vocab_size": vocab_size, "initial_vocab": initial_vocab, "initial_size": initial_size,
              "max_width": max_width, "schedule": sizes}
    return Tokenizer(all_tokens, [], special_ids, pattern, "pathpiece", params, alphabet,
                     "pathpiece-l", {"max_width": max_width})
