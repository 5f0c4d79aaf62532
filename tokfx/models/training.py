"""`tokfx.train`: texts or pre-token counts in, a trained `Tokenizer` out; `tokfx.train_bpe`:
the same from a text file, as the cs336 assignment's interface has it."""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from tokfx.alphabet import (BYTES, CHARACTERS, DEFAULT_CHARACTER_COVERAGE, Alphabet,
                            check_character_coverage)
from tokfx.limits import MAX_TOKENS
from tokfx.counting import count_lines, count_pretokens
from tokfx.counting.text_file import count_text_file
from tokfx.formats.documents import CorpusError
from tokfx.models.base import Target, finish
from tokfx.models.registry import get_trainer
from tokfx.pre_tokenizers import resolve_pattern
from tokfx.progress import Progress
from tokfx.segmenters import full_segmenter_params, get_segmenter
from tokfx.special_tokens import DEFAULT_SPECIAL, SpecialTokens, check_special_tokens
from tokfx.tokenizer import Tokenizer

_NEEDS_TEXT = ("context='line' needs running text: tokfx.train(texts, ...), or the counts with the"
               " texts' line counts (lines=count_lines(texts)), or context='pretoken'")


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str], alphabet: Alphabet = BYTES) -> None:
    """A TypeError unless `vocab_size` is an int (not a bool, a float or a str), a ValueError
    unless it holds the alphabet and the special tokens and is within tokfx.limits."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r} ({type(vocab_size).__name__})")
    smallest = alphabet.size + len(check_special_tokens(special_tokens))
    if vocab_size > MAX_TOKENS:
        raise ValueError(f"vocab size {vocab_size:,} is larger than {MAX_TOKENS:,} (tokfx.limits)")
    if vocab_size < smallest:
        raise ValueError(f"vocab size {vocab_size} is smaller than the alphabet ({alphabet.size}"
                         f"{f', of which {len(alphabet.characters):,} characters' if alphabet.characters else ''})"
                         f" plus {len(set(special_tokens))} special tokens = {smallest}")


def trainer_params(algorithm: str) -> list[str]:
    """The names of the algorithm's own parameters."""
    return get_trainer(algorithm).param_names()


def trains_on_lines(algorithm: str, params: Mapping) -> bool:
    """Whether the trainer, with these params, learns from line counts as well (context="line",
    given or its default)."""
    trainer = get_trainer(algorithm)
    own = {name: value for name, value in params.items() if name in trainer.param_names()}
    return trainer(own).reads_lines()


def training_settings(algorithm: str, segmenter: str | None = None, **options) -> dict:
    """`tokfx.train` keywords from command-line options (None: not given): the algorithm's own
    params, and `segmenter` with its params. `max_width` (L) goes to both where they take it, and
    so does `seed` (pathpiece's with tie_break "random", sage's word2vec's, pathpiece-r's); an
    own param the others leave inert (Trainer.inert_params) goes to the segmenter alone."""
    given = {name: value for name, value in options.items() if value is not None}
    trainer = get_trainer(algorithm)
    own = {name: value for name, value in given.items() if name in trainer.param_names()}
    inert = trainer.inert_params(own)
    settings = {name: value for name, value in own.items() if name not in inert}
    routed = set(settings)
    if segmenter is not None:
        takes = get_segmenter(segmenter).defaults
        settings["segmenter"] = segmenter
        settings["segmenter_params"] = {name: value for name, value in given.items() if name in takes}
        routed |= set(settings["segmenter_params"])
    leftover = sorted(set(given) - routed)
    if leftover:
        name = leftover[0]
        raise ValueError(f"{name} does not apply to algorithm {algorithm!r}"
                         + (f" (it {inert[name]})" if name in inert else "")
                         + (f" with segmenter {segmenter!r}" if segmenter else " (give a --segmenter?)"))
    return settings


