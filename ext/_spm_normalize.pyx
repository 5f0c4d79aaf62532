"""sentencepiece's Normalizer::Normalize (src/normalizer.cc) over a text's UTF-8 bytes, as its C++
runs it: at each position the longest user-defined symbol stays as it is, else the longest key
of the precompiled charsmap (looked up in the blob's own darts-clone double array:
tokfx.normalizers.charsmap describes its units) becomes its replacement, else one character
stays; then the spaces rules (leading, repeated and trailing spaces dropped, the dummy prefix,
U+2581 for a space).

The blob must have been checked by tokfx.normalizers.charsmap.decode_charsmap (every key and
replacement reached from unit 0 is UTF-8 and inside the blob); lookups still stay inside it
whatever the units hold. Twin: SentencePieceNormalizer's walk over its pieces
(tokfx.normalizers.sentencepiece, `_normalize_pieces(pieces(text))`).
"""
cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, uint32_t
from libc.string cimport memchr, memcmp, memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

from charsmap_trie cimport (bmp_key_starts, encode_utf8, has_longer_key, is_key_path, longest_key, replacement,
                            trie_pool, trie_units, utf8_length)

cdef const char* SPACE_SYMBOL = b"\xe2\x96\x81"  # U+2581
cdef const char* SPACE = b" "

cdef enum:
    # What a BMP character outside ASCII is to the loop (_starts_key): a piece of its own; one
    # that takes NormalizePrefix's way (it starts a longer key, or a user symbol starts with
    # its lead byte); one that is a key of its own, and no longer key starts with it, whose
    # replacement is at most SHORT_BYTES bytes without a space (_short: nmt_nfkc's full-width
    # punctuation, a tenth of Chinese text's characters, which the trie walk made a third of
    # the normalizer's time there).
    PLAIN = 0
    PREFIX = 1
    SHORT = 2
    SHORT_BYTES = 3


