"""What extended grapheme cluster segmentation (UAX #29) needs to know of each code point, as
one class byte per code point for the native Precompiled core (tokfx._precompiled, which says
what the bits are): its Grapheme_Cluster_Break value, Extended_Pictographic and
Indic_Conjunct_Break, read from `regex`'s own property tables, those that the Python twin
(tokfx.reference.precompiled) matches clusters with."""
from __future__ import annotations

from functools import lru_cache

from tokfx._precompiled import GRAPHEME_CLUSTER_BREAKS, INDIC_CONJUNCT_BREAKS, PICTOGRAPHIC
from tokfx.normalizers.code_point_sets import CODE_POINTS, code_point_ranges

# x -> x | bits, for each bits value: a range's class bytes ORed in one bytes.translate.
_WITH_BITS = {}


def _add_bits(table: bytearray, pattern: str, bits: int) -> None:
    with_bits = _WITH_BITS.setdefault(bits, bytes(x | bits for x in range(256)))
    for first, end in code_point_ranges(pattern):
        table[first:end] = table[first:end].translate(with_bits)


@lru_cache(maxsize=1)
def grapheme_classes() -> bytes:
    """The class byte of every code point (built once, on first use)."""
    table = bytearray(CODE_POINTS)
    for value, name in enumerate(GRAPHEME_CLUSTER_BREAKS):
        if value:  # Other: the rest
            _add_bits(table, rf"\p{{Grapheme_Cluster_Break={name}}}", value)
    _add_bits(table, r"\p{Extended_Pictographic}", PICTOGRAPHIC)
    for name, bits in INDIC_CONJUNCT_BREAKS.items():
        _add_bits(table, rf"\p{{Indic_Conjunct_Break={name}}}", bits)
    return bytes(table)
