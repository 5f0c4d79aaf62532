"""Stepping over UTF-8 text one unit at a time, shared by the cores that test each character's
class (tokfx._class_split, tokfx._class_runs), forward and back."""
from libc.stdint cimport int64_t, uint32_t


cdef inline int64_t unit_end(const unsigned char* s, int64_t i, int64_t end, bint byte_units,
                             uint32_t* code) noexcept nogil:
    """Where the unit (a byte, or a UTF-8 character) at i < end ends; its value in *code."""
    cdef unsigned char lead = s[i]
    cdef int64_t width, k
    if byte_units or lead < 0x80:
        code[0] = lead
        return i + 1
    if lead < 0xE0:
        width, code[0] = 2, lead & 0x1F
    elif lead < 0xF0:
        width, code[0] = 3, lead & 0x0F
    else:
        width, code[0] = 4, lead & 0x07
    if i + width > end:  # not UTF-8 (the text stages always give UTF-8): never read past the piece
        code[0] = lead
        return end
    for k in range(1, width):
        code[0] = (code[0] << 6) | (s[i + k] & 0x3F)
    return i + width


cdef inline int64_t unit_start(const unsigned char* s, int64_t end, int64_t low) noexcept nogil:
    """Where the UTF-8 character that ends at end (> low) starts, never before low: back over its
    continuation bytes (10xxxxxx)."""
    cdef int64_t i = end - 1
    while i > low and (s[i] & 0xC0) == 0x80:
        i -= 1
    return i
