"""tokfx: exact, fast tokenizer training and encoding for LLM pretraining data."""
__version__ = "0.1.0"

from tokfx.pretokenize import PreTokenizer, count_pretokens  # noqa: E402
from tokfx.parallel_count import count_pretokens_file  # noqa: E402
from tokfx.tokenizer import Tokenizer  # noqa: E402
from tokfx.training import train  # noqa: E402
from tokfx.bpe import train_bpe  # noqa: E402  (also registers the "bpe" trainer)
import tokfx.scaffold_bpe  # noqa: E402, F401  (registers the "scaffold-bpe" trainer)
import tokfx.pathpiece  # noqa: E402,F401  (registers the "pathpiece" trainer)
import tokfx.sage  # noqa: E402,F401  (registers the "sage" trainer)

__all__ = ["PreTokenizer", "Tokenizer", "count_pretokens", "count_pretokens_file", "train",
           "train_bpe"]
