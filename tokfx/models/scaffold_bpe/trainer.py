"""Scaffold-BPE (Lian et al. 2024): BPE that flags the parts of a merge left rare on their own as
scaffold tokens, kept for merging but never emitted (docs/algorithms.md; the expanded vocabulary
and its demolition: tokfx.segmenters.scaffold_bpe)."""
from __future__ import annotations

import time
from collections.abc import Mapping

from tokfx._bpe_train import train_scaffold_merges
from tokfx.alphabet import BYTES, Alphabet
from tokfx.models.base import Model, Target, Trainer
from tokfx.models.bpe.merge_loop import packed_words, rate_reporter, symbol_keys
from tokfx.progress import QUIET, Progress
from tokfx.segmenters.scaffold_bpe import ScaffoldVocab


def train_scaffold_vocab(counts: Mapping[bytes, int], num_normal: int, *, alphabet: Alphabet = BYTES,
                         progress: Progress = QUIET) -> ScaffoldVocab:
    """Learn tokens until `num_normal` of them are normal (or nothing is left to merge or
    unflag). Progress: a line every 1,000 normal tokens and one at the end."""
    start = time.perf_counter()
    report = rate_reporter(progress, "scaffold-bpe: {done:,}/{total:,} normal tokens, {rate:,.0f}/s")
    merges, scaffold, _ = train_scaffold_merges(*packed_words(counts, alphabet), symbol_keys(alphabet),
                                                num_normal, progress=report)
    vocab = ScaffoldVocab(alphabet, merges, scaffold)
    progress.report(f"scaffold-bpe: {len(vocab.merges):,} merges, {len(vocab.scaffold):,} scaffold"
                    f" tokens in {time.perf_counter() - start:.2f} s")
    return vocab


class ScaffoldBpeTrainer(Trainer):
    """Model ids: the base symbols, then the normal learned tokens in the order they were made;
    `vocab_size` counts these (and the special tokens), not the scaffold tokens."""
    name = "scaffold-bpe"
    runs_out = "no pair left to merge"

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        vocab = train_scaffold_vocab(counts, target.learned, alphabet=target.alphabet, progress=progress)
        return Model(vocab.normal_tokens, {"vocab_size": target.vocab_size}, vocab.normal_merges,
                     scaffold=vocab)
