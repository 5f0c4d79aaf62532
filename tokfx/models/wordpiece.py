"""WordPiece vocabulary construction as the PathPiece paper (Schmidt et al. 2024) describes it:
bottom-up merges like BPE, but each step merges the pair with the highest score
count(ab) / (count(a) x count(b)), a PMI-like ratio, instead of the most frequent pair
(docs/algorithms.md). Counts are standalone frequencies in the current segmentation of the
pre-tokens; scores are compared exactly; ties go to the higher count(ab), then as BPE. The
tokenizer segments with `greedy` (longest prefix first). Core: tokfx._bpe_train's PMI mode
(train_wordpiece_merges; twin: tokfx.reference.wordpiece_train).
"""
from __future__ import annotations

import time
from collections.abc import Mapping

from tokfx._bpe_train import train_wordpiece_merges
from tokfx.alphabet import Alphabet
from tokfx.models.base import Model, Target, Trainer
from tokfx.models.bpe.merge_loop import packed_words, rate_reporter, symbol_keys
from tokfx.progress import QUIET, Progress
from tokfx.segmenters.bpe import token_bytes

# The greedy segmenter's default max_width; a WordPiece vocabulary with wider tokens segments
# with max_width = its widest token, so that every token is used (as Hugging Face's WordPiece,
# which has no width limit).
GREEDY_WIDTH = 16


def wordpiece_merges(counts: Mapping[bytes, int], num_merges: int, alphabet: Alphabet,
                     progress: Progress = QUIET) -> list[tuple[int, int]]:
    """Up to `num_merges` WordPiece merges over the alphabet's base symbols; merge i creates id
    alphabet.size + i."""
    start = time.perf_counter()
    merges = train_wordpiece_merges(*packed_words(counts, alphabet), symbol_keys(alphabet), num_merges,
                                    progress=rate_reporter(progress, "wordpiece: {done:,}/{total:,} merges,"
                                                                     " {rate:,.0f} merges/s"))
    progress.report(f"wordpiece: {len(merges):,} merges in {time.perf_counter() - start:.2f} s")
    return merges


class WordPieceTrainer(Trainer):
    """Ids: the alphabet's base symbols, then one per merge in order (as BPE). The tokenizer
    keeps the merges (`with_segmenter("bpe")` applies them by rank) but segments with greedy."""
    name = "wordpiece"
    runs_out = "no pair left to merge"

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        alphabet = target.alphabet
        merges = wordpiece_merges(counts, target.learned, alphabet, progress)
        merge_ids = [(left, right, alphabet.size + rank) for rank, (left, right) in enumerate(merges)]
        tokens = token_bytes(merges, alphabet)
        width = max([GREEDY_WIDTH] + [len(t) for t in tokens[alphabet.size:]])
        return Model(tokens, {"vocab_size": target.vocab_size}, merge_ids, segmenter="greedy",
                     segmenter_params={"max_width": width})
