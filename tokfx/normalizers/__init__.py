"""Normalization, the stage before pre-tokenization: text rewritten as a whole before special
tokens are cut out and the rest split, as in Hugging Face tokenizers' normalizers.
`sentencepiece`: sentencepiece's normalizer (its precompiled rules, then its whitespace
handling)."""
from tokfx.normalizers.sentencepiece import SentencePieceNormalizer

__all__ = ["SentencePieceNormalizer"]
