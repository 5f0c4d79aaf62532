"""SaGe vocabulary construction (top-down, SaGe 2.0; Yehezkel & Pinter 2023, docs/algorithms.md).

Start from our BPE vocabulary of `initial_size` tokens (every base symbol kept); each round
segments every piece greedily (longest prefix), sums each token's ablation loss (the skip-gram
log-likelihood of its context lost when its occurrences are re-tokenized without it,
tokfx._sage_loss.sage_losses) over its occurrences times their counts, and drops the active
tokens with the smallest losses down to the schedule's next size; word2vec embeddings
(`word2vec.py`) are retrained at the sizes of the embeddings schedule.

Context: with `context="line"` (the default) the pieces are the texts' lines, as the official
code trains: a line is segmented pre-token by pre-token (the tokenizer's pattern), word2vec's
sentences are whole lines and the context crosses pre-token edges, while an ablation stays
inside its pre-token. With `context="pretoken"` (faster; what counts alone allow) the pieces
are the pre-tokens with their counts, so both the ablation context (2 tokens each side) and
word2vec's window stop at the pre-token's edges *(ours)*, and frequent one-token words lose.
"""
from __future__ import annotations

import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokfx._sage_loss import sage_losses
from tokfx.models.base import CONTEXTS, Model, Target, Trainer
from tokfx.models.bpe.merge_loop import packed_words
from tokfx.models.top_down import (check_initial_vocab, check_max_width, check_schedule, initial_tokens,
                                   resolve_initial_size)
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.progress import Progress

# numpy (the pieces' cuts, the embeddings) is imported when SaGe trains, not with tokfx, whose
# registry imports this trainer: importing numpy is 15 MB that training any other way does not
# need (bench/README.md, issue 26).
if TYPE_CHECKING:
    import numpy as np

# The official example schedules in multiples of the final size (16,384): vocabulary
# 262,144 229,376 ... 32,768 16,384, embeddings retrained at 262,144 131,072 65,536 49,152
# 40,960 32,768. Defaults take the multiples below the initial size.
OFFICIAL_VOCAB_STEPS = (16, 14, 12, 10, 8, 6, 4, 3.5, 3, 2.5, 2, 1)
OFFICIAL_EMBEDDING_STEPS = (16, 8, 4, 3, 2.5, 2)


def default_schedule(initial: int, target: int) -> list[int]:
    """Sizes after each round: the official multiples of the target below `initial`."""
    return [round(f * target) for f in OFFICIAL_VOCAB_STEPS if round(f * target) < initial]


def default_embeddings_schedule(initial: int, target: int) -> list[int]:
    """The initial size, then the official multiples of the target below it."""
    return [initial] + [round(f * target) for f in OFFICIAL_EMBEDDING_STEPS
                        if target < round(f * target) < initial]


def _check_schedules(sizes: list[int], embedding_sizes: list[int], initial_size: int, vocab_size: int) -> None:
    check_schedule(sizes, initial_size, vocab_size)
    stray = sorted(set(embedding_sizes) - {initial_size, *sizes[:-1]})
    if stray:
        raise ValueError(f"embeddings_schedule size {stray[0]} is neither initial_size nor a size of"
                         " the schedule before its last")


@dataclass
class Round:
    """One round of the schedule: `size` its target (base symbols included, special tokens
    not); `tokens` the vocabulary after it (inactive tokens included); `active` the tokens of
    width > 1 its pass found in use, less those dropped (None: no pass, as the vocabulary
    already fits); `active_before` base symbols + tokens in use before the drop."""
    size: int
    tokens: list[tuple[int, ...]]
    active: list[tuple[int, ...]] | None
    active_before: int
    dropped: bool
    corpus_tokens: int
    embeddings: np.ndarray | None
    seconds: float


def prune_rounds(symbols: array, offsets: array, counts: array, tokens: list[tuple[int, ...]],
                 sizes: Sequence[int], retrain: Sequence[bool], alphabet_size: int, max_width: int,
                 seed: int, cuts: np.ndarray | None = None) -> Iterator[Round]:
    """Drop active tokens round by round down to each size in `sizes`; `retrain[k]`: retrain
    the embeddings before round k (they are trained before the first pass in any case).
    `cuts`: pre-token starts inside the pieces (sage_losses), or None.
    `tokens[:alphabet_size]` are the base symbols, never dropped; kept tokens keep their order.
    A round is skipped when the vocabulary, or its active part, is already at or below its size."""
    from tokfx.models.sage.pieces import greedy_pieces
    from tokfx.models.sage.word2vec import train_embeddings

    embeddings, stale = None, True
    for size, again in zip(sizes, retrain):
        start = time.perf_counter()
        stale = stale or again
        if len(tokens) <= size:
            yield Round(size, tokens, None, len(tokens), False, 0, embeddings, time.perf_counter() - start)
            continue
        if stale:
            # Retraining is put off to the next pass: a skipped round changes no token.
            embeddings = train_embeddings(greedy_pieces(symbols, offsets, tokens, max_width, cuts), counts,
                                          len(tokens), seed)
            stale = False
        losses, occurrences, corpus_tokens = sage_losses(symbols, offsets, counts, tokens, embeddings, max_width,
                                                           cuts=cuts)
        in_use = [i for i in range(alphabet_size, len(tokens)) if occurrences[i]]
        before = alphabet_size + len(in_use)
        # The official order: smallest loss first, ties by id.
        dropped = set(sorted(in_use, key=lambda i: (losses[i], i))[:max(0, before - size)])
        active = [tokens[i] for i in in_use if i not in dropped]
        used_embeddings = embeddings
        if dropped:
            keep = [i for i in range(len(tokens)) if i not in dropped]
            tokens = [tokens[i] for i in keep]
            embeddings = embeddings[keep]
        yield Round(size, tokens, active, before, bool(dropped), corpus_tokens, used_embeddings,
                    time.perf_counter() - start)


