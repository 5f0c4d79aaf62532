"""Segmenters, the third stage: how a `Tokenizer` turns one pre-token's base symbols into ids.

The registry below names each segmenter, its parameters with their defaults, and the factory of
its encoder (an object whose `encode_pieces(data, ends)` encodes pre-tokens):

- `bpe` (`bpe.py`): merges by rank; needs the merges (Scaffold-BPE's expanded ones, then
  demolition, when the tokenizer has a scaffold vocabulary). Params (0 or 1, default 0):
  `ignore_merges`, a pre-token that is itself a token is that token, unmerged (Hugging Face's
  BPE option of that name); `rank_by_id`, a merge ranks by its merged token's id instead of its
  place in the merges, and merges apply one at a time, the leftmost first (tiktoken's rule, with
  ids that are tiktoken ranks: tokfx.formats.tiktoken_ranks).
- `pathpiece-l`, `pathpiece-r`, `greedy` (`shortest_path.py`): run over any vocabulary. Params:
  `max_width` (longest token used, in base symbols; default 16, the PathPiece paper's L) and for
  `pathpiece-r` a `seed` (default 0; each pre-token draws from the seed and its own symbols, so
  encoding is deterministic however the text is cut).
- `likelihood` (`shortest_path.py`): the most likely segmentation under the tokens' log
  probabilities (Viterbi; a Unigram vocabulary's `scores`), the longest last token winning ties.
  Params: `max_width`, and `float_bits`: 64 (path scores summed in float64, as Hugging Face
  tokenizers does) or 32 (in float32, as sentencepiece does; a permutation of the same tokens
  then scores differently and the rounding chooses). With 32 the running sum is carried from
  piece to piece of one text, as sentencepiece's Viterbi runs over the whole text, and pieces
  are not cached.

- `huggingface` (`huggingface_model.py`): a tokenizer.json's own WordPiece, WordLevel or
  Unigram model, run as `tokenizers` runs it (tokfx.formats.huggingface_models); only a
  tokenizer loaded from one (its `pipeline`) has it. No params.

Over an alphabet with an unknown symbol, every encoder writes a run of unknown tokens as one, as
sentencepiece does (`unknown_runs.py`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tokfx.limits import MAX_WIDTH
from tokfx.segmenters.bpe import merges_encoder
from tokfx.segmenters.huggingface_model import tokenizer_json_model
from tokfx.segmenters.shortest_path import path_encoder
from tokfx.segmenters.unknown_runs import joining_unknown_runs


@dataclass(frozen=True)
class Segmenter:
    defaults: Mapping[str, int]  # every parameter it takes, with its default
    # (tokens=, merges= (flat array('i'), three ids a merge), symbol_ids=, special_ids=, alphabet=,
    # scaffold=, scores=, **params)
    build: Callable
    needs_merges: bool = False
    needs_scores: bool = False
    # A token for every base symbol of the alphabet (`symbol_ids`); a tokenizer.json's own
    # model looks its text up instead.
    needs_base_symbols: bool = True

    def __post_init__(self):
        # Every encoder joins runs of the unknown token where the alphabet has one (unknown_runs.py).
        object.__setattr__(self, "build", joining_unknown_runs(self.build))


SEGMENTERS: dict[str, Segmenter] = {
    "bpe": Segmenter({"ignore_merges": 0, "rank_by_id": 0}, merges_encoder, needs_merges=True),
    "pathpiece-l": Segmenter({"max_width": 16}, path_encoder("pathpiece-l")),
    "pathpiece-r": Segmenter({"max_width": 16, "seed": 0}, path_encoder("pathpiece-r")),
    "greedy": Segmenter({"max_width": 16}, path_encoder("greedy")),
    "likelihood": Segmenter({"max_width": 16, "float_bits": 64}, path_encoder("likelihood"), needs_scores=True),
    "huggingface": Segmenter({}, tokenizer_json_model, needs_base_symbols=False),
}


def get_segmenter(name: str) -> Segmenter:
    try:
        return SEGMENTERS[name]
    except KeyError:
        raise ValueError(f"unknown segmenter {name!r}; known: {', '.join(SEGMENTERS)}") from None


def full_segmenter_params(name: str, params: Mapping | None) -> dict:
    """The segmenter's full params: its defaults updated with `params` (unknown keys refused)."""
    full = dict(get_segmenter(name).defaults)
    unknown = set(params or {}) - set(full)
    if unknown:
        raise ValueError(f"segmenter {name!r} takes no parameter {sorted(unknown)[0]!r}"
                         f" (it takes: {', '.join(full) or 'none'})")
    full.update(params or {})
    for key, value in full.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"segmenter {name!r}: {key} must be an integer, got {value!r}")
    for flag in ("ignore_merges", "rank_by_id"):
        if full.get(flag, 0) not in (0, 1):
            raise ValueError(f"segmenter {name!r}: {flag} must be 0 or 1, got {full[flag]}")
    if full.get("float_bits", 64) not in (32, 64):
        raise ValueError(f"segmenter {name!r}: float_bits must be 32 or 64, got {full['float_bits']}")
    if not 1 <= full.get("max_width", 1) <= MAX_WIDTH:  # a C int in the segmenter; no token is wider
        raise ValueError(f"segmenter {name!r}: max_width must be in 1..{MAX_WIDTH}, got {full['max_width']}")
    return full
