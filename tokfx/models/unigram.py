"""Unigram vocabulary construction (Kudo 2018, as sentencepiece's and Hugging Face's
UnigramTrainer do it; docs/algorithms.md).

Seed: every base symbol and substrings of the pre-tokens (at most `max_width` symbols), scored
log(count x length) normalised: with the "sentencepiece" recipe (RECIPES) the valid, branching
substrings sentencepiece's suffix array yields, by count x length; with "ngrams" the most
frequent n-grams. Then rounds: `em_iterations` EM steps (E: expected token counts by
forward-backward over each pre-token's lattice; M: the Bayesian update digamma(count) -
digamma(total), dropping tokens expected fewer than 0.5 times), and a prune to
`shrinking_factor` x the size of the tokens whose removal loses the least likelihood, as
sentencepiece's PruneSentencePieces estimates it, down to the target ("ngrams") or to 1.1 x it,
then the best by score ("sentencepiece"). After the last prune, EM again. Cores: tokfx._ngrams
(seed_substrings, top_ngram_counts), tokfx._unigram (e_step, viterbi_counts, prune_keys) over the
tokens held packed (tokfx._packed_tokens, no tuple per token: issue 26), and
tokfx._training_steps for the steps between them (numpy is not imported: bench/README.md, issue 26).
"""
from __future__ import annotations

import math
import time
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tokfx._count_table import packed_counts
from tokfx._ngrams import SEED_INHERITED, SEED_INVALID, SEED_SPACE, seed_substrings, top_ngram_counts
from tokfx._packed_tokens import PackedTokens
from tokfx._training_steps import (below_threshold, floored, key_order, kept_expected, piece_ends_counts,
                                   symbol_counts)
from tokfx._unigram import digamma, digammas, e_step, prune_keys, viterbi_counts
from tokfx import unicode_scripts
from tokfx.alphabet import Alphabet, fallback_byte_scores
from tokfx.models.base import CONTEXTS, Model, Target, Trainer, check_max_width
from tokfx.models.bpe.merge_loop import packed_words
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.progress import Progress

# sentencepiece's kExpectedFrequencyThreshold: the M-step drops tokens expected fewer times.
EXPECTED_THRESHOLD = 0.5
# A kept token below the threshold (a base symbol, or one kept so as not to fall below the
# target) scores this far below the lowest other score (ours; sentencepiece adds its required
# characters back at the end below every piece).
BELOW_LOWEST = 10.0
# The recipes (docs/algorithms.md): "sentencepiece" as unigram_model_trainer.cc (its seed, the
# rounds down to FINAL_SLACK x the target, the best by score kept); "ngrams", ours before it.
RECIPES = ("sentencepiece", "ngrams")
FINAL_SLACK = 1.1


def seed_vocabulary(symbols: array, offsets: array, counts: array, alphabet_size: int, seed_size: int,
                    max_width: int, classes: array | None = None,
                    line_ends: array | None = None) -> tuple[PackedTokens, array]:
    """Every base symbol, then `seed_size - alphabet_size` substrings of 2..max_width symbols:
    with `classes` (seed_classes), sentencepiece's seed (_ngrams.seed_substrings: the valid,
    branching substrings of the highest count x length, a line's end another follower than a
    piece's with `line_ends`, piece_line_ends); without, the most frequent n-grams (ties by
    symbols). Each scored log(count x length) - log(sum), as sentencepiece's seed; a base
    symbol that never occurs scores BELOW_LOWEST under the lowest."""
    base_counts = symbol_counts(symbols, offsets, counts, alphabet_size)
    how_many = max(0, seed_size - alphabet_size)
    if classes is None:
        *grams, gram_counts = top_ngram_counts(symbols, offsets, counts, how_many, max_width)
    else:
        *grams, gram_counts = seed_substrings(symbols, offsets, counts, how_many, max_width, classes, line_ends)
    grams = PackedTokens(*grams)
    singles = PackedTokens(array("i", range(alphabet_size)), array("q", range(alphabet_size + 1)))
    tokens = singles + grams
    weight = [float(c) for c in base_counts] + [float(c * grams.width(i)) for i, c in enumerate(gram_counts)]
    total = math.log(sum(weight)) if sum(weight) > 0 else 0.0
    scores = array("d", [math.log(w) - total if w > 0 else 0.0 for w in weight])
    return tokens, floored(scores, 0.0, bytes(w > 0 for w in weight), BELOW_LOWEST)


