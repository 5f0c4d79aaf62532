"""The CJK remap of one pre-token, inline so that the encode cores and the training mapper share
it without a call across modules. Twin: tokfx.reference.alphabet.cjk_symbols."""
from libc.stdint cimport int32_t


cdef inline Py_ssize_t cjk_remap_char(const unsigned char* c, Py_ssize_t size, const int32_t* prefix_ids,
                                      int32_t* current, int32_t* out) noexcept nogil:
    """If c starts with a well-formed 3-byte character of a remapped group, write [prefix] h2 h3
    to out (the prefix only when it differs from *current, which it then becomes) and return how
    many symbols; else 0. prefix_ids[p - 0x38] is the prefix symbol of group p (lead bytes
    4p..4p+3), or -1 when that group is not remapped."""
    cdef int32_t prefix
    cdef unsigned char b1, b2, b3
    cdef Py_ssize_t n = 0
    if size < 3:
        return 0
    b1 = c[0]
    if b1 < 0xE0 or b1 > 0xEF:
        return 0
    prefix = prefix_ids[(b1 >> 2) - 0x38]
    b2 = c[1]
    b3 = c[2]
    # Well-formed only: no overlong form (E0 80-9F), no surrogate (ED A0-BF).
    if (prefix < 0 or (b2 & 0xC0) != 0x80 or (b3 & 0xC0) != 0x80
            or (b1 == 0xE0 and b2 < 0xA0) or (b1 == 0xED and b2 >= 0xA0)):
        return 0
    if prefix != current[0]:
        current[0] = prefix
        out[0] = prefix
        n = 1
    out[n] = 256 + ((b1 & 3) << 5) + ((b2 >> 1) & 0x1F)
    out[n + 1] = 384 + ((b2 & 1) << 6) + (b3 & 0x3F)
    return n + 2


cdef inline Py_ssize_t cjk_symbols(const unsigned char* piece, Py_ssize_t size,
                                   const int32_t* prefix_ids, int32_t* out) noexcept nogil:
    """Write the base-symbol ids of piece to out (never more than size of them); return how many.
    The piece starts with no current prefix."""
    cdef Py_ssize_t i = 0, n = 0, written
    cdef int32_t current = -1
    while i < size:
        written = cjk_remap_char(piece + i, size - i, prefix_ids, &current, out + n)
        if written:
            n += written
            i += 3
        else:
            out[n] = piece[i]
            n += 1
            i += 1
    return n
