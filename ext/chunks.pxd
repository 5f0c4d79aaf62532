"""The check of a corpus packed as the training cores take it (symbols concatenated, offsets,
counts), shared inline by the PathPiece MI pass, the n-gram count and the SaGe loss."""
from libc.stdint cimport int32_t, int64_t


cdef inline int check_chunks(const int32_t[::1] symbols, const int64_t[::1] offsets,
                             const int64_t[::1] counts) except -1:
    """Chunk k is symbols[offsets[k]:offsets[k+1]], occurring counts[k] times: one more offset
    than counts, from 0, ascending, ending at len(symbols)."""
    cdef Py_ssize_t k
    if offsets.shape[0] != counts.shape[0] + 1:
        raise ValueError(f"{offsets.shape[0]} offsets for {counts.shape[0]} chunks")
    if offsets[0] != 0 or offsets[offsets.shape[0] - 1] != symbols.shape[0]:
        raise ValueError(f"offsets must run from 0 to len(symbols) = {symbols.shape[0]}")
    for k in range(counts.shape[0]):
        if offsets[k + 1] < offsets[k]:
            raise ValueError(f"offsets[{k + 1}] = {offsets[k + 1]} is below offsets[{k}] = {offsets[k]}")
    return 0
