"""Lookups in a sentencepiece precompiled charsmap's own darts-clone double array (its units are
described in tokfx.normalizers.charsmap), shared by the cores that apply a charsmap
(tokfx._spm_normalize: sentencepiece's longest key; tokfx._precompiled: `tokenizers`' shortest
one). Every unit read is checked to be inside the trie, whatever the units hold."""
from libc.stdint cimport uint32_t
from libc.string cimport memchr
from libcpp.vector cimport vector

cdef enum:
    HAS_LEAF = 1 << 8
    VALUE_MASK = 0x7FFFFFFF  # a value unit's value


cdef inline uint32_t unit_label(uint32_t unit) noexcept nogil:
    """A unit's label; a value unit's keeps its top bit, so it never matches a byte."""
    return unit & 0x800000FFU


cdef inline Py_ssize_t utf8_length(unsigned char lead) noexcept nogil:
    """The length of the character a well-formed UTF-8 lead byte starts."""
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


cdef inline size_t unit_offset(uint32_t unit) noexcept nogil:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


cdef inline vector[uint32_t] trie_units(bytes charsmap) except *:
    """The units of a charsmap's trie (b"": none); ValueError for a header that decode_charsmap
    would have refused."""
    cdef vector[uint32_t] units
    cdef Py_ssize_t k, trie_size
    if charsmap:
        trie_size = int.from_bytes(charsmap[:4], "little")
        if trie_size == 0 or trie_size % 4 or trie_size > len(charsmap) - 4:
            raise ValueError("a malformed charsmap (decode_charsmap checks it first)")
        for k in range(4, 4 + trie_size, 4):
            units.push_back(int.from_bytes(charsmap[k:k + 4], "little"))
    return units


cdef inline bytes trie_pool(bytes charsmap):
    """The replacements' pool that follows the trie (b"" for no charsmap)."""
    if not charsmap:
        return b""
    return charsmap[4 + int.from_bytes(charsmap[:4], "little"):]


cdef inline Py_ssize_t longest_key(const vector[uint32_t]& trie, const unsigned char* text, Py_ssize_t size,
                                   uint32_t* value) noexcept nogil:
    """The byte length of the longest key that text starts with (0: none), its replacement's
    offset in the pool at *value: darts-clone's commonPrefixSearch, its last result."""
    cdef const uint32_t* units = trie.data()
    cdef size_t count = trie.size(), node
    cdef uint32_t unit
    cdef Py_ssize_t i, longest = 0
    if count == 0:
        return 0
    node = unit_offset(units[0])
    for i in range(size):
        node ^= text[i]
        if node >= count:
            break
        unit = units[node]
        if unit_label(unit) != text[i]:
            break
        node ^= unit_offset(unit)
        if unit & HAS_LEAF and node < count:
            longest = i + 1
            value[0] = units[node] & VALUE_MASK
    return longest


cdef inline Py_ssize_t shortest_key(const vector[uint32_t]& trie, const unsigned char* text, Py_ssize_t size,
                                    uint32_t* value) noexcept nogil:
    """The byte length of the shortest key that text starts with (0: none), its replacement's
    offset at *value: commonPrefixSearch's first result, as the spm_precompiled crate takes it
    (its search stops at a NUL byte, the end of a C string for darts-clone)."""
    cdef const uint32_t* units = trie.data()
    cdef size_t count = trie.size(), node
    cdef uint32_t unit
    cdef Py_ssize_t i
    if count == 0:
        return 0
    node = unit_offset(units[0])
    for i in range(size):
        if text[i] == 0:
            return 0
        node ^= text[i]
        if node >= count:
            return 0
        unit = units[node]
        if unit_label(unit) != text[i]:
            return 0
        node ^= unit_offset(unit)
        if unit & HAS_LEAF and node < count:
            value[0] = units[node] & VALUE_MASK
            return i + 1
    return 0


cdef inline bint is_key_path(const vector[uint32_t]& trie, const unsigned char* text, Py_ssize_t size) noexcept nogil:
    """Some key starts with text (or is it)."""
    cdef const uint32_t* units = trie.data()
    cdef size_t count = trie.size(), node
    cdef Py_ssize_t i
    if count == 0:
        return False
    node = unit_offset(units[0])
    for i in range(size):
        node ^= text[i]
        if node >= count or unit_label(units[node]) != text[i]:
            return False
        node ^= unit_offset(units[node])
    return True


cdef inline bint has_longer_key(const vector[uint32_t]& trie, const unsigned char* text, Py_ssize_t size) noexcept nogil:
    """Some key starts with text and is longer than it (its node has a child other than the
    leaf's value unit, which sits at label 0)."""
    cdef const uint32_t* units = trie.data()
    cdef size_t count = trie.size(), node, child
    cdef Py_ssize_t i
    cdef uint32_t label
    if not is_key_path(trie, text, size):
        return False
    node = unit_offset(units[0])
    for i in range(size):
        node ^= text[i]
        node ^= unit_offset(units[node])
    for label in range(1, 256):
        child = node ^ label
        if child < count and unit_label(units[child]) == label:
            return True
    return False


cdef inline const char* replacement(const char* pool, Py_ssize_t pool_size, uint32_t value,
                                    Py_ssize_t* size) except NULL:
    """The NUL-terminated replacement at `value` in the pool of pool_size bytes (its length at
    *size); ValueError for one outside the pool (decode_charsmap checks them first)."""
    cdef const char* end = NULL
    if value < <size_t>pool_size:
        end = <const char*>memchr(pool + value, 0, pool_size - value)
    if end == NULL:
        raise ValueError("a charsmap replacement outside its pool (decode_charsmap checks it first)")
    size[0] = end - (pool + value)
    return pool + value


cdef inline Py_ssize_t encode_utf8(uint32_t code_point, unsigned char* out) noexcept nogil:
    """The UTF-8 of a BMP code point (not a surrogate) at out; returns its length."""
    if code_point < 0x80:
        out[0] = code_point
        return 1
    if code_point < 0x800:
        out[0], out[1] = 0xC0 | code_point >> 6, 0x80 | (code_point & 0x3F)
        return 2
    out[0], out[1], out[2] = 0xE0 | code_point >> 12, 0x80 | (code_point >> 6 & 0x3F), 0x80 | (code_point & 0x3F)
    return 3


cdef inline vector[unsigned char] bmp_key_starts(const vector[uint32_t]& trie, bint whole) noexcept nogil:
    """Per BMP code point (surrogates: 0): 1 if its UTF-8 starts some key, or with `whole` if
    it is a key."""
    cdef vector[unsigned char] starts
    cdef unsigned char utf8[3]
    cdef uint32_t code_point, value
    cdef Py_ssize_t n
    starts.assign(0x10000, 0)
    for code_point in range(0x10000):
        if not 0xD800 <= code_point < 0xE000:
            n = encode_utf8(code_point, utf8)
            starts[code_point] = longest_key(trie, utf8, n, &value) == n if whole else is_key_path(trie, utf8, n)
    return starts
