"""A Hugging Face `Sequence` of Splits over named patterns: each pattern splits every piece of the
one before alone (tokenizers applies each pre-tokenizer of a Sequence to the previous pieces), e.g.
DeepSeek V3's `patterns.DEEPSEEK_V3_SPLITS`."""
from __future__ import annotations

from array import array
from collections.abc import Sequence

from tokfx._pretokenize import piece_ends


def sequence_piece_ends(data: bytes, names: Sequence[str], chunk_ends: array | None = None) -> array:
    """Exclusive end offsets (in bytes) of the pieces of UTF-8 `data` split by the named patterns
    in turn, each splitting every piece of the one before alone; with `chunk_ends`, the first
    splits each chunk data[:e0], data[e0:e1], ... alone (as the native `piece_ends`). With no
    names, each (non-empty) chunk is one piece."""
    if isinstance(names, str):
        raise TypeError("names must be a sequence of pattern names, not one str")
    # A piece of one stage is a chunk of the next: the native splitter splits each alone.
    ends = piece_ends(data, "none", chunk_ends) if not names else chunk_ends
    for name in names:
        ends = piece_ends(data, name, ends)
    return ends
