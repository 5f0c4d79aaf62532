"""Hugging Face's `Precompiled` normalizer over a text's UTF-8, as `tokenizers` applies a
sentencepiece charsmap (the rule is stated in tokfx.normalizers.precompiled): the text cut into
UAX #29's extended grapheme clusters, as unicode-segmentation cuts them for `tokenizers` (the
rules in the order of `regex`'s unicode_at_grapheme_boundary, GB9c as UAX #29 states it: see
the twin, tokfx.reference.precompiled, for where regex's \\X differs), then a cluster of fewer
than 6 bytes that starts with some key becomes the replacement of the shortest such key, any
other is rewritten character by character.

The clusters come from a table of one class byte per code point
(tokfx.normalizers.grapheme_classes builds it from `regex`'s own properties; GRAPHEME_CLUSTER_BREAKS,
PICTOGRAPHIC and INDIC_CONJUNCT_BREAKS below say what its bits are). The text is read once,
left to right: the state the rules look back at (the parity of a run of regional indicators,
an emoji sequence before a ZWJ, an Indic consonant and linker before a consonant) is carried
from character to character. A cluster of one character that is no key (ASCII, most CJK)
is left where it is and copied with the run it belongs to.

The charsmap must have been checked by tokfx.normalizers.charsmap.decode_charsmap; lookups still
stay inside it whatever its units hold (charsmap_trie.pxd).
"""
cimport cython
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.stdint cimport uint32_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from charsmap_trie cimport bmp_key_starts, replacement, shortest_key, trie_pool, trie_units, utf8_length

# The Grapheme_Cluster_Break values, numbered as in a class byte's low 4 bits.
GRAPHEME_CLUSTER_BREAKS = ("Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend",
                           "SpacingMark", "L", "V", "T", "LV", "LVT")
# Bit 4: Extended_Pictographic. Bits 5-6: the Indic_Conjunct_Break value (0: None).
PICTOGRAPHIC = 1 << 4
INDIC_CONJUNCT_BREAKS = {"Consonant": 1 << 5, "Extend": 2 << 5, "Linker": 3 << 5}

cdef enum:
    OTHER, CR, LF, CONTROL, EXTEND, ZWJ, REGIONAL_INDICATOR, PREPEND, SPACING_MARK, L, V, T, LV, LVT
cdef enum:
    BREAK_MASK = 0x0F
    PICTOGRAPHIC_BIT = 1 << 4
    INCB_SHIFT = 5
    INCB_CONSONANT = 1
    INCB_EXTEND = 2
    INCB_LINKER = 3
    # Before a consonant, the state of the Indic rule (GB9c): no consonant, a consonant then
    # extenders or linkers but no linker yet, a consonant then at least one linker.
    NO_CONJUNCT = 0
    CONSONANT = 1
    CONSONANT_LINKER = 2
    MAX_WHOLE_CLUSTER = 6  # a cluster of fewer UTF-8 bytes is looked up whole

CODE_POINTS = 0x110000


cdef struct Context:  # what the rules look back at, over the characters up to the current one
    unsigned char left  # the class byte of the last character
    bint odd_indicators  # it ends a run of an odd number of regional indicators (GB12, GB13)
    bint pictographic  # it ends Extended_Pictographic Extend* (GB11)
    bint pictographic_zwj  # it is a ZWJ after Extended_Pictographic Extend* (GB11)
    int conjunct  # NO_CONJUNCT, CONSONANT or CONSONANT_LINKER (GB9c)


cdef inline bint joins(const Context* context, unsigned char right) noexcept nogil:
    """No boundary between the last character and one of class `right`: UAX #29's rules in
    their order."""
    cdef int left = context.left & BREAK_MASK, next_break = right & BREAK_MASK
    if left == CR and next_break == LF:  # GB3
        return True
    if left == CONTROL or left == CR or left == LF:  # GB4
        return False
    if next_break == CONTROL or next_break == CR or next_break == LF:  # GB5
        return False
    if left == L and (next_break == L or next_break == V or next_break == LV or next_break == LVT):  # GB6
        return True
    if (left == LV or left == V) and (next_break == V or next_break == T):  # GB7
        return True
    if (left == LVT or left == T) and next_break == T:  # GB8
        return True
    if next_break == EXTEND or next_break == ZWJ or next_break == SPACING_MARK:  # GB9, GB9a
        return True
    if left == PREPEND:  # GB9b
        return True
    if context.conjunct == CONSONANT_LINKER and right >> INCB_SHIFT == INCB_CONSONANT:  # GB9c
        return True
    if context.pictographic_zwj and right & PICTOGRAPHIC_BIT:  # GB11
        return True
    if left == REGIONAL_INDICATOR and next_break == REGIONAL_INDICATOR and context.odd_indicators:  # GB12, GB13
        return True
    return False  # GB999


