"""The segmenters that run over any vocabulary, merges or not (core: tokfx._path_segment; twin:
tokfx.reference.path_segment): `pathpiece-l` and `pathpiece-r` (fewest tokens, ties to the longest
last token or to a seeded random choice) and `greedy` (longest prefix first)."""
from __future__ import annotations

from collections.abc import Sequence

from tokfx._path_segment import PathSegmenter
from tokfx.alphabet import Alphabet


def path_encoder(mode: str):
    """The factory of the `mode` segmenter's encoder (a registry entry's `build`)."""

    def build(tokens: Sequence, special_ids: set[int], alphabet: Alphabet, max_width: int,
              seed: int = 0, **_) -> PathSegmenter:
        segmentable = [None if i in special_ids else list(t) for i, t in enumerate(tokens)]
        return PathSegmenter(segmentable, mode, max_width, seed, cjk_prefix_ids=alphabet.cjk_prefix_ids)

    return build
