"""Sets of code points as bitmaps (bit c & 7 of byte c >> 3), for the native cores that test a
character's class (tokfx._char_map, tokfx._class_split): built from the regex the Python twin
matches, so that both test the same class."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import chain

import regex

from tokfx._pretokenize import every_code_point

CODE_POINTS = 0x110000
_SURROGATES = range(0xD800, 0xE000)


def bitmap(codes: Iterable[int], size: int = CODE_POINTS) -> bytes:
    bits = bytearray(size // 8)
    for code in codes:
        bits[code >> 3] |= 1 << (code & 7)
    return bytes(bits)


# Every code point but the surrogates, in order (index i is code point i, or i + 0x800 past the
# surrogates), kept once built (4.4 MB): each class read is a pass of `regex` over it.
_every_code_point = lru_cache(maxsize=1)(every_code_point)


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


def ranges_bitmap(ranges: Iterable[tuple[int, int]], size: int = CODE_POINTS) -> bytes:
    """The bitmap of the code points in `ranges` ([first, end) pairs): whole bytes set by slice,
    only the bits at each range's two ends one by one. A class such as `[^\\s\\p{L}]` holds most
    of the 1.1 M code points; setting them one by one in Python cost 0.1 s per class, paid by
    every process that loads a user pattern."""
    bits = bytearray(size // 8)
    for first, end in ranges:
        head_end = min(end, -(-first // 8) * 8)  # up to the first byte boundary inside
        tail_start = max(head_end, end // 8 * 8)  # from the last one
        for code in chain(range(first, head_end), range(tail_start, end)):
            bits[code >> 3] |= 1 << (code & 7)
        bits[head_end // 8:tail_start // 8] = b"\xff" * (tail_start // 8 - head_end // 8)
    return bytes(bits)


@lru_cache(maxsize=None)
def code_point_bitmap(pattern: regex.Pattern) -> bytes:
    """The code points that the one-character regex `pattern` matches."""
    return ranges_bitmap(code_point_ranges(pattern.pattern, pattern.flags))
