"""tokfx: exact, fast tokenizer training and encoding for LLM pretraining data.

The stages, one package each: `pre_tokenizers` (special tokens, then a pattern), `models` (the
trainers: vocabulary construction), `segmenters` (a pre-token's symbols into ids); `Tokenizer`
joins them. Around them: `counting` (what training starts from), `formats` (corpus readers,
tokenizer files, counts, shards), `eval` (intrinsic metrics), `cli` (the `tokfx` command).
"""
import importlib
import importlib.util

from tokfx.version import __version__

# The names below are imported when first used (PEP 562), not with the package: importing any
# tokfx module runs this file, and a pipeline worker, which needs only the readers, the shard
# writers and Tokenizer, paid for the counters and the training front end besides
# (bench/README.md, per-worker cost).
_EXPORTS = {"count_pretokens": "tokfx.counting", "count_pretokens_file": "tokfx.counting",
            "TokenizerFileError": "tokfx.formats.untrusted", "train": "tokfx.models.training",
            "train_bpe": "tokfx.models.training", "PreTokenizer": "tokfx.pre_tokenizers",
            "Tokenizer": "tokfx.tokenizer"}

# The source folder imported in place of the installed package (Python run from the repository
# root puts it first on sys.path) has no compiled cores: say how to get them, at import.
if importlib.util.find_spec("tokfx._pretokenize") is None:
    raise ModuleNotFoundError(
        f"No module named 'tokfx._pretokenize' (tokfx was imported from {__path__[0]}, whose compiled"
        " extensions are not built: build them with `pip install -e .` or `python setup.py build_ext"
        " --inplace`, or run from outside the source folder to use the installed tokfx)", name="tokfx._pretokenize")

# The trainers, registered with the tokfx.json reader: reading a tokenizer file checks its
# algorithm and parameters against them (tokfx.formats.tokfx_json.ALGORITHMS).
import tokfx.models.registry  # noqa: E402,F401


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tokfx' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = ["PreTokenizer", "Tokenizer", "TokenizerFileError", "__version__", "count_pretokens", "count_pretokens_file",
           "train", "train_bpe"]