def seed_classes(alphabet: Alphabet) -> array:
    """Each base symbol's class for seed_substrings, as sentencepiece's IsValidSentencePiece
    reads a character: the fallback symbols (and the unknown one) SEED_INVALID, U+2581
    SEED_SPACE, an Inherited character SEED_INHERITED, any other its script
    (tokfx.unicode_scripts)."""
    classes = array("i", [SEED_INVALID]) * alphabet.char_base
    for char in alphabet.characters:
        script = unicode_scripts.script(char)
        classes.append(SEED_SPACE if script is None else SEED_INHERITED if script == unicode_scripts.INHERITED
                       else script)
    return classes


def line_end_counts(lines: Mapping[bytes, int], pre_tokenizer: PreTokenizer) -> dict[bytes, int]:
    """{pre-token: its occurrences last in a line} over the line counts (count_lines: a line
    keeps its "\\n"), the pre-token as the text's own pre-tokenization has it: a text's last
    line (no "\\n") ends in its last piece; a line whose "\\n" is a piece of its own (with the
    whitespace before it, as the gpt2 pattern splits it) in the piece before; a line whose
    "\\n" sits inside a piece (the sentencepiece pattern's "\u2581b\\nc", where a text holds
    several lines) in none: there the seed sees the "\\n" follow already."""
    found: dict[bytes, int] = {}
    for line, count in lines.items():
        pieces = pre_tokenizer.pieces(line.decode("utf-8"))
        if line.endswith(b"\n"):
            if not pieces or pieces[-1].strip():
                continue
            pieces = pieces[:-1]
        if pieces:
            found[pieces[-1]] = found.get(pieces[-1], 0) + count
    return found


def piece_line_ends(ordered: Mapping[bytes, int], at_line_end: Mapping[bytes, int], alphabet: Alphabet,
                    offsets: array) -> array:
    """For each piece of packed_words(ordered, alphabet) (whose `offsets`): how many of its
    occurrences end a line, by `at_line_end` (line_end_counts); only a pre-token's last piece
    can (packed_words cuts a pre-token around the fallback symbols of a chars alphabet)."""
    keys, ends, _ = packed_counts(ordered)
    _, key_offsets = alphabet.map_pieces(keys, ends)
    per_key = array("q", [min(at_line_end.get(k, 0), c) for k, c in ordered.items()])
    return piece_ends_counts(key_offsets, offsets, per_key)


def m_step(tokens: PackedTokens, expected: Sequence[float], alphabet_size: int,
           floor: int) -> tuple[PackedTokens, array]:
    """Drop the tokens (not base symbols) expected fewer than EXPECTED_THRESHOLD times, fewest
    first (ties by symbols), never below `floor` tokens; score the rest digamma(expected) -
    digamma(sum of the expected counts at or above the threshold). The kept keep their order."""
    n = len(tokens)
    values = expected if isinstance(expected, array) else array("d", expected)
    low = below_threshold(values, alphabet_size, n, EXPECTED_THRESHOLD)
    room = max(0, n - floor)
    if len(low) > room:
        low = tokens.order(low, values)[:room]
    kept, kept_values, counted, total = kept_expected(values, n, low, EXPECTED_THRESHOLD)
    log_total = digamma(total) if total > 0 else 0.0
    return tokens.select(kept), floored(digammas(kept_values), log_total, counted, BELOW_LOWEST)


def prune_order(tokens: PackedTokens, kinds: Sequence[int], values: Sequence[float],
                alphabet_size: int) -> list[int]:
    """The ids of the tokens that are not base symbols, those to drop first first, by
    prune_keys' (kind, value), then by symbols: tokens unused by the Viterbi segmentations or
    split by their own (sentencepiece drops them outright), lowest score first; then by the
    likelihood lost without them, smallest first; then tokens with no alternative."""
    # By (kind, value) natively; only runs of equal keys (the kind 2 tokens, equal scores) are
    # then sorted by symbols, in Python.
    ids, runs = key_order(kinds if isinstance(kinds, array) else array("b", kinds),
                          values if isinstance(values, array) else array("d", values), alphabet_size)
    for first, last in runs:
        ids[first:last] = tokens.order(ids[first:last])
    return ids


