"""Normalization, the stage before pre-tokenization: text rewritten as a whole before special
tokens are cut out and the rest split, as in Hugging Face tokenizers' normalizers.

- `sentencepiece`: sentencepiece's normalizer (its precompiled rules, decoded by `charsmap`, then
  its whitespace handling).
- `surrogates`: what every tokenizer does to text that UTF-8 cannot encode (lone surrogates).
"""
from tokfx.normalizers.sentencepiece import SentencePieceNormalizer

__all__ = ["SentencePieceNormalizer", "named_normalizer"]


def named_normalizer(name: str) -> SentencePieceNormalizer:
    """The normalizer a named pattern implies (tokfx.pre_tokenizers.patterns.NORMALIZED):
    `sentencepiece`: spaces as U+2581 with a dummy one in front, nothing else changed (no rules,
    extra whitespace kept, as Llama 2 has it: no text is lost)."""
    if name != "sentencepiece":
        raise ValueError(f"unknown normalizer {name!r}; known: sentencepiece")
    return SentencePieceNormalizer(remove_extra_whitespaces=False)
