"""The alphabets' hot loops (tokfx.alphabet): pre-tokens -> base symbols for training, base
symbols -> bytes for decoding, and the character counts that choose a chars alphabet.
Twin: tokfx.reference.alphabet (tests compare the two)."""
from cpython.array cimport array as c_array, clone
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from symbol_map cimport SymbolMap, init_symbol_map, map_symbols, utf8_char

from array import array

cdef enum:
    H2_BASE = 256
    H3_BASE = 384
    PREFIX_BASE = 512


def prefix_table(groups):
    """The prefix_ids argument of cjk_symbols: 4 slots for groups 0x38-0x3B, -1 if not remapped."""
    table = array("i", [-1] * 4)
    for rank, p in enumerate(sorted(groups)):
        table[p - 0x38] = PREFIX_BASE + rank
    return table


def map_pieces(bytes data, const int64_t[::1] ends, prefix_ids, char_ids, Py_ssize_t num_symbols,
               unknown_symbol=None):
    """Base symbols of the pieces data[ends[k-1]:ends[k]], each with its own prefix state, as
    symbol_map.pxd maps them (prefix_ids: the cjk remap or None; char_ids: the chars alphabet's
    code point -> symbol table or None; unknown_symbol: what a character not covered becomes,
    None for its bytes): (symbols int32 array, offsets int64 array with offsets[k]..offsets[k+1]
    the k-th piece)."""
    cdef const unsigned char* text = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef int64_t start = 0, end, size = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t k, n = 0
    cdef SymbolMap m
    init_symbol_map(&m, prefix_ids, char_ids, num_symbols, unknown_symbol)
    # A symbol per byte at most; made without a zeroed bytes object to copy from (that and the
    # array were twice the text's 4 bytes per byte at once), and pages past the symbols written
    # are never touched (a Unigram trainer's peak: bench/README.md, issue 26).
    cdef c_array symbols = clone(array("i"), size, False)
    offsets = clone(array("q"), ends.shape[0] + 1, True)
    cdef int32_t[::1] out = symbols
    cdef int64_t[::1] out_offsets = offsets
    for k in range(ends.shape[0]):
        end = ends[k]
        if end < start or end > size:
            raise ValueError(f"ends[{k}] = {end} is not in [{start}, {size}]")
        if end > start:
            n += map_symbols(&m, text + start, end - start, &out[n])
        out_offsets[k + 1] = n
        start = end
    del out
    del symbols[n:]
    return symbols, offsets


def character_counts(bytes data, const int64_t[::1] ends, const int64_t[::1] counts):
    """{code point: occurrences} over the pieces data[ends[k-1]:ends[k]], piece k occurring
    counts[k] times; bytes that are not UTF-8 are not counted."""
    cdef const unsigned char* text = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef int64_t start = 0, end, i, size = PyBytes_GET_SIZE(data)
    cdef Py_ssize_t k, length
    cdef int32_t code_point = 0
    cdef unordered_map[int32_t, int64_t] found
    if counts.shape[0] != ends.shape[0]:
        raise ValueError(f"{counts.shape[0]} counts for {ends.shape[0]} pieces")
    for k in range(ends.shape[0]):
        end = ends[k]
        if end < start or end > size:
            raise ValueError(f"ends[{k}] = {end} is not in [{start}, {size}]")
        i = start
        while i < end:
            length = utf8_char(text + i, end - i, &code_point)
            if length:
                found[code_point] += counts[k]
                i += length
            else:
                i += 1
        start = end
    return dict(found)


