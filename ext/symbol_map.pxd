"""One pre-token's UTF-8 bytes -> base symbols, for every alphabet (tokfx.alphabet): the bytes as
they are, the cjk remap, characters with byte fallback (each optionally remapped), or characters
with one unknown symbol for any other character. Inline, so
that the encode cores and the training mapper share it. Twin: tokfx.reference.alphabet.symbols.
"""
from libc.stdint cimport int32_t

from cjk_remap cimport cjk_remap_char, cjk_symbols


cdef struct SymbolMap:
    bint remap  # well-formed 3-byte characters of the remapped groups become [prefix] h2 h3
    int32_t prefix_ids[4]  # cjk_remap_char's table
    # The chars alphabet: code point -> symbol, -1 for a character not covered (spelled as its
    # bytes); NULL for a byte-level alphabet. Code points from char_limit up are not covered.
    const int32_t* char_ids
    Py_ssize_t char_limit
    # A chars alphabet without byte fallback (sentencepiece's unknown piece): the symbol of any
    # character not covered, and of each byte that is not UTF-8; -1 for byte fallback.
    int32_t unknown


cdef inline int init_symbol_map(SymbolMap* m, prefix_ids, const int32_t[::1] char_ids,
                                Py_ssize_t num_symbols, unknown_symbol) except -1:
    """Fill m from prefix_ids (4 entries, or None: no remap), char_ids (or None: byte-level) and
    unknown_symbol (None: byte fallback; only with char_ids and no remap), refusing any symbol
    outside 0..num_symbols-1. The caller keeps char_ids' buffer alive."""
    cdef Py_ssize_t k
    m.remap = prefix_ids is not None
    if m.remap:
        prefix_ids = list(prefix_ids)
        if len(prefix_ids) != 4:
            raise ValueError(f"cjk prefix ids must hold 4 entries, got {len(prefix_ids)}")
        for k in range(4):
            if not (prefix_ids[k] == -1 or 512 <= prefix_ids[k] < num_symbols):
                raise ValueError(f"cjk prefix ids[{k}] = {prefix_ids[k]} is not -1 or a prefix symbol")
            m.prefix_ids[k] = prefix_ids[k]
    m.char_ids = NULL
    m.char_limit = 0
    if char_ids is not None:
        for k in range(char_ids.shape[0]):
            if not -1 <= char_ids[k] < num_symbols:
                raise ValueError(f"char ids[{k}] = {char_ids[k]} is not -1 or a symbol")
        if char_ids.shape[0]:
            m.char_ids = &char_ids[0]
        m.char_limit = char_ids.shape[0]
    m.unknown = -1
    if unknown_symbol is not None:
        if char_ids is None or m.remap:
            raise ValueError("an unknown symbol needs char ids and no cjk remap")
        if not 0 <= unknown_symbol < num_symbols:
            raise ValueError(f"unknown symbol {unknown_symbol} is not a symbol")
        m.unknown = unknown_symbol
    return 0


cdef inline Py_ssize_t utf8_char(const unsigned char* c, Py_ssize_t size, int32_t* code_point) noexcept nogil:
    """The length of the well-formed UTF-8 character at c (well-formed as Python's strict decoder
    has it: no overlong form, no surrogate, nothing past U+10FFFF), setting *code_point; 0 if
    the bytes there are not one."""
    cdef unsigned char b1 = c[0]
    if b1 < 0x80:
        code_point[0] = b1
        return 1
    if b1 < 0xC2 or b1 > 0xF4:
        return 0
    if b1 < 0xE0:
        if size < 2 or (c[1] & 0xC0) != 0x80:
            return 0
        code_point[0] = ((b1 & 0x1F) << 6) | (c[1] & 0x3F)
        return 2
    if b1 < 0xF0:
        if (size < 3 or (c[1] & 0xC0) != 0x80 or (c[2] & 0xC0) != 0x80
                or (b1 == 0xE0 and c[1] < 0xA0) or (b1 == 0xED and c[1] >= 0xA0)):
            return 0
        code_point[0] = ((b1 & 0x0F) << 12) | ((c[1] & 0x3F) << 6) | (c[2] & 0x3F)
        return 3
    if (size < 4 or (c[1] & 0xC0) != 0x80 or (c[2] & 0xC0) != 0x80 or (c[3] & 0xC0) != 0x80
            or (b1 == 0xF0 and c[1] < 0x90) or (b1 == 0xF4 and c[1] >= 0x90)):
        return 0
    code_point[0] = ((b1 & 0x07) << 18) | ((c[1] & 0x3F) << 12) | ((c[2] & 0x3F) << 6) | (c[3] & 0x3F)
    return 4


