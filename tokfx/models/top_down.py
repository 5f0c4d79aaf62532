"""What the top-down trainers (PathPiece, SaGe) share: the initial vocabulary they prune from
(our BPE's, the most frequent n-grams, or our Unigram's), its size, and the checks on their
schedules of sizes."""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from tokfx._ngrams import top_ngrams
from tokfx.models.base import Target, check_max_width  # noqa: F401 (re-exported)
from tokfx.models.bpe.merge_loop import packed_words, train_bpe_merges
from tokfx.models.unigram import UnigramTrainer
from tokfx.progress import Progress
from tokfx.segmenters.bpe import token_bytes

INITIAL_VOCABS = ("bpe", "ngram", "unigram")
# The PathPiece paper starts from 2^18 tokens for 2^15..2^17; ours by default starts from 4x
# the target (at most 2^18), since our corpora are far smaller than the paper's.
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


def check_initial_vocab(kind: str) -> None:
    if kind not in INITIAL_VOCABS:
        raise ValueError(f"unknown initial vocabulary {kind!r}; known: {', '.join(INITIAL_VOCABS)}")


def initial_tokens(counts: Mapping[bytes, int], kind: str, initial_size: int, target: Target,
                   max_width: int, progress: Progress, trainer: str,
                   packed: tuple | None = None) -> list[tuple[int, ...]]:
    """The vocabulary pruning starts from, by id: every base symbol, then the learned tokens of
    `kind` ("bpe": our BPE's; "ngram": the most frequent n-grams of the pre-tokens; "unigram":
    our Unigram's, trained to `initial_size` with its defaults and `max_width`) no wider than
    `max_width`, once each, in that vocabulary's id order; `initial_size` counts them as vocab_size does. `packed`: the
    counts as packed_words gives them, if the caller has them already."""
    start = time.perf_counter()
    alphabet = target.alphabet
    learned = target.without_specials(initial_size) - alphabet.size
    if kind == "bpe":
        learned_tokens = token_bytes(train_bpe_merges(counts, learned, alphabet=alphabet, progress=progress),
                                     alphabet)[alphabet.size:]
    elif kind == "unigram":
        initial = Target(initial_size, target.special_tokens, alphabet, target.pattern)
        seed_size = max(UnigramTrainer.Params().seed_size, initial_size)
        model = UnigramTrainer({"max_width": max_width, "seed_size": seed_size}).train(counts, initial, progress)
        learned_tokens = [tuple(t) for t in model.tokens[alphabet.size:]]
    else:
        learned_tokens = top_ngrams(*(packed or packed_words(counts, alphabet)), learned, max_width)
    tokens = [(s,) for s in range(alphabet.size)] + \
        [tuple(t) for t in dict.fromkeys(learned_tokens) if 1 < len(t) <= max_width]
    progress.report(f"{trainer}: initial {kind} vocabulary of {len(tokens):,} tokens (+"
                    f" {len(target.special_tokens)} special) in {time.perf_counter() - start:.2f} s")
    return tokens
