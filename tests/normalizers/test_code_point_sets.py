"""Bitmaps of code points: built from ranges (whole bytes by slice) they equal the bitmap set bit
by bit, and a class's bitmap holds exactly the code points `regex` matches."""
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx.normalizers.code_point_sets import CODE_POINTS, bitmap, code_point_bitmap, ranges_bitmap

_SIZE = 512  # small bitmaps, so that ranges meet byte boundaries and each other often
_range = st.tuples(st.integers(0, _SIZE), st.integers(0, 40)).map(lambda r: (r[0], min(_SIZE, r[0] + r[1])))


@settings(max_examples=500, deadline=None)
@given(st.lists(_range, max_size=8))
def test_ranges_bitmap_is_bit_by_bit(ranges):
    codes = [code for first, end in ranges for code in range(first, end)]
    assert ranges_bitmap(ranges, _SIZE) == bitmap(codes, _SIZE)


def test_class_bitmaps_hold_what_regex_matches():
    for pattern in (r"[^\r\n\p{L}\p{N}]", r"\p{L}", r"\s", r"[\x00-\x08]", r"(?i:k)"):
        bits = code_point_bitmap(regex.compile(pattern))
        members = [code for code in range(CODE_POINTS) if bits[code >> 3] >> (code & 7) & 1]
        compiled = regex.compile(pattern)
        expected = [code for code in range(CODE_POINTS)
                    if not 0xD800 <= code < 0xE000 and compiled.fullmatch(chr(code))]
        assert members == expected, pattern
