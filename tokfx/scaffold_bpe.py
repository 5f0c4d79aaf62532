"""Scaffold-BPE (Lian et al. 2024) as a registered trainer: BPE that flags the parts of a merge
left rare on their own as scaffold tokens, kept for merging but never emitted."""
from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence

from tokfx._bpe_train import train_scaffold_merges
from tokfx.alphabet import BYTES, Alphabet
from tokfx.bpe_trainer import packed_words, symbol_keys
from tokfx.registry import register_trainer
from tokfx.scaffold_vocab import ScaffoldVocab
from tokfx.tokenizer import Tokenizer


def train_scaffold_vocab(counts: Mapping[bytes, int], num_normal: int, *, alphabet: Alphabet = BYTES,
                         progress: bool = False) -> ScaffoldVocab:
    """Learn tokens until `num_normal` of them are normal (or nothing is left to merge or
    unflag). With `progress`, reports to stderr every 1,000 normal tokens and at the end."""
    start = time.perf_counter()

    def report(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - start, 1e-9)
        print(f"scaffold-bpe: {done:,}/{total:,} normal tokens, {rate:,.0f}/s", file=sys.stderr)

    merges, scaffold, _ = train_scaffold_merges(*packed_words(counts, alphabet), symbol_keys(alphabet),
                                                num_normal, progress=report if progress else None)
    vocab = ScaffoldVocab(alphabet, merges, scaffold)
    if progress:
        print(f"scaffold-bpe: {len(vocab.merges):,} merges, {len(vocab.scaffold):,} scaffold tokens"
              f" in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return vocab


@register_trainer("scaffold-bpe")
def train_scaffold_bpe_tokenizer(counts: Mapping[bytes, int], *, vocab_size: int,
                                 special_tokens: Sequence[str], pattern: str, alphabet: Alphabet = BYTES,
                                 progress: bool = False) -> Tokenizer:
    """Model ids: the base symbols, the normal learned tokens in the order they were made, then
    the special tokens; `vocab_size` counts these, not the scaffold tokens."""
    specials = list(dict.fromkeys(special_tokens))
    vocab = train_scaffold_vocab(counts, vocab_size - alphabet.size - len(specials), alphabet=alphabet,
                                 progress=progress)
    tokens = vocab.normal_tokens
    special_ids = {name: len(tokens) + i for i, name in enumerate(specials)}
    tokens += [alphabet.token_of_text(name) for name in specials]
    return Tokenizer(tokens, vocab.normal_merges, special_ids, pattern, "scaffold-bpe",
                     {"vocab_size": vocab_size}, alphabet, scaffold=vocab)