class SageTrainer(Trainer):
    """The result is the active vocabulary; the tokenizer segments greedily."""
    name = "sage"
    takes_lines = True

    @dataclass(frozen=True)
    class Params:
        """`initial_size` counts the initial BPE vocabulary as vocab_size does (base symbols and
        special tokens included; default 4 x vocab_size, at most 2^18, never below vocab_size).
        `schedule`: the vocab sizes after each round, decreasing to vocab_size (default:
        default_schedule). `embeddings_schedule`: the sizes (initial_size or a size of the
        schedule) at which word2vec is retrained before the round that starts there (default:
        default_embeddings_schedule); embeddings are always trained once at the start.
        `max_width`: the widest token used, in base symbols (SaGe's max_len). `seed`: word2vec's.
        `context`: "line" (the default, as SaGe: the pieces are the lines, {line bytes: count})
        or "pretoken" (the pieces are the pre-tokens of the counts; module docstring). The
        initial BPE and the final vocabulary come from the pre-token counts either way.
        `initial_vocab`: "bpe" (SaGe's), "ngram" or "unigram" (tokfx.models.top_down)."""
        initial_size: int | None = None
        max_width: int = 16
        schedule: Sequence[int] | None = None
        embeddings_schedule: Sequence[int] | None = None
        seed: int = 0
        context: str = "line"
        initial_vocab: str = "bpe"

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        p, alphabet, specials = self.params, target.alphabet, len(target.special_tokens)
        check_max_width(p.max_width)
        check_initial_vocab(p.initial_vocab)
        if p.context not in CONTEXTS:
            raise ValueError(f"context must be 'pretoken' or 'line', got {p.context!r}")
        if p.context == "line" and lines is None:
            raise ValueError("context='line' (the default) needs the texts' lines: use tokfx.train(texts, ...),"
                             " or context='pretoken'")
        initial_size = resolve_initial_size(p.initial_size, target.vocab_size)
        sizes = list(p.schedule) if p.schedule is not None else default_schedule(initial_size, target.vocab_size)
        embedding_sizes = list(p.embeddings_schedule) if p.embeddings_schedule is not None \
            else default_embeddings_schedule(initial_size, target.vocab_size)
        _check_schedules(sizes, embedding_sizes, initial_size, target.vocab_size)

        from tokfx.models.sage.pieces import greedy_pieces, line_pieces

        start = time.perf_counter()
        # Sorted: the losses are float sums and word2vec reads sentences in order, so the pieces'
        # order must not depend on how the counts were gathered.
        cuts = None
        if p.context == "line":
            symbols, offsets, piece_counts, cuts = line_pieces(
                lines, PreTokenizer(target.pattern, target.special_tokens), alphabet)
        else:
            symbols, offsets, piece_counts = packed_words(dict(sorted(counts.items())), alphabet)
        tokens = initial_tokens(counts, p.initial_vocab, initial_size, target, p.max_width, progress, self.name)

        rounds = [target.without_specials(size) for size in sizes]
        retrain = [before in embedding_sizes for before in [initial_size] + sizes[:-1]]
        active = None
        for number, done in enumerate(prune_rounds(symbols, offsets, piece_counts, tokens, rounds, retrain,
                                                   alphabet.size, p.max_width, p.seed, cuts), 1):
            tokens = done.tokens
            active = done.active if done.active is not None else active
            if done.dropped:
                outcome = f"corpus {done.corpus_tokens:,} tokens, kept {done.size + specials:,} active tokens"
            else:
                outcome = f"skipped: {done.active_before:,} {'in all' if done.active is None else 'active'}"
            progress.report(f"sage: round {number}/{len(rounds)}: {outcome}, {done.seconds:.2f} s")
        # The result is the active vocabulary: the tokens of width > 1 the last pass found in use,
        # less those it dropped (or, when no round ran a pass, those the greedy segmentation uses).
        if active is None:
            used = {i for ids in greedy_pieces(symbols, offsets, tokens, p.max_width, cuts) for i in ids}
            active = [t for i, t in enumerate(tokens) if i >= alphabet.size and i in used]
        tokens = tokens[:alphabet.size] + active
        progress.report(f"sage: {len(tokens) + specials:,} tokens in {time.perf_counter() - start:.2f} s")
        params = {"vocab_size": target.vocab_size, "initial_size": initial_size, "max_width": p.max_width,
                  "schedule": sizes, "embeddings_schedule": embedding_sizes, "seed": p.seed,
                  "context": p.context}
        if p.initial_vocab != "bpe":  # recorded only when not SaGe's own, so earlier files stay the same
            params["initial_vocab"] = p.initial_vocab
        return Model([alphabet.token(t) for t in tokens], params, segmenter="greedy",
                     segmenter_params={"max_width": p.max_width})
