"""tokfx: exact, fast tokenizer training and encoding for LLM pretraining data.

The stages, one package each: `pre_tokenizers` (special tokens, then a pattern), `models` (the
trainers: vocabulary construction), `segmenters` (a pre-token's symbols into ids); `Tokenizer`
joins them. Around them: `counting` (what training starts from), `formats` (corpus readers,
tokenizer files, counts, shards), `eval` (intrinsic metrics), `cli` (the `tokfx` command).
"""
from tokfx.version import __version__
from tokfx.counting import count_pretokens, count_pretokens_file
from tokfx.formats.untrusted import TokenizerFileError
from tokfx.models.training import train, train_bpe
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.tokenizer import Tokenizer

__all__ = ["PreTokenizer", "Tokenizer", "TokenizerFileError", "__version__", "count_pretokens", "count_pretokens_file",
           "train", "train_bpe"]
