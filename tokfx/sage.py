"""SaGe vocabulary construction (top-down, SaGe 2.0) as the registered trainer `sage`.

Start from our BPE vocabulary of `initial_size` tokens (every base symbol kept); each round
segments every pre-token greedily (longest prefix), sums each token's ablation loss (the
skip-gram log-likelihood of its context lost when its occurrences are re-tokenized without it,
tokfx._shortest_path.sage_losses) over its occurrences times their counts, and drops the active
tokens with the smallest losses down to the schedule's next size; word2vec embeddings
(tokfx.word2vec) are retrained at the sizes of the embeddings schedule (ALGORITHMS.md, SaGe).

Context: with `context="line"` (the default) the pieces are the texts' lines, as the official
code trains: a line is segmented pre-token by pre-token (the tokenizer's pattern), word2vec's
sentences are whole lines and the context crosses pre-token edges, while an ablation stays
inside its pre-token. With `context="pretoken"` (faster; what counts alone allow) the pieces
are the pre-tokens with their counts, so both the ablation context (2 tokens each side) and
word2vec's window stop at the pre-token's edges *(ours)*, and frequent one-token words lose.
"""
from __future__ import annotations

import sys
import time
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tokfx._shortest_path import PathSegmenter, sage_losses
from tokfx.alphabet import BYTES, Alphabet
from tokfx.bpe_trainer import packed_words, token_bytes, train_bpe_merges
from tokfx.pathpiece import check_schedule, resolve_initial_size
from tokfx.pretokenize import PreTokenizer
from tokfx.registry import register_trainer
from tokfx.tokenizer import Tokenizer
from tokfx.word2vec import train_embeddings

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


def greedy_pieces(symbols: array, offsets: array, tokens: list[tuple[int, ...]], max_width: int,
                  cuts: np.ndarray | None = None) -> list[list[int]]:
    """The greedy segmentation (token ids) of every piece; with `cuts` (a flag per symbol where
    a pre-token starts), of each of its pre-tokens apart, concatenated."""
    segmenter = PathSegmenter(tokens, "greedy", max_width)
    view = memoryview(symbols)
    if cuts is None:
        return [segmenter.segment(view[offsets[k]:offsets[k + 1]]) for k in range(len(offsets) - 1)]
    bounds = np.union1d(np.asarray(offsets), np.flatnonzero(cuts)).tolist()
    out, j = [], 0
    for k in range(len(offsets) - 1):
        ids = []
        while bounds[j] < offsets[k + 1]:
            ids += segmenter.segment(view[bounds[j]:bounds[j + 1]])
            j += 1
        out.append(ids)
    return out


def line_pieces(lines: Mapping[bytes, int], pretokenizer: PreTokenizer,
                alphabet: Alphabet) -> tuple[array, array, array, np.ndarray]:
    """(symbols, offsets, counts, cuts) of the lines as pieces, sorted, each the concatenation
    of its pre-tokens (what the pattern leaves out is left out, as in the pre-token counts);
    cuts flags the first symbol of every pre-token. Lines without a pre-token are left out."""
    texts, counts, ends = [], array("q"), array("q")
    line_ends, size = [0], 0
    for line in sorted(lines):
        pieces = pretokenizer.pieces(line.decode("utf-8"))
        if not pieces:
            continue
        texts.extend(pieces)
        counts.append(lines[line])
        for piece in pieces:
            size += len(piece)
            ends.append(size)
        line_ends.append(len(ends))
    symbols, pretoken_offsets = alphabet.map_pieces(b"".join(texts), ends)
    cuts = np.zeros(len(symbols), dtype=np.uint8)
    cuts[np.asarray(pretoken_offsets)[:-1]] = 1
    return symbols, array("q", [pretoken_offsets[j] for j in line_ends]), counts, cuts


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


