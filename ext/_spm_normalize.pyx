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
from libc.string cimport memcmp, memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

from charsmap_trie cimport bmp_key_starts, is_key_path, longest_key, replacement, trie_pool, trie_units, utf8_length

cdef const char* SPACE_SYMBOL = b"\xe2\x96\x81"  # U+2581
cdef const char* SPACE = b" "


@cython.final
cdef class SentencePieceNormalizerCore:
    """normalize(text) as sentencepiece normalizes it with this charsmap (b"": no rules), these
    user-defined symbols and flags."""
    cdef vector[uint32_t] _units
    cdef bytes _pool
    # Per BMP code point: its UTF-8 starts some key (else the character is a piece of its own).
    cdef vector[unsigned char] _starts_key
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
        continues it with the next, ASCII, character (`_alone`); a character beyond U+FFFF, or an
        ASCII one before a non-ASCII one, takes NormalizePrefix's way (`_piece`)."""
        cdef Py_ssize_t size, i = 0, j, n, consumed, piece_size, w = 0
        cdef const unsigned char* data = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
        cdef const char* piece
        cdef bint after_space, escape = self._escape_whitespaces
        cdef bint remove_extra = self._remove_extra_whitespaces
        cdef bint* alone = self._alone
        cdef const unsigned char* starts_key = self._starts_key.data()
        cdef const Py_ssize_t* by_first_byte = self._by_first_byte
        cdef unsigned char lead
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
            elif lead < 0xF0 and by_first_byte[lead] == by_first_byte[lead + 1]:
                n = utf8_length(lead)
                code_point = ((lead & 0x1F) << 6 | (data[i + 1] & 0x3F) if n == 2
                              else (lead & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | (data[i + 2] & 0x3F))
                if not starts_key[code_point]:
                    out[w] = <char>lead  # byte by byte: a call to memcpy costs more on Chinese
                    out[w + 1] = <char>data[i + 1]
                    if n == 3:
                        out[w + 2] = <char>data[i + 2]
                    w += n
                    after_space = False
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
