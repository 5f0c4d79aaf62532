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
from libc.string cimport memcmp
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
    cdef string _out

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

    cdef Py_ssize_t _own_pieces(self, const unsigned char* data, Py_ssize_t i, Py_ssize_t size) noexcept:
        """The end of the characters from i on that are each a piece of their own (no user
        symbol or key starts there, or an ASCII one that no key continues with the next, ASCII,
        character), spaces and characters beyond U+FFFF excepted: they are copied as they are."""
        cdef unsigned char lead
        cdef Py_ssize_t n
        cdef int32_t code_point
        while i < size:
            lead = data[i]
            if lead < 0x80:
                if not self._alone[lead] or lead == c" " or (i + 1 < size and data[i + 1] >= 0x80):
                    return i
                i += 1
                continue
            if lead >= 0xF0 or self._by_first_byte[lead] != self._by_first_byte[lead + 1]:
                return i
            n = utf8_length(lead)
            code_point = ((lead & 0x1F) << 6 | (data[i + 1] & 0x3F) if n == 2
                          else (lead & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | (data[i + 2] & 0x3F))
            if self._starts_key[code_point]:
                return i
            i += n
        return i

    cdef void _add_space(self) noexcept:
        if self._escape_whitespaces:
            self._out.append(SPACE_SYMBOL, 3)
        else:
            self._out.push_back(c" ")

    def normalize(self, str text):
        """`text` normalized; UnicodeEncodeError for a lone surrogate (which the caller replaces)."""
        self._normalize(text)
        return PyUnicode_DecodeUTF8(self._out.data(), self._out.size(), NULL)

    def normalize_utf8(self, str text):
        """normalize(text) as UTF-8, as the loop writes it (what the encoders take)."""
        self._normalize(text)
        return PyBytes_FromStringAndSize(self._out.data(), self._out.size())

    cdef int _normalize(self, str text) except -1:
        """The normalized UTF-8 of `text` into self._out."""
        cdef Py_ssize_t size, i = 0, j, n, consumed, piece_size
        cdef const unsigned char* data = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
        cdef const char* piece
        cdef bint after_space
        cdef size_t space_size = 3 if self._escape_whitespaces else 1
        cdef const char* space = SPACE_SYMBOL if self._escape_whitespaces else SPACE
        self._out.clear()
        if self._remove_extra_whitespaces:  # leading pieces that are a space
            while i < size:
                consumed = self._piece(data + i, size - i, &piece, &piece_size)
                if not (piece_size == 1 and piece[0] == c" "):
                    break
                i += consumed
        if i == size:
            return 0
        if self._add_dummy_prefix and not self._suffix:
            self._add_space()
        after_space = self._remove_extra_whitespaces
        while i < size:
            n = self._own_pieces(data, i, size)
            if n > i:
                self._out.append(<const char*>data + i, n - i)
                after_space = False
                i = n
                continue
            if data[i] == c" " and self._alone[c" "] and (i + 1 == size or data[i + 1] < 0x80):
                if not after_space:
                    self._add_space()
                after_space = self._remove_extra_whitespaces
                i += 1
                continue
            consumed = self._piece(data + i, size - i, &piece, &piece_size)
            j = 0
            if after_space:
                while j < piece_size and piece[j] == c" ":
                    j += 1
            if j < piece_size:
                while j < piece_size:
                    if piece[j] == c" ":
                        self._add_space()
                    else:
                        self._out.push_back(piece[j])
                    j += 1
                after_space = self._remove_extra_whitespaces and piece[piece_size - 1] == c" "
            i += consumed
        if self._remove_extra_whitespaces:
            while self._out.size() >= space_size and memcmp(self._out.data() + self._out.size() - space_size,
                                                           space, space_size) == 0:
                self._out.resize(self._out.size() - space_size)
        if self._add_dummy_prefix and self._suffix:
            self._add_space()
        return 0