@register_trainer("sage", takes_lines=True)
def train_sage_tokenizer(counts: Mapping[bytes, int], *, vocab_size: int, special_tokens: Sequence[str],
                         pattern: str, alphabet: Alphabet = BYTES, progress: bool = False,
                         initial_size: int | None = None, max_width: int = 16,
                         schedule: Sequence[int] | None = None,
                         embeddings_schedule: Sequence[int] | None = None, seed: int = 0,
                         context: str = "line", lines: Mapping[bytes, int] | None = None) -> Tokenizer:
    """`initial_size` counts the initial BPE vocabulary as vocab_size does (base symbols and
    special tokens included; default 4 x vocab_size, at most 2^18, never below vocab_size).
    `schedule`: the vocab sizes after each round, decreasing to vocab_size (default:
    default_schedule). `embeddings_schedule`: the sizes (initial_size or a size of the schedule)
    at which word2vec is retrained before the round that starts there (default:
    default_embeddings_schedule); embeddings are always trained once at the start. `max_width`:
    the widest token used, in base symbols (SaGe's max_len). `seed`: word2vec's. `context`:
    "line" (the default, as SaGe: the pieces are `lines`, {line bytes: count}, which tokfx.train
    passes) or "pretoken" (the pieces are the pre-tokens of `counts`; module docstring). The
    initial BPE and the final vocabulary come from `counts` either way. The tokenizer segments
    greedily."""
    if max_width < 1:
        raise ValueError(f"max_width must be at least 1, got {max_width}")
    if context not in ("pretoken", "line"):
        raise ValueError(f"context must be 'pretoken' or 'line', got {context!r}")
    if context == "line" and lines is None:
        raise ValueError("context='line' (the default) needs the texts' lines: use tokfx.train(texts, ...),"
                         " or context='pretoken'")
    specials = list(dict.fromkeys(special_tokens))
    initial_size = resolve_initial_size(initial_size, vocab_size)
    sizes = list(schedule) if schedule is not None else default_schedule(initial_size, vocab_size)
    embedding_sizes = list(embeddings_schedule) if embeddings_schedule is not None \
        else default_embeddings_schedule(initial_size, vocab_size)
    _check_schedules(sizes, embedding_sizes, initial_size, vocab_size)

    start = time.perf_counter()
    # Sorted: the losses are float sums and word2vec reads sentences in order, so the pieces'
    # order must not depend on how the counts were gathered.
    cuts = None
    if context == "line":
        symbols, offsets, piece_counts, cuts = line_pieces(lines, PreTokenizer(pattern, specials), alphabet)
    else:
        symbols, offsets, piece_counts = packed_words(dict(sorted(counts.items())), alphabet)
    learned = initial_size - len(specials) - alphabet.size
    initial = token_bytes(train_bpe_merges(counts, learned, alphabet=alphabet, progress=progress),
                          alphabet)[alphabet.size:]
    tokens = [(s,) for s in range(alphabet.size)] + \
        [tuple(t) for t in dict.fromkeys(initial) if 1 < len(t) <= max_width]
    if progress:
        print(f"sage: initial bpe vocabulary of {len(tokens):,} tokens (+ {len(specials)} special)"
              f" in {time.perf_counter() - start:.2f} s", file=sys.stderr)

    rounds = [size - len(specials) for size in sizes]
    retrain = [before in embedding_sizes for before in [initial_size] + sizes[:-1]]
    active = None
    for number, done in enumerate(prune_rounds(symbols, offsets, piece_counts, tokens, rounds, retrain,
                                               alphabet.size, max_width, seed, cuts), 1):
        tokens = done.tokens
        active = done.active if done.active is not None else active
        if progress:
            if done.dropped:
                outcome = f"corpus {done.corpus_tokens:,} tokens, kept {done.size + len(specials):,} active tokens"
            else:
                outcome = f"skipped: {done.active_before:,} {'in all' if done.active is None else 'active'}"
            print(f"sage: round {number}/{len(rounds)}: {outcome}, {done.seconds:.2f} s", file=sys.stderr)
    # The result is the active vocabulary: the tokens of width > 1 the last pass found in use,
    # less those it dropped (or, when no round ran a pass, those the greedy segmentation uses).
    if active is None:
        used = {i for ids in greedy_pieces(symbols, offsets, tokens, max_width, cuts) for i in ids}
        active = [t for i, t in enumerate(tokens) if i >= alphabet.size and i in used]
    tokens = tokens[:alphabet.size] + active
    if progress:
        print(f"sage: {len(tokens) + len(specials):,} tokens in {time.perf_counter() - start:.2f} s",
              file=sys.stderr)
    special_ids = {name: len(tokens) + i for i, name in enumerate(specials)}
    all_tokens = [alphabet.token(t) for t in tokens] + [alphabet.token_of_text(name) for name in specials]
    params = {"vocab_size": vocab_size, "initial_size": initial_size, "max_width": max_width,
              "schedule": sizes, "embeddings_schedule": embedding_sizes, "seed": seed,
              "context": context}
    return Tokenizer(all_tokens, [], special_ids, pattern, "sage", params, alphabet,
                     "greedy", {"max_width": max_width})