cdef inline Py_ssize_t _three_byte_run(const SymbolMap* m, const unsigned char* piece, Py_ssize_t size,
                                       Py_ssize_t i, int32_t* out, Py_ssize_t* n) noexcept nogil:
    """map_symbols' characters (of a chars alphabet with an unknown symbol) from piece[i] while
    they are well-formed 3-byte ones (Chinese): written to out from out[*n]; returns where the
    run stops. The next character is always 3 bytes on, so the loop's reads do not wait on
    each other's lengths as utf8_char's do; the checks are folded into one branch, and the
    unknown symbol is chosen by a mask (in Chinese text, covered characters and not covered
    ones come mixed)."""
    cdef unsigned char b1, b2, b3
    cdef int32_t code_point, symbol, unknown = m.unknown
    cdef Py_ssize_t k = n[0]
    while i + 3 <= size:
        b1, b2, b3 = piece[i], piece[i + 1], piece[i + 2]
        code_point = (b1 & 0x0F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F)
        # Not a lead byte and two continuation bytes, overlong, or a surrogate.
        if (((b1 & 0xF0) ^ 0xE0) | ((b2 & 0xC0) ^ 0x80) | ((b3 & 0xC0) ^ 0x80)
                | (code_point < 0x800) | ((code_point & 0xF800) == 0xD800)):
            break
        symbol = m.char_ids[code_point] if code_point < m.char_limit else -1
        symbol += (unknown - symbol) & -(symbol < 0)
        out[k] = symbol
        k += 1
        i += 3
    n[0] = k
    return i


cdef inline Py_ssize_t map_symbols(const SymbolMap* m, const unsigned char* piece, Py_ssize_t size,
                                   int32_t* out) noexcept nogil:
    """Write the base symbols of one pre-token to out (never more than size of them: a character
    is at most its bytes, a remapped one three); return how many. The pre-token starts with no
    current prefix, and a covered character between two fallback characters keeps it. With an
    unknown symbol, a character not covered is that one symbol (sentencepiece's unknown piece)."""
    cdef Py_ssize_t i
    if m.char_ids == NULL and m.unknown < 0:
        if m.remap:
            return cjk_symbols(piece, size, m.prefix_ids, out)
        for i in range(size):
            out[i] = piece[i]
        return size
    # Two copies of the loop, by a constant: with the 3-byte runs in it, the loop ran English
    # some 3 % slower even where they were never entered (byte fallback).
    if m.unknown >= 0:
        return _map_characters(m, piece, size, out, True)
    return _map_characters(m, piece, size, out, False)


cdef inline Py_ssize_t _map_characters(const SymbolMap* m, const unsigned char* piece, Py_ssize_t size,
                                       int32_t* out, bint runs) noexcept nogil:
    """map_symbols over a chars alphabet; `runs` (a constant at each call): with the 3-byte
    runs, which need the unknown symbol."""
    cdef Py_ssize_t i = 0, n = 0, length, k, written
    cdef int32_t code_point = 0, current = -1
    while i < size:
        # A run of 3-byte characters with the unknown symbol (Chinese), not one alone (the "▁"
        # between English words), nor with byte fallback (each character not covered would
        # leave the run): entering and leaving it costs more than utf8_char (measured: English
        # 5 %, Chinese with byte fallback 10 % slower).
        if runs and 0xE0 <= piece[i] < 0xF0 and i + 3 < size and 0xE0 <= piece[i + 3] < 0xF0:
            i = _three_byte_run(m, piece, size, i, out, &n)
            if i == size:
                break
        length = utf8_char(piece + i, size - i, &code_point)
        if length and code_point < m.char_limit and m.char_ids[code_point] >= 0:
            out[n] = m.char_ids[code_point]
            n += 1
            i += length
            continue
        if m.unknown >= 0:
            out[n] = m.unknown
            n += 1
            i += length if length else 1
            continue
        if length == 3 and m.remap:
            written = cjk_remap_char(piece + i, 3, m.prefix_ids, &current, out + n)
            if written:
                n += written
                i += 3
                continue
        if length == 0:  # not UTF-8: one byte at a time
            length = 1
        for k in range(length):
            out[n + k] = piece[i + k]
        n += length
        i += length
    return n
