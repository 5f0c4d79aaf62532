"""Pre-tokenization, the first stage: special tokens cut out, then each chunk split by a named
pattern (`patterns`) in the native splitter or by a user regex (`pre_tokenizer`), or by several
named patterns in turn (`sequence`, as a Hugging Face Sequence of Splits); `boundaries`
says where text can be cut without changing its pieces (parallel counting, streaming encode).
A Hugging Face tokenizer.json's own stages: `huggingface` (its pre-tokenizers), `added_tokens`,
and `byte_level` (GPT-2's byte alphabet, which byte-level files spell tokens in)."""
from tokfx.pre_tokenizers.patterns import PATTERNS
from tokfx.pre_tokenizers.pre_tokenizer import PreTokenizer, resolve_pattern
from tokfx.pre_tokenizers.sequence import sequence_piece_ends

__all__ = ["PATTERNS", "PreTokenizer", "resolve_pattern", "sequence_piece_ends"]