@dataclass
class Round:
    """One prune: the tokens kept (in their order), their scores, the Viterbi corpus tokens."""
    size: int
    tokens: PackedTokens
    scores: array
    corpus_tokens: int


def prune(symbols: array, offsets: array, counts: array, tokens: PackedTokens,
          scores: Sequence[float], size: int, alphabet_size: int, max_width: int,
          floor: int | None = None) -> Round:
    """Keep `size` tokens: every base symbol, and the rest in prune_order's reverse. With a
    `floor` (sentencepiece's way), every token unused by the Viterbi segmentations or split by
    its own goes, even below `size` (never below `floor`), and every token with no alternative
    stays, even above."""
    if not alphabet_size <= size <= len(tokens):
        raise ValueError(f"cannot prune {len(tokens)} tokens to {size} keeping {alphabet_size} base symbols")
    freq, corpus_tokens = viterbi_counts(symbols, offsets, counts, tokens, scores, max_width)
    kinds, values = prune_keys(tokens, scores, freq, sum(counts), max_width)
    order = prune_order(tokens, kinds, values, alphabet_size)
    drop = len(tokens) - size
    if floor is not None:
        kind = kinds[alphabet_size:]
        drop = min(max(drop, kind.count(0)), len(kind) - kind.count(2), len(tokens) - floor)
    dropped = set(order[:drop])
    kept = [i for i in range(len(tokens)) if i not in dropped]
    return Round(len(kept), tokens.select(kept), array("d", (scores[i] for i in kept)), corpus_tokens)


class UnigramTrainer(Trainer):
    """The tokenizer has no merges, a log probability per token, and segments with likelihood
    (Viterbi)."""
    name = "unigram"
    takes_lines = True

    @dataclass(frozen=True)
    class Params:
        """`seed_size`: the seed vocabulary's tokens, base symbols included (default 1,000,000 as
        Hugging Face). `shrinking_factor`: each prune keeps this share of the tokens (never below
        vocab_size). `em_iterations`: EM steps per round (sentencepiece: 2). `max_width`: the
        widest token in base symbols. `recipe`: "sentencepiece" (the default, over any alphabet) or
        "ngrams", RECIPES. `context` (the "sentencepiece" recipe):
        "pretoken" (the default: what counts alone allow) or "line": the seed tells a
        pre-token's end inside its line from a line's end, as sentencepiece's seed does over its
        lines (line_end_counts; it needs the texts' line counts, {line bytes: count})."""
        seed_size: int = 1_000_000
        shrinking_factor: float = 0.75
        em_iterations: int = 2
        max_width: int = 16
        recipe: str = "sentencepiece"
        context: str = "pretoken"

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        p, alphabet, specials = self.params, target.alphabet, len(target.special_tokens)
        check_max_width(p.max_width)
        if not 0 < p.shrinking_factor < 1:
            raise ValueError(f"shrinking_factor must be in (0, 1), got {p.shrinking_factor}")
        if p.em_iterations < 1:
            raise ValueError(f"em_iterations must be at least 1, got {p.em_iterations}")
        if p.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {p.recipe!r}; known: {', '.join(RECIPES)}")
        recipe = p.recipe
        if p.context not in CONTEXTS:
            raise ValueError(f"context must be 'pretoken' or 'line', got {p.context!r}")
        if p.context == "line" and recipe != "sentencepiece":
            raise ValueError(f"context='line' applies only to recipe 'sentencepiece' (the {recipe!r} seed"
                             " reads no line ends)")
        if p.context == "line" and lines is None:
            raise ValueError("context='line' needs the texts' lines: use tokfx.train(texts, ...), or the"
                             " counts with lines=count_lines(texts)")
        final = target.without_specials(target.vocab_size)
        if p.seed_size < final:
            raise ValueError(f"seed_size {p.seed_size} is smaller than vocab_size {final} (without"
                             " special tokens)")
        start = time.perf_counter()
        # Sorted: the float sums of the EM depend on the order of the pre-tokens.
        ordered = dict(sorted(counts.items()))
        packed = packed_words(ordered, alphabet)
        classes = line_ends = None
        stop = final
        if p.context == "line":
            # The line-end pre-tokens are new bytes objects (a CJK line is one pre-token): gone
            # once counted, before the seed (issue 26's peak).
            line_ends = piece_line_ends(ordered, line_end_counts(lines, PreTokenizer(target.pattern,
                                                                                     target.special_tokens)),
                                        alphabet, packed[1])
        del ordered  # its order is in `packed` now
        if recipe == "sentencepiece":
            classes = seed_classes(alphabet) if alphabet.characters else array("i", bytes(4 * alphabet.size))
            # sentencepiece's desired_vocab_size_: its vocab_size (with its meta and byte pieces)
            # x 1.1 over its training pieces (without them).
            stop = alphabet.char_base + int(FINAL_SLACK * target.vocab_size)
        tokens, scores = seed_vocabulary(*packed, alphabet.size, p.seed_size, p.max_width, classes, line_ends)
        progress.report(f"unigram: seed vocabulary of {len(tokens):,} tokens in"
                        f" {time.perf_counter() - start:.2f} s")
        rounds = em_rounds(packed, tokens, scores, final, alphabet.size, p, max(stop, final),
                           recipe == "sentencepiece", alphabet.char_base if recipe == "sentencepiece" else 0)
        for step, done in enumerate(rounds, 1):
            tokens, scores = done.tokens, done.scores
            progress.report(f"unigram: round {step}: {done.summary}")
        # Learned tokens by score, highest first, ties by symbols (as sentencepiece orders pieces);
        # those past `final` go (sentencepiece's FinalizeSentencePieces).
        order = tokens.order(range(alphabet.size, len(tokens)), array("d", (-s for s in scores)))
        ids = list(range(alphabet.size)) + order[:max(0, final - alphabet.size)]
        progress.report(f"unigram: {len(tokens) + specials:,} tokens in {time.perf_counter() - start:.2f} s")
        params = {"vocab_size": target.vocab_size, "seed_size": p.seed_size,
                  "shrinking_factor": p.shrinking_factor, "em_iterations": p.em_iterations,
                  "max_width": p.max_width, "recipe": recipe, "context": p.context}
        kept_scores = [scores[i] for i in ids]
        float_bits = 64
        if alphabet.characters:
            # The sentencepiece family: Viterbi sums in float32, and an uncovered character
            # costs sentencepiece's unknown score, as it does there.
            float_bits = 32
            kept_scores[:256] = fallback_byte_scores(kept_scores[alphabet.char_base:])
        return Model([alphabet.token(tokens[i]) for i in ids], params, segmenter="likelihood",
                     segmenter_params={"max_width": p.max_width, "float_bits": float_bits},
                     scores=kept_scores)


