"""BPE: merge the most frequent pair of tokens until the vocabulary is full, ties to the
lexicographically greater pair (docs/algorithms.md). Over bytes, the GPT-2 family; over a chars
alphabet, the sentencepiece family, which encodes with every split of a learned token
(every_split_merges) where byte-level BPE applies only the learned pairs."""
from __future__ import annotations

from collections.abc import Mapping

from tokfx.models.base import Model, Target, Trainer
from tokfx.models.bpe.merge_loop import train_bpe_merges
from tokfx.progress import Progress
from tokfx.segmenters.bpe import every_split_merges, token_bytes


class BpeTrainer(Trainer):
    """Ids: the alphabet's base symbols (0-255 for bytes), then one per merge in order."""
    name = "bpe"
    runs_out = "no pair left to merge"

    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        alphabet = target.alphabet
        merges = train_bpe_merges(counts, target.learned, alphabet=alphabet, progress=progress)
        tokens = token_bytes(merges, alphabet)
        if alphabet.characters:
            merge_ids = every_split_merges(tokens, range(alphabet.size, len(tokens)))
        else:
            merge_ids = [(left, right, alphabet.size + rank) for rank, (left, right) in enumerate(merges)]
        return Model(tokens, {"vocab_size": target.vocab_size}, merge_ids)
