"""A native pre-tokenizer's matcher, shared by its module (tokfx._pretokenize, which defines
one per built-in pattern) and the count table (tokfx._count_table, which counts the pieces as
a matcher finds them, without an array of their ends in between)."""
from libc.stdint cimport int64_t

# (text, its length, piece start) -> piece end.
ctypedef Py_ssize_t (*PieceEnd)(const unsigned char*, Py_ssize_t, Py_ssize_t) noexcept nogil

cdef extern from *:
    """
    #define TOKFX_PIECE_END_CAPSULE "tokfx._pretokenize.PieceEnd"
    """
    # The name of the capsule that carries a PieceEnd between the modules.
    const char* PIECE_END_CAPSULE "TOKFX_PIECE_END_CAPSULE"


cdef inline Py_ssize_t chunk_piece_end(PieceEnd piece_end, const unsigned char* s, Py_ssize_t start,
                                       Py_ssize_t end, Py_ssize_t p) noexcept nogil:
    """The end of the piece at p in the chunk s[start:end] split alone: the matcher's lookahead
    stops at the chunk's end and any look back at its start."""
    return start + piece_end(s + start, end - start, p - start)


cdef inline int check_chunk_ends(const int64_t[::1] chunk_ends, Py_ssize_t n) except -1:
    """Refuse chunk ends that do not increase from 0 to `n` (empty chunks allowed)."""
    cdef Py_ssize_t c, chunks = chunk_ends.shape[0]
    cdef int64_t start = 0
    if (chunks == 0 and n != 0) or (chunks and chunk_ends[chunks - 1] != n):
        raise ValueError("chunk_ends must end at len(data)")
    for c in range(chunks):
        if chunk_ends[c] < start:
            raise ValueError("chunk_ends must not decrease")
        start = chunk_ends[c]
    return 0
