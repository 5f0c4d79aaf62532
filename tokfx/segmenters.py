"""Segmenters by name: how a `Tokenizer` turns one pre-token's base symbols into token ids.

- `bpe`: merges by rank (tokfx._bpe_encode); needs the merges.
- `pathpiece-l`, `pathpiece-r`, `greedy` (tokfx._shortest_path): run over any vocabulary, merges
  or not. Params: `max_width` (longest token used, in base symbols; default 16, the PathPiece
  paper's L) and for `pathpiece-r` a `seed` (default 0; each pre-token draws from the seed and
  its own symbols, so encoding is deterministic however the text is cut).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from tokfx._bpe_encode import BPEEncoder
from tokfx._shortest_path import PathSegmenter
from tokfx.alphabet import Alphabet

DEFAULT_PARAMS = {
    "bpe": {},
    "pathpiece-l": {"max_width": 16},
    "pathpiece-r": {"max_width": 16, "seed": 0},
    "greedy": {"max_width": 16},
}
SEGMENTERS = tuple(DEFAULT_PARAMS)


def full_segmenter_params(name: str, params: Mapping | None) -> dict:
    """The segmenter's full params: its defaults updated with `params` (unknown keys refused)."""
    if name not in DEFAULT_PARAMS:
        raise ValueError(f"unknown segmenter {name!r}; known: {', '.join(SEGMENTERS)}")
    full = dict(DEFAULT_PARAMS[name])
    unknown = set(params or {}) - set(full)
    if unknown:
        raise ValueError(f"segmenter {name!r} takes no parameter {sorted(unknown)[0]!r}"
                         f" (it takes: {', '.join(full) or 'none'})")
    full.update(params or {})
    for key, value in full.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"segmenter {name!r}: {key} must be an integer, got {value!r}")
    return full


def make_encoder(name: str, params: Mapping, tokens: Sequence, merges: Sequence[tuple[int, int, int]],
                 symbol_ids: Sequence[int], special_ids: set[int], alphabet: Alphabet):
    """An object whose `encode_pieces(data, ends)` encodes pre-tokens with the named segmenter.

    `symbol_ids`: the id of each base symbol (every segmenter needs all of them);
    `special_ids` are never produced from text.
    """
    if name == "bpe":
        return BPEEncoder(merges, symbol_ids, cjk_prefix_ids=alphabet.cjk_prefix_ids)
    segmentable = [None if i in special_ids else list(t) for i, t in enumerate(tokens)]
    return PathSegmenter(segmentable, name, params["max_width"], params.get("seed", 0),
                         cjk_prefix_ids=alphabet.cjk_prefix_ids)
