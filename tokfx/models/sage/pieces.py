"""The pieces SaGe segments and embeds: pre-tokens with their counts (context="pretoken"), or
lines with their counts, each the concatenation of its pre-tokens (context="line"); and their
greedy segmentation."""
from __future__ import annotations

from array import array
from collections.abc import Mapping

import numpy as np

from tokfx._path_segment import PathSegmenter
from tokfx.alphabet import Alphabet
from tokfx.pre_tokenizers import PreTokenizer


def greedy_pieces(symbols: array, offsets: array, tokens: list[tuple[int, ...]], max_width: int,
                  cuts: np.ndarray | None = None) -> list[list[int]]:
    """The greedy segmentation (token ids) of every piece; with `cuts` (a flag per symbol where
    a pre-token starts), of each of its pre-tokens apart, concatenated."""
    segmenter = PathSegmenter(tokens, "greedy", max_width)
    view = memoryview(symbols)
    if cuts is None:
        return [segmenter.segment(view[offsets[k]:offsets[k + 1]]) for k in range(len(offsets) - 1)]
    bounds = np.union1d(np.asarray(offsets), np.flatnonzero(cuts)).tolist()
    out, j = [], 0
    for k in range(len(offsets) - 1):
        ids = []
        while bounds[j] < offsets[k + 1]:
            ids += segmenter.segment(view[bounds[j]:bounds[j + 1]])
            j += 1
        out.append(ids)
    return out


def line_pieces(lines: Mapping[bytes, int], pretokenizer: PreTokenizer,
                alphabet: Alphabet) -> tuple[array, array, array, np.ndarray]:
    """(symbols, offsets, counts, cuts) of the lines as pieces, sorted, each the concatenation
    of its pre-tokens (what the pattern leaves out is left out, as in the pre-token counts);
    cuts flags the first symbol of every pre-token. Lines without a pre-token are left out."""
    texts, counts, ends = [], array("q"), array("q")
    line_ends, size = [0], 0
    for line in sorted(lines):
        pieces = pretokenizer.pieces(line.decode("utf-8"))
        if not pieces:
            continue
        texts.extend(pieces)
        counts.append(lines[line])
        for piece in pieces:
            size += len(piece)
            ends.append(size)
        line_ends.append(len(ends))
    symbols, pretoken_offsets = alphabet.map_pieces(b"".join(texts), ends)
    cuts = np.zeros(len(symbols), dtype=np.uint8)
    cuts[np.asarray(pretoken_offsets)[:-1]] = 1
    return symbols, array("q", [pretoken_offsets[j] for j in line_ends]), counts, cuts