cdef inline void advance(Context* context, unsigned char right) noexcept nogil:
    """The context once the character of class `right` is the last one."""
    cdef int next_break = right & BREAK_MASK, conjunct = right >> INCB_SHIFT
    context.odd_indicators = next_break == REGIONAL_INDICATOR and not (
        (context.left & BREAK_MASK) == REGIONAL_INDICATOR and context.odd_indicators)
    context.pictographic_zwj = next_break == ZWJ and context.pictographic
    context.pictographic = (right & PICTOGRAPHIC_BIT) != 0 or (context.pictographic and next_break == EXTEND)
    if conjunct == INCB_CONSONANT:
        context.conjunct = CONSONANT
    elif context.conjunct != NO_CONJUNCT and conjunct == INCB_LINKER:
        context.conjunct = CONSONANT_LINKER
    elif conjunct != INCB_EXTEND:
        context.conjunct = NO_CONJUNCT
    context.left = right


cdef inline uint32_t code_point_at(const unsigned char* data, Py_ssize_t n) noexcept nogil:
    """The code point of the well-formed UTF-8 character of n bytes at data."""
    if n == 1:
        return data[0]
    if n == 2:
        return (data[0] & 0x1F) << 6 | (data[1] & 0x3F)
    if n == 3:
        return (data[0] & 0x0F) << 12 | (data[1] & 0x3F) << 6 | (data[2] & 0x3F)
    return (data[0] & 0x07) << 18 | (data[1] & 0x3F) << 12 | (data[2] & 0x3F) << 6 | (data[3] & 0x3F)


@cython.final
cdef class PrecompiledCore:
    """normalize(text) as `tokenizers`' Precompiled normalizer rewrites it with this charsmap,
    clusters cut with `classes` (one class byte per code point)."""
    cdef vector[uint32_t] _units
    cdef bytes _pool
    cdef bytes _classes
    cdef const unsigned char* _class_of
    # Per BMP code point: it is a key (else, alone in its cluster or taken character by
    # character, it stays).
    cdef vector[unsigned char] _is_key
    cdef string _out

    def __init__(self, bytes charsmap, bytes classes):
        if len(classes) != CODE_POINTS:
            raise ValueError(f"expected one class byte per code point, {CODE_POINTS:,}: got {len(classes):,}")
        self._units = trie_units(charsmap)
        self._pool = trie_pool(charsmap)
        self._classes = classes
        self._class_of = <const unsigned char*>self._classes
        self._is_key = bmp_key_starts(self._units, True)

    cdef bint _may_rewrite(self, const unsigned char* data, Py_ssize_t n) noexcept nogil:
        """The character of n bytes at data is a key (a character past U+FFFF: maybe)."""
        return n == 4 or self._is_key[code_point_at(data, n)]

    cdef Py_ssize_t _rewrite(self, const unsigned char* data, Py_ssize_t start, Py_ssize_t end,
                             Py_ssize_t copied) except -1:
        """The cluster data[start:end] rewritten into _out, after the text from `copied` on that
        stays as it is; returns the new `copied` (where the text kept as it is starts again)."""
        cdef uint32_t value
        cdef Py_ssize_t n, size, j = start
        cdef const char* found
        if end - start < MAX_WHOLE_CLUSTER and shortest_key(self._units, data + start, end - start, &value):
            self._out.append(<const char*>data + copied, start - copied)
            found = replacement(self._pool, len(self._pool), value, &size)
            self._out.append(found, size)
            return end
        while j < end:
            n = utf8_length(data[j])
            if self._may_rewrite(data + j, n) and shortest_key(self._units, data + j, n, &value):
                self._out.append(<const char*>data + copied, j - copied)
                found = replacement(self._pool, len(self._pool), value, &size)
                self._out.append(found, size)
                copied = j + n
            j += n
        return copied

    def normalize(self, str text):
        """`text` normalized (`text` itself when nothing changes); UnicodeEncodeError for a lone
        surrogate (which the caller replaces first)."""
        cdef Py_ssize_t size, i = 0, n, start = 0, copied = 0
        cdef const unsigned char* data = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
        cdef const unsigned char* class_of = self._class_of
        cdef unsigned char right
        cdef Context context
        cdef bint alone  # the cluster so far is one character that is no key
        self._out.clear()
        if size == 0:
            return text
        n = utf8_length(data[0])
        context.left, context.odd_indicators, context.pictographic = 0, False, False
        context.pictographic_zwj, context.conjunct = False, NO_CONJUNCT
        advance(&context, class_of[code_point_at(data, n)])
        alone = not self._may_rewrite(data, n)
        i = n
        while i < size:
            n = utf8_length(data[i])
            right = class_of[code_point_at(data + i, n)]
            if not joins(&context, right):
                if not alone:
                    copied = self._rewrite(data, start, i, copied)
                start = i
                alone = not self._may_rewrite(data + i, n)
            else:
                alone = False
            advance(&context, right)
            i += n
        if not alone:
            copied = self._rewrite(data, start, size, copied)
        if copied == 0:
            return text
        self._out.append(<const char*>data + copied, size - copied)
        return PyUnicode_DecodeUTF8(self._out.data(), self._out.size(), NULL)