@cython.final
cdef class SentencePieceNormalizerCore:
    """normalize(text) as sentencepiece normalizes it with this charsmap (b"": no rules), these
    user-defined symbols and flags."""
    cdef vector[uint32_t] _units
    cdef bytes _pool
    # Per BMP code point (the ASCII ones unused): PLAIN, PREFIX or SHORT.
    cdef vector[unsigned char] _starts_key
    # Per BMP code point that is SHORT: its replacement's length, then its bytes (zero-padded
    # to SHORT_BYTES), as (length | b0 << 8 | b1 << 16 | b2 << 24).
    cdef vector[uint32_t] _short
    # Per ASCII byte: no user symbol starts with it, it is no key, and no key is it and another
    # ASCII character (so before an ASCII character or the end it is a piece of its own: "a"
    # starts NFKC's "a" + U+0301 -> "á").
    cdef bint _alone[128]
    cdef string _symbols  # the user-defined symbols' UTF-8, one after another
    cdef vector[Py_ssize_t] _symbol_starts  # per symbol, longest first: its start in _symbols
    cdef vector[Py_ssize_t] _symbol_sizes
    cdef Py_ssize_t _by_first_byte[257]  # symbols first[b] .. first[b + 1] - 1 start with byte b
    cdef bint _add_dummy_prefix, _remove_extra_whitespaces, _escape_whitespaces, _suffix
    cdef string _out  # a buffer that only grows (resizing zero-fills): the result is its first _length bytes
    cdef Py_ssize_t _length

    def __init__(self, bytes charsmap, bint add_dummy_prefix, bint remove_extra_whitespaces,
                 bint escape_whitespaces, bint treat_whitespace_as_suffix, user_defined_symbols=()):
        cdef Py_ssize_t k
        cdef int b
        cdef uint32_t value
        self._add_dummy_prefix = add_dummy_prefix
        self._remove_extra_whitespaces = remove_extra_whitespaces
        self._escape_whitespaces = escape_whitespaces
        self._suffix = treat_whitespace_as_suffix
        self._units = trie_units(charsmap)
        self._pool = trie_pool(charsmap)
        cdef unsigned char utf8[2]
        cdef int32_t code_point, follower
        self._starts_key = bmp_key_starts(self._units, False)
        encoded = sorted({s.encode("utf-8") for s in user_defined_symbols if s}, key=lambda s: (s[0], -len(s)))
        k = 0
        for b in range(257):
            while k < len(encoded) and encoded[k][0] < b:
                k += 1
            self._by_first_byte[b] = k
        self._classify_bmp()
        for symbol in encoded:
            self._symbol_starts.push_back(self._symbols.size())
            self._symbol_sizes.push_back(len(symbol))
            self._symbols.append(<string>symbol)
        for code_point in range(0x80):
            utf8[0] = code_point
            self._alone[code_point] = self._by_first_byte[code_point] == self._by_first_byte[code_point + 1]
            if self._starts_key[code_point] and longest_key(self._units, utf8, 1, &value):
                self._alone[code_point] = False
            for follower in range(0x80):
                utf8[1] = follower
                if is_key_path(self._units, utf8, 2):
                    self._alone[code_point] = False

    cdef int _classify_bmp(self) except -1:
        """_starts_key's PREFIX and SHORT from its key starts and the user symbols' first bytes,
        with _short."""
        cdef unsigned char utf8[3]
        cdef uint32_t code_point, value = 0
        cdef Py_ssize_t n, size, j
        cdef const char* piece
        cdef uint32_t packed
        self._short.assign(0x10000, 0)
        for code_point in range(0x80, 0x10000):
            if 0xD800 <= code_point < 0xE000:
                continue
            n = encode_utf8(code_point, utf8)
            if self._by_first_byte[utf8[0]] != self._by_first_byte[utf8[0] + 1]:
                self._starts_key[code_point] = PREFIX
                continue
            if not self._starts_key[code_point]:
                continue
            self._starts_key[code_point] = PREFIX
            if longest_key(self._units, utf8, n, &value) != n or has_longer_key(self._units, utf8, n):
                continue
            piece = replacement(self._pool, len(self._pool), value, &size)
            if size > SHORT_BYTES or memchr(piece, c" ", size) != NULL:
                continue
            packed = <uint32_t>size
            for j in range(size):
                packed |= <uint32_t>(<unsigned char>piece[j]) << (8 * (j + 1))
            self._short[code_point] = packed
            self._starts_key[code_point] = SHORT
        return 0

    cdef Py_ssize_t _user_symbol(self, const unsigned char* text, Py_ssize_t size) noexcept:
        """The byte length of the longest user-defined symbol that text starts with, or 0."""
        cdef Py_ssize_t k, n
        for k in range(self._by_first_byte[text[0]], self._by_first_byte[text[0] + 1]):
            n = self._symbol_sizes[k]
            if n <= size and memcmp(self._symbols.data() + self._symbol_starts[k], text, n) == 0:
                return n
        return 0

    cdef Py_ssize_t _piece(self, const unsigned char* text, Py_ssize_t size,
                           const char** piece, Py_ssize_t* piece_size) except -1:
        """NormalizePrefix: the piece at text (its replacement at *piece, *piece_size bytes);
        returns how many bytes it consumes."""
        cdef Py_ssize_t n
        cdef uint32_t value = 0
        if self._by_first_byte[text[0]] != self._by_first_byte[text[0] + 1]:
            n = self._user_symbol(text, size)
            if n:
                piece[0], piece_size[0] = <const char*>text, n
                return n
        n = longest_key(self._units, text, size, &value)
        if n:
            piece[0] = replacement(self._pool, len(self._pool), value, piece_size)
            return n
        n = utf8_length(text[0])
        piece[0], piece_size[0] = <const char*>text, n
        return n

    cdef char* _room(self, Py_ssize_t used, Py_ssize_t needed) except NULL:
        """The output buffer, grown (if it must) to hold `used` + `needed` bytes."""
        if used + needed > <Py_ssize_t>self._out.size():
            self._out.resize(2 * (used + needed))
        return &self._out[0]

    def normalize(self, str text):
        """`text` normalized; UnicodeEncodeError for a lone surrogate (which the caller replaces)."""
        self._normalize(text)
        return PyUnicode_DecodeUTF8(self._out.data(), self._length, NULL)

    def normalize_utf8(self, str text):
        """normalize(text) as UTF-8, as the loop writes it (what the encoders take)."""
        self._normalize(text)
        return PyBytes_FromStringAndSize(self._out.data(), self._length)

    cdef int _normalize(self, str text) except -1:
        """The normalized UTF-8 of `text` into self._out[:self._length].

        The output is written through a pointer into a buffer kept at least 3 bytes per input
        byte still to read (+ 6 for the dummy prefix or suffix) ahead of the write position: a
        character that is a piece of its own is copied, a space becomes U+2581 (3 bytes), so
        those need no check; only a replacement (of any length) grows it. A character is a piece
        of its own when no user symbol or key starts there, an ASCII one only when no key
        continues it with the next, ASCII, character (`_alone`); a BMP one that is a key of its
        own with a short replacement is written from `_short` (`_starts_key`); a character
        beyond U+FFFF, one that starts a longer key or whose lead byte starts a user symbol, or
        an ASCII one before a non-ASCII one, takes NormalizePrefix's way (`_piece`)."""
        cdef Py_ssize_t size, i = 0, j, n, consumed, piece_size, w = 0
        cdef const unsigned char* data = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
        cdef const char* piece
        cdef bint after_space, escape = self._escape_whitespaces
        cdef bint remove_extra = self._remove_extra_whitespaces
        cdef bint* alone = self._alone
        cdef const unsigned char* starts_key = self._starts_key.data()
        cdef const uint32_t* short_replacement = self._short.data()
        cdef unsigned char lead, kind
        cdef uint32_t packed
        cdef int32_t code_point
        cdef char* out
        self._length = 0
        if remove_extra:  # leading pieces that are a space
            while i < size:
                consumed = self._piece(data + i, size - i, &piece, &piece_size)
                if not (piece_size == 1 and piece[0] == c" "):
                    break
                i += consumed
        if i == size:
            return 0
        out = self._room(0, 3 * (size - i) + 6)
        if self._add_dummy_prefix and not self._suffix:
            w = _write_space(out, w, escape)
        after_space = remove_extra
        while i < size:
            lead = data[i]
            if lead < 0x80:
                if alone[lead] and (i + 1 == size or data[i + 1] < 0x80):
                    if lead == c" ":
                        if not after_space:
                            w = _write_space(out, w, escape)
                        after_space = remove_extra
                    else:
                        out[w] = <char>lead
                        w += 1
                        after_space = False
                    i += 1
                    continue
            elif lead < 0xF0:
                n = utf8_length(lead)
                code_point = ((lead & 0x1F) << 6 | (data[i + 1] & 0x3F) if n == 2
                              else (lead & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | (data[i + 2] & 0x3F))
                kind = starts_key[code_point]
                if kind == PLAIN and n == 3:
                    # A run of 3-byte characters that are pieces of their own (Chinese): the
                    # next position is i + 3 whatever the bytes, so the loop's reads do not wait
                    # on each other. 4 bytes copied at once: the 4th lies within the room ahead
                    # (or is overwritten next), and the text's UTF-8 ends with a NUL byte.
                    while True:
                        memcpy(out + w, data + i, 4)
                        w += 3
                        i += 3
                        if i >= size:
                            break
                        lead = data[i]
                        if lead < 0xE0 or lead >= 0xF0:
                            break
                        code_point = (lead & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | (data[i + 2] & 0x3F)
                        if starts_key[code_point] != PLAIN:
                            break
                    after_space = False
                    continue
                if kind == PLAIN:
                    out[w] = <char>lead
                    out[w + 1] = <char>data[i + 1]
                    w += 2
                    after_space = False
                    i += 2
                    continue
                if kind == SHORT:  # its replacement, without the trie (no space in it to handle)
                    packed = short_replacement[code_point]
                    out[w] = <char>(packed >> 8)
                    out[w + 1] = <char>(packed >> 16)
                    out[w + 2] = <char>(packed >> 24)
                    w += packed & 0xFF
                    after_space = after_space and (packed & 0xFF) == 0
                    i += n
                    continue
            consumed = self._piece(data + i, size - i, &piece, &piece_size)
            out = self._room(w, 3 * (piece_size + size - i - consumed) + 6)
            j = 0
            if after_space:
                while j < piece_size and piece[j] == c" ":
                    j += 1
            if j < piece_size:
                while j < piece_size:
                    if piece[j] == c" ":
                        w = _write_space(out, w, escape)
                    else:
                        out[w] = piece[j]
                        w += 1
                    j += 1
                after_space = remove_extra and piece[piece_size - 1] == c" "
            i += consumed
        if remove_extra:  # trailing spaces
            n = 3 if escape else 1
            while w >= n and memcmp(out + w - n, SPACE_SYMBOL if escape else SPACE, n) == 0:
                w -= n
        if self._add_dummy_prefix and self._suffix:
            w = _write_space(out, w, escape)
        self._length = w
        return 0


cdef inline Py_ssize_t _write_space(char* out, Py_ssize_t w, bint escape) noexcept:
    """Writes the space (U+2581 when escaped) at out + w; returns the new end."""
    if escape:
        memcpy(out + w, SPACE_SYMBOL, 3)
        return w + 3
    out[w] = c" "
    return w + 1
