"""Cut a large text file into byte ranges that several workers can pre-tokenize independently.

A boundary sits at the start of a special token, so no document is cut and the special-token
split makes per-range counts add up exactly to a whole-file count. With no special tokens a
boundary sits just after a newline whose neighbours are both non-whitespace: no built-in
pattern puts such a newline in the same piece as either neighbour, so the counts still add up.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import BinaryIO

import regex

from tokfx.special_tokens import SpecialTokens

_BLOCK = 1 << 16
# The patterns' own notion of whitespace (regex's \s), not str.isspace.
_NOT_SPACE = regex.compile(r"\S")


def is_not_space(char: str) -> bool:
    """Whether `char` (one character, or "" for none) is there and not whitespace (\\S)."""
    return bool(char and _NOT_SPACE.match(char))


def is_safe_newline(before: str, after: str) -> bool:
    """Whether text may be cut after a newline between the characters `before` and `after`: both
    not whitespace, and `after` not "/", which o200k's and tekken's ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*`
    takes into the piece of punctuation before the newline ("!\\n/" is one piece)."""
    return is_not_space(before) and is_not_space(after) and after != "/"


def _newline_cut(window: bytes, start: int, offset: int) -> int:
    """Offset just after the first suitable newline at or after `start` in `window`, or -1."""
    pos = window.find(b"\n", start)
    while pos != -1:
        before = window[max(0, pos - 4):pos].decode("utf-8", "ignore")[-1:]
        after = window[pos + 1:pos + 5].decode("utf-8", "ignore")[:1]
        if is_safe_newline(before, after):
            return offset + pos + 1
        pos = window.find(b"\n", pos + 1)
    return -1


def _next_boundary(file: BinaryIO, guess: int, size: int, specials: SpecialTokens) -> int:
    """The first boundary at or after `guess` (a special token's start, or a safe newline)."""
    reach = specials.longest or 5
    # Start a little before the guess: a special token that straddles the guess is a boundary
    # at its own start.
    pos = max(0, guess - reach + 1)
    while pos < size:
        file.seek(pos)
        window = file.read(_BLOCK + reach)
        if specials:
            for start, end in specials.spans_in_bytes(window):
                if pos + end > guess:
                    return pos + start
        else:
            cut = _newline_cut(window, max(0, guess - pos), pos)
            if cut != -1 and cut < pos + len(window):
                return cut
        pos += _BLOCK
    return size


def find_chunk_boundaries(file: BinaryIO, num_chunks: int,
                          special_tokens: Sequence[str] = ()) -> list[int]:
    """Sorted byte offsets [0, ..., size] cutting `file` into at most `num_chunks` ranges."""
    if num_chunks < 1:
        raise ValueError(f"num_chunks must be at least 1, got {num_chunks}")
    size = file.seek(0, 2)
    specials = SpecialTokens(special_tokens)
    boundaries = {0, size}
    for i in range(1, num_chunks):
        boundaries.add(_next_boundary(file, size * i // num_chunks, size, specials))
    return sorted(boundaries)
