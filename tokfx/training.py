"""`tokfx.train`: texts or pre-token counts in, a trained `Tokenizer` out."""
from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence

from tokfx.alphabet import BYTES, Alphabet
from tokfx.pretokenize import count_lines, count_pretokens, resolve_pattern
from tokfx.registry import LINE_TRAINERS, get_trainer
from tokfx.segmenters import DEFAULT_PARAMS as SEGMENTER_PARAMS
from tokfx.segmenters import full_segmenter_params
from tokfx.tokenizer import Tokenizer


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str], alphabet: Alphabet = BYTES) -> None:
    smallest = alphabet.size + len(set(special_tokens))
    if vocab_size < smallest:
        raise ValueError(f"vocab size {vocab_size} is smaller than the alphabet ({alphabet.size})"
                         f" plus {len(set(special_tokens))} special tokens = {smallest}")


# What every trainer takes (registry.py); the rest of a trainer's keywords are its own params.
_COMMON = {"counts", "vocab_size", "special_tokens", "pattern", "alphabet", "progress", "lines"}
_NEEDS_TEXT = ("context='line' needs running text: tokfx.train(texts, ...), or the counts with the"
               " texts' line counts (lines=count_lines(texts)), or context='pretoken'")


def trainer_params(algorithm: str) -> list[str]:
    """The names of the algorithm's own parameters."""
    return [name for name in inspect.signature(get_trainer(algorithm)).parameters
            if name not in _COMMON]


def trains_on_lines(algorithm: str, params: Mapping) -> bool:
    """Whether the trainer, with these params, learns from line counts as well (context="line",
    given or its default)."""
    if algorithm not in LINE_TRAINERS:
        return False
    return params.get("context", inspect.signature(get_trainer(algorithm)).parameters["context"].default) == "line"


def training_settings(algorithm: str, segmenter: str | None = None, **options) -> dict:
    """`tokfx.train` keywords from command-line options (None: not given): the algorithm's own
    params, and `segmenter` with its params. `max_width` (L) goes to both where they take it."""
    given = {name: value for name, value in options.items() if value is not None}
    own = trainer_params(algorithm)
    settings = {name: value for name, value in given.items() if name in own}
    if segmenter is not None:
        takes = SEGMENTER_PARAMS.get(segmenter, {})
        settings["segmenter"] = segmenter
        settings["segmenter_params"] = {name: value for name, value in given.items() if name in takes}
    leftover = set(given) - set(own) - set(settings.get("segmenter_params", {}))
    if leftover:
        raise ValueError(f"{sorted(leftover)[0]} does not apply to algorithm {algorithm!r}"
                         + (f" with segmenter {segmenter!r}" if segmenter else " (give a --segmenter?)"))
    return settings


def train(texts_or_counts: Iterable[str] | str | Mapping[bytes, int], algorithm: str = "bpe",
          vocab_size: int = 32000, special_tokens: Sequence[str] = ("<|endoftext|>",),
          pattern: str = "gpt2", alphabet: str = "bytes", cjk_groups: Sequence[int] | None = None,
          progress: bool = False, segmenter: str | None = None,
          segmenter_params: Mapping | None = None, lines: Mapping[bytes, int] | None = None,
          **params) -> Tokenizer:
    """Train a tokenizer with the named algorithm.

    `texts_or_counts`: a text, an iterable of texts (special tokens in them are split out and
    never trained on), or `{pre-token bytes: count}` already counted with `pattern`.
    `vocab_size` counts the alphabet, the learned tokens and the special tokens.
    `alphabet`: "bytes", or "cjk" (CJK_REMAP.md) with `cjk_groups` (default 0x39, 0x3A, 0x3B).
    `params`: the algorithm's own (`trainer_params`). `segmenter`: segment with this instead of
    the algorithm's own (Tokenizer.with_segmenter, with `segmenter_params`).
    `context="line"` (for trainers registered with takes_lines, e.g. sage, whose default it is):
    the trainer also gets the texts' line counts (`count_lines`); from counts, give them as
    `lines` (the CLI and the pipeline count both in one pass).
    """
    base = Alphabet.named(alphabet, cjk_groups)
    trainer = get_trainer(algorithm)
    unknown = sorted(set(params) - set(trainer_params(algorithm)))
    if unknown:
        raise ValueError(f"algorithm {algorithm!r} takes no parameter {unknown[0]!r} (it takes:"
                         f" {', '.join(trainer_params(algorithm)) or 'none'})")
    resolve_pattern(pattern)
    check_vocab_size(vocab_size, special_tokens, base)
    if segmenter is not None:
        full_segmenter_params(segmenter, segmenter_params)  # a bad name fails now, not after training
    extra = {}
    if trains_on_lines(algorithm, params):
        if isinstance(texts_or_counts, Mapping):
            if lines is None:
                raise ValueError(_NEEDS_TEXT)
            extra["lines"] = lines
        else:
            # Read twice: for the pre-token counts and the line counts.
            texts_or_counts = [texts_or_counts] if isinstance(texts_or_counts, str) else list(texts_or_counts)
            extra["lines"] = count_lines(texts_or_counts, special_tokens)
    elif lines is not None:
        raise ValueError("lines are only read with context='line'")
    if isinstance(texts_or_counts, Mapping):
        counts = texts_or_counts
    else:
        counts = count_pretokens(texts_or_counts, pattern, special_tokens)
    tokenizer = trainer(counts, vocab_size=vocab_size, special_tokens=tuple(special_tokens),
                        pattern=pattern, alphabet=base, progress=progress, **params, **extra)
    if segmenter is not None:
        tokenizer = tokenizer.with_segmenter(segmenter, **(segmenter_params or {}))
    return tokenizer
