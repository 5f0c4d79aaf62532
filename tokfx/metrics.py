"""Tokenization metrics: base symbols and tokens per character, Rényi efficiency of the token
unigram distribution (Zouhar et al. 2023), and decode-error counts."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from tokfx.alphabet import Alphabet
from tokfx.pretokenize import PreTokenizer
from tokfx.tokenizer import Tokenizer


def base_symbols_per_char(text: str, alphabet: Alphabet, pattern: str = "gpt2") -> float:
    """Base symbols per character before any merge. Pre-tokenized first: with cjk each
    pre-token restarts the prefix state, so the count depends on the split."""
    _check_not_empty(text)
    data = text.encode("utf-8")
    symbols, _ = alphabet.map_pieces(data, PreTokenizer(pattern).piece_ends(data))
    return len(symbols) / len(text)


def tokens_per_char(tokenizer: Tokenizer, text: str) -> float:
    """Tokens per character, special-token text encoded as ordinary text."""
    _check_not_empty(text)
    return len(tokenizer.encode_ordinary(text)) / len(text)


def renyi_efficiency(counts: Mapping[int, int], vocab_size: int, alpha: float = 2.5) -> float:
    """H_alpha(p) / log(vocab_size) for the unigram distribution p of token counts; alpha = 1
    is Shannon entropy. 1 means every token of the vocabulary is used equally often."""
    if vocab_size < 2:
        raise ValueError(f"Rényi efficiency needs a vocabulary of at least 2 tokens, got {vocab_size}")
    total = sum(counts.values())
    if not total:
        raise ValueError("Rényi efficiency of no tokens is undefined")
    probabilities = [count / total for count in counts.values() if count]
    if alpha == 1:
        entropy = -sum(p * math.log(p) for p in probabilities)
    else:
        entropy = math.log(sum(p ** alpha for p in probabilities)) / (1 - alpha)
    return entropy / math.log(vocab_size)


def token_counts(outputs: Iterable[Sequence[int]]) -> Counter:
    """How often each id occurs over a set of id sequences."""
    counts: Counter = Counter()
    for ids in outputs:
        counts.update(ids)
    return counts


def decode_errors(tokenizer: Tokenizer, outputs: Iterable[Sequence[int]]) -> int:
    """Decode errors (each a U+FFFD that decode writes) summed over a set of id sequences, each
    decoded on its own, as a model's separate outputs would be."""
    return sum(tokenizer.decode_errors(ids) for ids in outputs)


def _check_not_empty(text: str) -> None:
    if not text:
        raise ValueError("a per-character rate of an empty text is undefined")
