"""Sets of code points as bitmaps (bit c & 7 of byte c >> 3), for the native cores that test a
character's class (tokfx._char_map, tokfx._class_split): built from the regex the Python twin
matches, so that both test the same class."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache

import regex

CODE_POINTS = 0x110000
_SURROGATES = range(0xD800, 0xE000)


def bitmap(codes: Iterable[int], size: int = CODE_POINTS) -> bytes:
    bits = bytearray(size // 8)
    for code in codes:
        bits[code >> 3] |= 1 << (code & 7)
    return bytes(bits)


@lru_cache(maxsize=1)
def _every_code_point() -> str:
    """Every code point but the surrogates, in order (index i is code point i, or i + 0x800
    past the surrogates)."""
    return "".join(map(chr, range(_SURROGATES.start))) + "".join(map(chr, range(_SURROGATES.stop, CODE_POINTS)))


def code_point_ranges(pattern: str, flags: int = 0) -> Iterator[tuple[int, int]]:
    """The code points that the one-character regex `pattern` matches, as ranges [first, end)."""
    gap = len(_SURROGATES)
    for match in regex.finditer(f"(?:{pattern})+", _every_code_point(), flags):
        first, end = match.span()
        if first < _SURROGATES.start < end:  # a run across the surrogates' gap
            yield first, _SURROGATES.start
            first = _SURROGATES.start
        if first >= _SURROGATES.start:  # index i is code point i + gap past the gap
            first, end = first + gap, end + gap
        yield first, end


@lru_cache(maxsize=None)
def code_point_bitmap(pattern: regex.Pattern) -> bytes:
    """The code points that the one-character regex `pattern` matches."""
    return bitmap(code for first, end in code_point_ranges(pattern.pattern, pattern.flags)
                  for code in range(first, end))
