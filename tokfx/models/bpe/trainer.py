"""Byte-level BPE (the GPT-2 family): merge the most frequent pair of tokens until the vocabulary
is full, ties to the lexicographically greater pair (docs/algorithms.md)."""
from __future__ import annotations

from collections.abc import Mapping

from tokfx.models.base import Model, Target, Trainer
from tokfx.models.bpe.merge_loop import train_bpe_merges
from tokfx.progress import Progress
from tokfx.segmenters.bpe import token_bytes


class BpeTrainer(Trainer):
    """Ids: the alphabet's base symbols (0-255 for bytes), then one per merge in order."""
    name = "bpe"
    runs_out = "no pair left to merge"

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        alphabet = target.alphabet
        merges = train_bpe_merges(counts, target.learned, alphabet=alphabet, progress=progress)
        merge_ids = [(left, right, alphabet.size + rank) for rank, (left, right) in enumerate(merges)]
        return Model(token_bytes(merges, alphabet), {"vocab_size": target.vocab_size}, merge_ids)