@dataclass
class EmRound:
    """One round: EM (leaving `em_size` tokens), then, unless the size was reached, a prune; the
    tokens and scores after it."""
    em_size: int
    tokens: PackedTokens
    scores: array
    summary: str


def em_rounds(packed: tuple[array, array, array], tokens: PackedTokens, scores: Sequence[float],
              final: int, alphabet_size: int, p: UnigramTrainer.Params, stop: int | None = None,
              drop_unused: bool = False, uncounted: int = 0):
    """The rounds down to `stop` tokens (default `final`); the last is EM alone, once EM leaves at
    most `stop`. Each prune keeps max(stop, shrinking_factor x the tokens EM left beyond the
    first `uncounted` (sentencepiece's factor leaves out the byte pieces) + `uncounted`) as
    prune keeps them (with `drop_unused`, sentencepiece's way: all unused and split tokens go,
    all without an alternative stay); neither EM nor a prune leaves fewer than `final`."""
    stop = final if stop is None else stop
    while True:
        start = time.perf_counter()
        for _ in range(p.em_iterations):
            expected, likelihood = e_step(*packed, tokens, scores, p.max_width)
            tokens, scores = m_step(tokens, expected, alphabet_size, final)
        summary = f"EM log likelihood {likelihood:,.1f}, {len(tokens):,} tokens"
        if len(tokens) <= stop:
            yield EmRound(len(tokens), tokens, scores, summary + f", {time.perf_counter() - start:.2f} s")
            return
        em_size = len(tokens)
        size = uncounted + int((em_size - uncounted) * p.shrinking_factor)
        done = prune(*packed, tokens, scores, max(stop, size), alphabet_size, p.max_width,
                     final if drop_unused else None)
        tokens, scores = done.tokens, done.scores
        yield EmRound(em_size, tokens, scores, summary + f"; Viterbi corpus {done.corpus_tokens:,} tokens,"
                      f" kept {done.size:,}, {time.perf_counter() - start:.2f} s")
