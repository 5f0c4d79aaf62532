"""The segmenters that run over any vocabulary, merges or not (core: tokfx._path_segment; twin:
tokfx.reference.path_segment): `pathpiece-l` and `pathpiece-r` (fewest tokens, ties to the longest
last token or to a seeded random choice), `greedy` (longest prefix first) and `likelihood` (the
most likely segmentation under the tokens' log probabilities, ties to the longest last token)."""
from __future__ import annotations

from collections.abc import Sequence

from tokfx._path_segment import PathSegmenter
from tokfx.alphabet import Alphabet


def path_encoder(mode: str):
    """The factory of the `mode` segmenter's encoder (a registry entry's `build`)."""

    def build(tokens: Sequence, special_ids: set[int], alphabet: Alphabet, max_width: int,
              seed: int = 0, scores: Sequence[float | None] | None = None, float_bits: int = 64,
              **_) -> PathSegmenter:
        segmentable = [None if i in special_ids else list(t) for i, t in enumerate(tokens)]
        if mode == "likelihood" and scores is None:
            raise ValueError("segmenter 'likelihood' needs a log probability per token (a unigram"
                             " vocabulary), and this vocabulary has none")
        return PathSegmenter(segmentable, mode, max_width, seed, **alphabet.symbol_map, num_symbols=alphabet.size,
                             scores=scores if mode == "likelihood" else None, float_bits=float_bits)

    return build
