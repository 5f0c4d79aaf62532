"""The trainer interface: what every vocabulary-construction algorithm takes and gives.

A trainer learns from `{pre-token bytes: count}` over an alphabet's base symbols (and, when it
`takes_lines`, from `{line bytes: count}` too) and returns a `Model`: its tokens in id order
(base symbols first), merges if it has them, the parameters to record, and the segmenter that
encodes with it. `finish` appends the special tokens, the same way for every trainer, and builds
the `Tokenizer`.

A trainer is a class with a `name`, a `Params` dataclass (its own parameters and their defaults,
which `tokfx.train` and the command line accept by name) and a `train` method; it is listed in
`tokfx.models.registry`.
"""
from __future__ import annotations

import math
import numbers
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import ClassVar

from tokfx.alphabet import Alphabet
from tokfx.progress import Progress
from tokfx.segmenters.scaffold_bpe import ScaffoldVocab
from tokfx.special_tokens import SpecialTokens
from tokfx.tokenizer import Tokenizer


@dataclass(frozen=True)
class Target:
    """What is asked of a trainer: `vocab_size` counts the base symbols, the learned tokens and
    the special tokens (de-duplicated), which come last."""
    vocab_size: int
    special_tokens: SpecialTokens
    alphabet: Alphabet
    pattern: str

    @property
    def learned(self) -> int:
        """How many tokens are left to learn beside the base symbols and the special tokens."""
        return self.vocab_size - self.alphabet.size - len(self.special_tokens)

    def without_specials(self, size: int) -> int:
        """A size counted as vocab_size is (special tokens included), without the special tokens."""
        return size - len(self.special_tokens)


@dataclass
class Model:
    """What a trainer learned. `tokens`: by id, as the alphabet holds tokens (base symbols
    first); `merges`: (left id, right id, merged id) in rank order; `params`: recorded in
    tokfx.json ("vocab_size" first); `scores`: a log probability per token (Unigram)."""
    tokens: list
    params: dict
    merges: list[tuple[int, int, int]] = field(default_factory=list)
    segmenter: str = "bpe"
    segmenter_params: dict | None = None
    scaffold: ScaffoldVocab | None = None
    scores: list[float] | None = None


# What a trainer that takes lines (Trainer.takes_lines) learns from besides the pre-token counts:
# the lines ("line": the texts' {line bytes: count}) or nothing more ("pretoken").
CONTEXTS = ("line", "pretoken")


class ShortVocabularyWarning(UserWarning):
    """Training ended below the vocabulary size asked for: the corpus had no more to learn."""


class Trainer(ABC):
    name: ClassVar[str]
    # Why this trainer can end below vocab_size (ShortVocabularyWarning).
    runs_out: ClassVar[str] = "the corpus has no more tokens to learn"
    # Whether it learns from line counts too (with its `context` parameter at "line").
    takes_lines: ClassVar[bool] = False

    @dataclass(frozen=True)
    class Params:
        """The trainer's own parameters, with their defaults (none for plain BPE)."""

    def __init__(self, params: Mapping | None = None):
        unknown = sorted(set(params or {}) - set(self.param_names()))
        if unknown:
            raise ValueError(f"algorithm {self.name!r} takes no parameter {unknown[0]!r} (it takes:"
                             f" {', '.join(self.param_names()) or 'none'})")
        for f in fields(self.Params):
            if f.name in (params or {}):
                _check_param(self.name, f.name, f.type, params[f.name])
        for name, why in self.inert_params(params or {}).items():
            raise ValueError(f"algorithm {self.name!r}: {name} {why}")
        self.params = self.Params(**(params or {}))

    @classmethod
    def param_names(cls) -> list[str]:
        return [f.name for f in fields(cls.Params)]

    @classmethod
    def inert_params(cls, params: Mapping) -> dict[str, str]:
        """Those of `params` (given by name) that the others leave without effect, each with
        why ("applies only with ..."): the trainer refuses them, and training_settings gives
        them to the segmenter alone where it takes them (pathpiece's seed with tie_break
        "longest" and a pathpiece-r segmenter). None by default."""
        return {}

    def reads_lines(self) -> bool:
        """Whether this training learns from line counts as well (context="line")."""
        return self.takes_lines and self.params.context == "line"

    @abstractmethod
    def train(self, counts: Mapping[bytes, int], target: Target, progress: Progress,
              lines: Mapping[bytes, int] | None = None) -> Model:
        """Learn from the pre-token counts (and `lines`, when `reads_lines()`)."""


def check_max_width(max_width: int) -> None:
    if max_width < 1:
        raise ValueError(f"max_width must be at least 1, got {max_width}")


# The parameter types the trainers declare (their Params' annotations, as written), and what
# each accepts; a parameter of another type is not checked here.
_ACCEPTS = {
    "int": ("an int", lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)),
    "float": ("a number", lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)),
    "str": ("a string", lambda v: isinstance(v, str)),
    "Sequence[int]": ("a list of ints", lambda v: isinstance(v, (list, tuple)) and all(
        isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in v)),
    "None": ("None", lambda v: v is None),
}


def _check_param(algorithm: str, name: str, annotation: str, value: object) -> None:
    """A TypeError naming the parameter unless `value` is of its declared type."""
    kinds = [kind.strip() for kind in str(annotation).split("|")]
    if any(kind not in _ACCEPTS for kind in kinds) or any(_ACCEPTS[kind][1](value) for kind in kinds):
        return
    raise TypeError(f"algorithm {algorithm!r}: {name} must be {' or '.join(_ACCEPTS[k][0] for k in kinds)},"
                    f" not {value!r}")


def finish(model: Model, trainer: Trainer, target: Target) -> Tokenizer:
    """The tokenizer of a learned model: the special tokens appended after its tokens. A
    vocabulary smaller than asked for is a ShortVocabularyWarning, not an error: the tokenizer
    is as good as the corpus allows."""
    tokens = list(model.tokens)
    size = len(tokens) + len(target.special_tokens)
    if size < target.vocab_size:
        warnings.warn(ShortVocabularyWarning(f"{trainer.name}: {trainer.runs_out}: vocabulary {size:,}"
                                             f" of the {target.vocab_size:,} asked for"), stacklevel=3)
    special_ids = target.special_tokens.ids_after(len(tokens))
    tokens += [target.alphabet.token_of_text(name) for name in target.special_tokens]
    scores = None if model.scores is None else list(model.scores) + [None] * (len(tokens) - len(model.scores))
    return Tokenizer(tokens, model.merges, special_ids, target.pattern, trainer.name, model.params,
                     target.alphabet, model.segmenter, model.segmenter_params, model.scaffold, scores)
