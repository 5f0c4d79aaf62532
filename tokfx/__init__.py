"""tokfx: exact, fast tokenizer training and encoding for LLM pretraining data.

The stages, one package each: `pre_tokenizers` (special tokens, then a pattern), `models` (the
trainers: vocabulary construction), `segmenters` (a pre-token's symbols into ids); `Tokenizer`
joins them. Around them: `counting` (what training starts from), `formats` (corpus readers,
tokenizer files, counts, shards), `eval` (intrinsic metrics), `cli` (the `tokfx` command).
"""
from tokfx.version import __version__

try:
    from tokfx.counting import count_pretokens, count_pretokens_file
    from tokfx.formats.untrusted import TokenizerFileError
    from tokfx.models.training import train, train_bpe
    from tokfx.pre_tokenizers import PreTokenizer
    from tokfx.tokenizer import Tokenizer
except ModuleNotFoundError as exc:
    # The source folder imported in place of the installed package (Python run from the
    # repository root puts it first on sys.path) has no compiled cores: say how to get them.
    if not (exc.name or "").startswith("tokfx._"):
        raise
    raise ModuleNotFoundError(
        f"{exc} (tokfx was imported from {__path__[0]}, whose compiled extensions are not built:"
        " build them with `pip install -e .` or `python setup.py build_ext --inplace`, or run"
        " from outside the source folder to use the installed tokfx)", name=exc.name) from None

__all__ = ["PreTokenizer", "Tokenizer", "TokenizerFileError", "__version__", "count_pretokens", "count_pretokens_file",
           "train", "train_bpe"]
