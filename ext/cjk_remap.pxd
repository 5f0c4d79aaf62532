"""The CJK remap of one pre-token, inline so that the encode core and the training mapper share
it without a call across modules. Twin: tokfx.reference.alphabet.cjk_symbols."""
from libc.stdint cimport int32_t


cdef inline Py_ssize_t cjk_symbols(const unsigned char* piece, Py_ssize_t size,
                                   const int32_t* prefix_ids, int32_t* out) noexcept nogil:
    """Write the base-symbol ids of piece to out (never more than size of them); return how many.

    prefix_ids[p - 0x38] is the prefix symbol of group p (lead bytes 4p..4p+3), or -1 when
    that group is not remapped.
    """
    cdef Py_ssize_t i = 0, n = 0
    cdef int32_t current = -1, prefix
    cdef unsigned char b1, b2, b3
    while i < size:
        b1 = piece[i]
        if b1 >= 0xE0 and b1 <= 0xEF and i + 2 < size:
            prefix = prefix_ids[(b1 >> 2) - 0x38]
            b2 = piece[i + 1]
            b3 = piece[i + 2]
            # Well-formed only: no overlong form (E0 80-9F), no surrogate (ED A0-BF).
            if (prefix >= 0 and (b2 & 0xC0) == 0x80 and (b3 & 0xC0) == 0x80
                    and not (b1 == 0xE0 and b2 < 0xA0) and not (b1 == 0xED and b2 >= 0xA0)):
                if prefix != current:
                    current = prefix
                    out[n] = prefix
                    n += 1
                out[n] = 256 + ((b1 & 3) << 5) + ((b2 >> 1) & 0x1F)
                out[n + 1] = 384 + ((b2 & 1) << 6) + (b3 & 0x3F)
                n += 2
                i += 3
                continue
        out[n] = b1
        n += 1
        i += 1
    return n