def train(texts_or_counts: Iterable[str] | str | Mapping[bytes, int], algorithm: str = "bpe",
          vocab_size: int = 32000, special_tokens: Sequence[str] = (DEFAULT_SPECIAL,),
          pattern: str = "gpt2", alphabet: str = "bytes", cjk_groups: Sequence[int] | None = None,
          character_coverage: float | None = None, progress: bool = False, segmenter: str | None = None,
          segmenter_params: Mapping | None = None, lines: Mapping[bytes, int] | None = None,
          **params) -> Tokenizer:
    """Train a tokenizer with the named algorithm.

    `texts_or_counts`: a text, an iterable of texts (special tokens in them are split out and
    never trained on), or `{pre-token bytes: count}` already counted with `pattern`.
    `vocab_size` counts the alphabet, the learned tokens and the special tokens.
    `alphabet`: "bytes", "cjk" (docs/cjk_remap.md) with `cjk_groups` (default 0x39, 0x3A, 0x3B),
    or "chars" / "chars-cjk": the characters covering `character_coverage` (default 0.9995) of
    the counted text, other characters spelled as bytes (docs/alphabets.md).
    `params`: the algorithm's own (`trainer_params`). `segmenter`: segment with this instead of
    the algorithm's own (Tokenizer.with_segmenter, with `segmenter_params`).
    `context="line"` (for trainers that take lines, e.g. sage, whose default it is): the trainer
    also gets the texts' line counts (`count_lines`); from counts, give them as `lines` (the CLI
    and the pipeline count both in one pass).
    """
    # Every argument is checked before the (maybe long) counting and training.
    special_tokens = list(check_special_tokens(special_tokens))
    base = Alphabet.named(alphabet, cjk_groups)
    check_character_coverage(base, character_coverage)
    trainer = get_trainer(algorithm)(params)
    resolve_pattern(pattern)
    check_vocab_size(vocab_size, special_tokens, base)
    if segmenter is not None:
        full_segmenter_params(segmenter, segmenter_params)  # a bad name fails now, not after training
    if trainer.reads_lines():
        if isinstance(texts_or_counts, Mapping):
            if lines is None:
                raise ValueError(_NEEDS_TEXT)
        else:
            # Read twice: for the pre-token counts and the line counts.
            texts_or_counts = [texts_or_counts] if isinstance(texts_or_counts, str) else list(texts_or_counts)
            lines = count_lines(texts_or_counts, special_tokens)
    elif lines is not None:
        raise ValueError("lines are only read with context='line'")
    if isinstance(texts_or_counts, Mapping):
        counts = texts_or_counts
    else:
        counts = count_pretokens(texts_or_counts, pattern, special_tokens)
    if not len(counts):  # else a tokenizer of the alphabet alone, that looks trained
        raise CorpusError("nothing to train on: the corpus gave no pre-token (no document, or every"
                          " one empty or rejected)")
    if base.name in CHARACTERS:
        base = base.covering(counts, DEFAULT_CHARACTER_COVERAGE if character_coverage is None else character_coverage)
        check_vocab_size(vocab_size, special_tokens, base)
    target = Target(vocab_size, SpecialTokens(special_tokens), base, pattern)
    tokenizer = finish(trainer.train(counts, target, Progress(progress), lines), trainer, target)
    if segmenter is not None:
        tokenizer = tokenizer.with_segmenter(segmenter, **(segmenter_params or {}))
    return tokenizer


def train_bpe(input_path: str | os.PathLike, vocab_size: int, special_tokens: Sequence[str],
              pattern: str = "gpt2", processes: int | None = None,
              progress: bool = False) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train byte-level BPE on a text file: (vocab {id: bytes}, merges [(bytes, bytes)])."""
    check_vocab_size(vocab_size, special_tokens)
    counts = count_text_file(input_path, pattern, special_tokens, processes).pretokens
    tokenizer = train(counts, "bpe", vocab_size, special_tokens, pattern, progress=progress)
    return tokenizer.vocab, tokenizer.merges