def decode_symbols(const int32_t[::1] symbols, groups, bint want_starts=False, bytes char_utf8=None,
                   const int64_t[::1] char_offsets=None, bytes unknown_utf8=None):
    """Bytes of base symbols, one prefix state for the whole sequence. groups: the remapped
    groups (empty: no remap); char_utf8 and char_offsets (chars alphabet): the UTF-8 of its
    characters concatenated, character k being char_utf8[char_offsets[k]:char_offsets[k + 1]];
    unknown_utf8 (a chars alphabet without byte fallback, no groups): what symbol 0, the
    unknown one, writes, the characters then starting at symbol 1.

    Returns (bytes, errors, starts): errors lists (offset in the bytes where a U+FFFD belongs,
    index of the offending symbol); starts (with want_starts, else None) is an int64 array of
    each symbol's first byte offset. An h2 not followed by an h3, an h3 without an h2, and an
    h2 h3 pair before any prefix are errors; the pair counts as one error.
    """
    cdef vector[unsigned char] out
    cdef list errors = []
    cdef Py_ssize_t k = 0, n = symbols.shape[0], c
    cdef int32_t s, h2, h3, prefix = -1
    cdef vector[int32_t] ordered
    for p in sorted(groups):
        ordered.push_back(p)
    cdef bint remap = ordered.size() > 0
    cdef int32_t char_base = PREFIX_BASE + <int32_t>ordered.size() if remap else H2_BASE
    if unknown_utf8 is not None:
        if remap or char_utf8 is None:
            raise ValueError("unknown_utf8 comes with char_utf8 and without groups")
        char_base = 1
    cdef Py_ssize_t num_chars = 0
    cdef const unsigned char* utf8 = NULL
    if (char_utf8 is None) != (char_offsets is None):
        raise ValueError("char_utf8 and char_offsets come together")
    if char_utf8 is not None:
        num_chars = char_offsets.shape[0] - 1
        if num_chars < 0 or char_offsets[0] != 0 or char_offsets[num_chars] != len(char_utf8):
            raise ValueError("char_offsets must run up from 0 to len(char_utf8)")
        for c in range(num_chars):
            if char_offsets[c] > char_offsets[c + 1]:
                raise ValueError("char_offsets must run up from 0 to len(char_utf8)")
        utf8 = <const unsigned char*>PyBytes_AS_STRING(char_utf8)
    cdef int32_t end_of_alphabet = char_base + <int32_t>num_chars
    starts = clone(array("q"), n, True) if want_starts else None
    cdef int64_t[::1] start_of
    if want_starts:
        start_of = starts
    out.reserve(n)
    while k < n:
        s = symbols[k]
        if want_starts:
            start_of[k] = out.size()
        if s < 0 or s >= end_of_alphabet:
            raise ValueError(f"symbol {s} at {k} is outside the alphabet 0..{end_of_alphabet - 1}")
        if s >= char_base:
            c = s - char_base
            out.insert(out.end(), utf8 + char_offsets[c], utf8 + char_offsets[c + 1])
        elif unknown_utf8 is not None:  # s is 0, the unknown symbol
            out.insert(out.end(), <const unsigned char*>PyBytes_AS_STRING(unknown_utf8),
                       <const unsigned char*>PyBytes_AS_STRING(unknown_utf8) + PyBytes_GET_SIZE(unknown_utf8))
        elif s < H2_BASE:
            out.push_back(<unsigned char>s)
        elif s < H3_BASE:
            if k + 1 < n and H3_BASE <= symbols[k + 1] < PREFIX_BASE:
                if want_starts:
                    start_of[k + 1] = out.size()
                if prefix < 0:
                    errors.append((out.size(), k))
                else:
                    h2 = s - H2_BASE
                    h3 = symbols[k + 1] - H3_BASE
                    out.push_back(<unsigned char>((prefix << 2) | (h2 >> 5)))
                    out.push_back(<unsigned char>(0x80 | ((h2 & 0x1F) << 1) | (h3 >> 6)))
                    out.push_back(<unsigned char>(0x80 | (h3 & 0x3F)))
                k += 1
            else:
                errors.append((out.size(), k))
        elif s < PREFIX_BASE:
            errors.append((out.size(), k))
        else:
            prefix = ordered[s - PREFIX_BASE]
        k += 1
    data = PyBytes_FromStringAndSize(<const char*>out.data(), out.size())
    return data, errors, starts
