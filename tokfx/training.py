"""`tokfx.train`: texts or pre-token counts in, a trained `Tokenizer` out."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tokfx.alphabet import BYTES, Alphabet
from tokfx.pretokenize import count_pretokens, resolve_pattern
from tokfx.registry import get_trainer
from tokfx.tokenizer import Tokenizer


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str], alphabet: Alphabet = BYTES) -> None:
    smallest = alphabet.size + len(set(special_tokens))
    if vocab_size < smallest:
        raise ValueError(f"vocab size {vocab_size} is smaller than the alphabet ({alphabet.size})"
                         f" plus {len(set(special_tokens))} special tokens = {smallest}")


def train(texts_or_counts: Iterable[str] | str | Mapping[bytes, int], algorithm: str = "bpe",
          vocab_size: int = 32000, special_tokens: Sequence[str] = ("<|endoftext|>",),
          pattern: str = "gpt2", alphabet: str = "bytes", cjk_groups: Sequence[int] | None = None,
          progress: bool = False, **params) -> Tokenizer:
    """Train a tokenizer with the named algorithm.

    `texts_or_counts`: a text, an iterable of texts (special tokens in them are split out and
    never trained on), or `{pre-token bytes: count}` already counted with `pattern`.
    `vocab_size` counts the alphabet, the learned tokens and the special tokens.
    `alphabet`: "bytes", or "cjk" (CJK_REMAP.md) with `cjk_groups` (default 0x39, 0x3A, 0x3B).
    """
    base = Alphabet.named(alphabet, cjk_groups)
    trainer = get_trainer(algorithm)
    resolve_pattern(pattern)
    check_vocab_size(vocab_size, special_tokens, base)
    if isinstance(texts_or_counts, Mapping):
        counts = texts_or_counts
    else:
        counts = count_pretokens(texts_or_counts, pattern, special_tokens)
    return trainer(counts, vocab_size=vocab_size, special_tokens=tuple(special_tokens),
                   pattern=pattern, alphabet=base, progress=progress, **params)
