"""Byte-level BPE as a registered trainer, and the file-in `train_bpe` API."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from tokfx.alphabet import BYTES, Alphabet
from tokfx.bpe_trainer import token_bytes, train_bpe_merges
from tokfx.parallel_count import count_pretokens_file
from tokfx.registry import register_trainer
from tokfx.tokenizer import Tokenizer
from tokfx.training import check_vocab_size, train


@register_trainer("bpe")
def train_bpe_tokenizer(counts: Mapping[bytes, int], *, vocab_size: int,
                        special_tokens: Sequence[str], pattern: str, alphabet: Alphabet = BYTES,
                        progress: bool = False) -> Tokenizer:
    """Ids: the alphabet's base symbols (0-255 for bytes), then one per merge in order, then the
    special tokens."""
    specials = list(dict.fromkeys(special_tokens))
    merges = train_bpe_merges(counts, vocab_size - alphabet.size - len(specials), alphabet=alphabet,
                              progress=progress)
    tokens = token_bytes(merges, alphabet)
    first_merged = alphabet.size
    id_merges = [(left, right, first_merged + rank) for rank, (left, right) in enumerate(merges)]
    special_ids = {name: len(tokens) + i for i, name in enumerate(specials)}
    tokens += [alphabet.token_of_text(name) for name in specials]
    return Tokenizer(tokens, id_merges, special_ids, pattern, "bpe", {"vocab_size": vocab_size},
                     alphabet)


def train_bpe(input_path: str | os.PathLike, vocab_size: int, special_tokens: Sequence[str],
              pattern: str = "gpt2", processes: int | None = None,
              progress: bool = False) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train byte-level BPE on a text file: (vocab {id: bytes}, merges [(bytes, bytes)])."""
    check_vocab_size(vocab_size, special_tokens)
    counts = count_pretokens_file(input_path, pattern, special_tokens, processes)
    tokenizer = train(counts, "bpe", vocab_size, special_tokens, pattern, progress=progress)
    return tokenizer.vocab, tokenizer.merges
