# cython: language_level=3
"""Native pre-tokenizer: the same pieces as `regex.findall` for the built-in patterns.

Each pattern is a hand-written matcher that walks UTF-8 bytes and, at each piece start, tries
the pattern's alternatives in order with the pattern's own backtracking outcome (worked out
per alternative in the comments). Character classes come from lookup tables built at import
time from the installed `regex` module, so they agree with it whatever its Unicode version.

Input must be valid UTF-8; invalid bytes give unspecified pieces but never read out of bounds.
The reference is `regex.findall(tokfx.pre_tokenizers.patterns.PATTERNS[name], text)`; the tests compare the two.
"""
from array import array

import regex

from cpython.array cimport array as c_array, clone
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t, uint16_t, uint32_t
from libc.string cimport memchr
from libcpp.vector cimport vector

from id_list cimport int64s_as_array
from piece_end cimport PIECE_END_CAPSULE, PieceEnd, check_chunk_ends, chunk_piece_end

# ---------------------------------------------------------------------------------------------
# Character classes: a two-stage table, code point >> 8 -> 256-entry block of class bits.
# The low byte holds class bits; the high byte holds the ASCII letter a code point matches
# case-insensitively in a contraction (`(?i:'s)` also matches "'ſ"), else 0.

cdef enum:
    LETTER = 1         # \p{L}
    NUMBER = 2         # \p{N}
    SPACE = 4          # \s
    O200K_UPPER = 8    # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: may start an o200k word
    O200K_LOWER = 16   # [\p{Ll}\p{Lm}\p{Lo}\p{M}]: may continue an o200k word
    PUNCT_SYMBOL = 32  # [\p{P}\p{S}]: DeepSeek's punctuation
    CJK = 64           # [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]: DeepSeek's CJK runs
    LETTER_OR_MARK = 128  # [\p{L}\p{M}]: DeepSeek's words (a bit of its own, so that run_end
                          # can follow a run of either)
    OTHER_MASK = LETTER | NUMBER | SPACE  # none of these: [^\s\p{L}\p{N}]

cdef enum:
    CODE_POINTS = 0x110000
    BLOCK_BITS = 8
    BLOCK_SIZE = 256

_CLASS_SOURCES = (  # (bits, the class holding the code points that have them)
    (LETTER | LETTER_OR_MARK, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (O200K_UPPER, r"\p{Lu}"),
    (O200K_UPPER, r"\p{Lt}"),
    (O200K_LOWER, r"\p{Ll}"),
    (O200K_UPPER | O200K_LOWER, r"\p{Lm}"),
    (O200K_UPPER | O200K_LOWER, r"\p{Lo}"),
    (O200K_UPPER | O200K_LOWER | LETTER_OR_MARK, r"\p{M}"),
    (PUNCT_SYMBOL, r"\p{P}"),  # two passes take less time than one over [\p{P}\p{S}]
    (PUNCT_SYMBOL, r"\p{S}"),
)
# CJK is code point ranges, not a Unicode property: set directly (regex's pass would take longer).
_CJK_RANGES = ((0x4E00, 0x9FA5), (0x3040, 0x309F), (0x30A0, 0x30FF))
_CONTRACTION_LETTERS = "sdmtlvre"

cdef uint16_t BLOCK_OF[CODE_POINTS >> BLOCK_BITS]
cdef const uint16_t* CLASS_BLOCKS = NULL
cdef uint16_t ASCII_CLASS[128]


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object text)


cdef inline uint32_t code_point_at(uint32_t first, Py_ssize_t index) noexcept:
    """The code point at `index` of code_points(first, ...): the surrogates skipped."""
    cdef uint32_t point = first + <uint32_t>index
    return point + 0x800 if first < 0xD800 and point >= 0xD800 else point


cdef str code_points(uint32_t first, uint32_t last):
    """One string of the code points first..last-1 but the surrogates, filled in C."""
    cdef Py_ssize_t i, count = last - first
    if first < 0xD800 < last:
        count -= min(last, 0xE000) - 0xD800
    text = PyUnicode_New(count, 0x10FFFF)
    cdef Py_UCS4* data = <Py_UCS4*>PyUnicode_DATA(text)
    for i in range(count):
        data[i] = code_point_at(first, i)
    return text


def every_code_point():
    """One string of every code point but the surrogates; index i is `code_point_at(0, i)` (i,
    or i + 0x800 past the surrogates). Filled in C: from a Python range it took a third of the
    import. tokfx.normalizers.code_point_sets runs `regex` over it (4.4 MB)."""
    return code_points(0, CODE_POINTS)


cdef enum:
    # _build_class_table asks `regex` about this many code points at a time (64 blocks).
    WINDOW = 1 << 14


def _build_class_table():
    """Ask `regex` which code points each class holds, a window of code points at a time; keep
    the distinct 256-entry blocks. By windows, so that the import holds no string of every code
    point (4.4 MB) and no table of all their classes (2.2 MB): `import tokfx` peaked 1.8 MB
    higher and took 0.08 s more CPU (bench/README.md, issue 26)."""
    global CLASS_BLOCKS
    cdef c_array window = clone(array("H"), WINDOW, False)
    cdef uint16_t[::1] classes = window
    cdef Py_ssize_t i, start, end, first
    block_index = {}
    for first in range(0, CODE_POINTS, WINDOW):
        text = code_points(first, first + WINDOW)
        classes[:] = 0
        for bits, source in _CLASS_SOURCES:
            for match in regex.finditer(source + "+", text):
                start, end = match.span()
                for i in range(start, end):
                    classes[code_point_at(first, i) - first] |= bits
        for start, end in _CJK_RANGES:
            for i in range(max(start, first), min(end + 1, first + WINDOW)):
                classes[i - first] |= CJK
        # One pass for every letter (each alone took 8 passes), then which letter each match is.
        for match in regex.finditer("(?i:[" + _CONTRACTION_LETTERS + "])", text):
            for letter in _CONTRACTION_LETTERS:
                if regex.fullmatch("(?i:" + letter + ")", match.group()):
                    classes[code_point_at(first, match.start()) - first] |= ord(letter) << 8
        for i in range(WINDOW >> BLOCK_BITS):
            content = window[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE].tobytes()
            BLOCK_OF[(first >> BLOCK_BITS) + i] = block_index.setdefault(content, len(block_index))
        if first == 0:
            for i in range(128):
                ASCII_CLASS[i] = classes[i]
    cdef c_array blocks = array("H", b"".join(block_index))
    CLASS_BLOCKS = blocks.data.as_ushorts
    return blocks


_class_blocks = _build_class_table()  # owns the memory CLASS_BLOCKS points into


# ---------------------------------------------------------------------------------------------
# Decoding

ctypedef struct Char:
    uint16_t classes
    Py_ssize_t end  # byte offset just past the character


cdef inline uint16_t class_of(uint32_t code_point) noexcept nogil:
    if code_point >= CODE_POINTS:
        return 0
    return CLASS_BLOCKS[(<Py_ssize_t> BLOCK_OF[code_point >> BLOCK_BITS] << BLOCK_BITS)
                        | (code_point & (BLOCK_SIZE - 1))]


cdef inline Char char_at(const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The character starting at byte i < n: its classes and where it ends."""
    cdef Char c
    cdef unsigned char lead = s[i]
    cdef uint32_t code_point
    if lead < 0x80:
        c.classes = ASCII_CLASS[lead]
        c.end = i + 1
        return c
    if lead < 0xE0:
        c.end = i + 2
    elif lead < 0xF0:
        c.end = i + 3
    else:
        c.end = i + 4
    if c.end > n:  # truncated (invalid) input: stay inside the buffer
        c.end = n
        c.classes = 0
        return c
    if lead < 0xE0:
        code_point = ((lead & 0x1F) << 6) | (s[i + 1] & 0x3F)
    elif lead < 0xF0:
        code_point = ((lead & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F)
    else:
        code_point = (((lead & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12)
                      | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F))
    c.classes = class_of(code_point)
    return c


cdef inline Py_ssize_t run_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i,
                               uint16_t mask, uint16_t wanted) noexcept nogil:
    """End of the run from i of characters whose classes & mask == wanted."""
    cdef Char c
    while i < n:
        if s[i] < 0x80:  # most runs are ASCII: keep their loop free of decoding
            if (ASCII_CLASS[s[i]] & mask) != wanted:
                break
            i += 1
        else:
            c = char_at(s, n, i)
            if (c.classes & mask) != wanted:
                break
            i = c.end
    return i


cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* How many of the 8 bytes at p, from the first, are ASCII letters [A-Za-z] (the only letters
       below U+0080), found in one word instead of a byte at a time: a byte's value
       lowered (| 0x20) lies in 'a'..'z' exactly when the byte is a letter; adding 0x1F and 0x05
       to each 7-bit byte sets its high bit when it is >= 'a' and > 'z', never carrying into the
       next byte. Little-endian only: the first byte is the lowest. */
    static inline size_t tokfx_ascii_letters(const unsigned char* p) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        const uint64_t high = 0x8080808080808080ULL;
        uint64_t word, low, letters;
        memcpy(&word, p, 8);
        low = (word | 0x2020202020202020ULL) & 0x7F7F7F7F7F7F7F7FULL;
        letters = (low + 0x1F1F1F1F1F1F1F1FULL) & ~(low + 0x0505050505050505ULL) & ~word & high;
        return letters == high ? 8 : (size_t) __builtin_ctzll(~letters & high) >> 3;
    #else
        (void) p;
        return 0;
    #endif
    }
    """
    size_t ascii_letters "tokfx_ascii_letters"(const unsigned char* p) noexcept nogil


cdef inline Py_ssize_t letters_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """run_end(s, n, i, LETTER, LETTER), ASCII letters 8 bytes at a time while 8 are left: the
    GPT-2 pattern's piece_ends on English went from 280 to 495 MB/s (bench/README.md, "Letters
    a word at a time")."""
    cdef size_t letters
    while i + 8 <= n and s[i] < 0x80:  # (a run of other letters goes straight to the byte loop)
        letters = ascii_letters(s + i)
        i += letters
        if letters < 8:
            if s[i] < 0x80:  # an ASCII non-letter ends the run
                return i
            break
    return run_end(s, n, i, LETTER, LETTER)


cdef inline Py_ssize_t numbers_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i,
                                   int most) noexcept nogil:
    """End of \\p{N}{1,most} from i, a number character."""
    cdef Char c
    cdef int taken = 0
    while i < n and taken < most:
        c = char_at(s, n, i)
        if not (c.classes & NUMBER):
            break
        i = c.end
        taken += 1
    return i


cdef inline bint is_newline(unsigned char byte) noexcept nogil:
    return byte == b'\r' or byte == b'\n'


cdef inline Py_ssize_t newlines_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """End of [\\r\\n]* from i."""
    while i < n and is_newline(s[i]):
        i += 1
    return i


ctypedef struct WhitespaceRun:
    Py_ssize_t end           # end of the \s+ run
    Py_ssize_t last_start    # start of its last character (where \s+(?!\S) stops short)
    Py_ssize_t newline_end   # just past its last \r or \n, or -1 when it has none


cdef inline WhitespaceRun whitespace_run(const unsigned char* s, Py_ssize_t n,
                                         Py_ssize_t i) noexcept nogil:
    cdef WhitespaceRun run
    cdef Char c
    run.last_start = i
    run.newline_end = -1
    while i < n:
        c = char_at(s, n, i)
        if not (c.classes & SPACE):
            break
        run.last_start = i
        if is_newline(s[i]):
            run.newline_end = c.end
        i = c.end
    run.end = i
    return run


cdef inline Py_ssize_t shorter_whitespace_end(WhitespaceRun run, Py_ssize_t p, Py_ssize_t n) noexcept nogil:
    """`\\s+(?!\\S)|\\s+` from p: the whole run at the end of text, else all but its last
    character (which then joins the next piece), unless that leaves nothing."""
    if run.end == n or run.last_start == p:
        return run.end
    return run.last_start


cdef inline Py_ssize_t newline_whitespace_end(const unsigned char* s, Py_ssize_t n,
                                              Py_ssize_t p) noexcept nogil:
    """`\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+` from p, a whitespace character: the first backtracks to the
    run's last newline, even at the end of text; without one, the shorter run."""
    cdef WhitespaceRun run = whitespace_run(s, n, p)
    if run.newline_end >= 0:
        return run.newline_end
    return shorter_whitespace_end(run, p, n)


cdef inline unsigned char contraction_letter(Char c) noexcept nogil:
    """The ASCII letter c matches case-insensitively in a contraction, or 0."""
    return c.classes >> 8


cdef inline Py_ssize_t contraction_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    """End of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at p, or -1."""
    cdef Char first, second
    cdef unsigned char letter, wanted_second
    if p + 1 >= n or s[p] != b"'":
        return -1
    first = char_at(s, n, p + 1)
    letter = contraction_letter(first)
    if letter == b's' or letter == b't' or letter == b'm' or letter == b'd':
        return first.end
    if letter == b'l':
        wanted_second = b'l'
    elif letter == b'r' or letter == b'v':
        wanted_second = b'e'
    else:
        return -1
    if first.end >= n:
        return -1
    second = char_at(s, n, first.end)
    return second.end if contraction_letter(second) == wanted_second else -1


# ---------------------------------------------------------------------------------------------
# Matchers (piece_end.PieceEnd): (text, length, piece start) -> piece end. Each alternative's
# outcome is derived in its comment; a piece never ends empty, and every character belongs to
# some piece.


cdef Py_ssize_t gpt2_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    cdef Char c = char_at(s, n, p)
    cdef Char next_char
    cdef unsigned char b0 = s[p], b1, b2
    if b0 == b"'" and p + 1 < n:  # contractions, case-sensitive
        b1 = s[p + 1]
        if b1 == b's' or b1 == b'd' or b1 == b'm' or b1 == b't':
            return p + 2
        if p + 2 < n:
            b2 = s[p + 2]
            if (b1 == b'l' and b2 == b'l') or (b2 == b'e' and (b1 == b'v' or b1 == b'r')):
                return p + 3
    if b0 == b' ' and c.end < n:  # ` ?` takes the space only if the class follows it
        next_char = char_at(s, n, c.end)
        if next_char.classes & LETTER:
            return letters_end(s, n, next_char.end)
        if next_char.classes & NUMBER:
            return run_end(s, n, next_char.end, NUMBER, NUMBER)
        if not (next_char.classes & OTHER_MASK):
            return run_end(s, n, next_char.end, OTHER_MASK, 0)
    if c.classes & LETTER:
        return letters_end(s, n, c.end)
    if c.classes & NUMBER:
        return run_end(s, n, c.end, NUMBER, NUMBER)
    if not (c.classes & SPACE):
        return run_end(s, n, c.end, OTHER_MASK, 0)
    return shorter_whitespace_end(whitespace_run(s, n, p), p, n)


cdef inline Py_ssize_t spaced_run_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, Char c,
                                      uint16_t mask, uint16_t wanted) noexcept nogil:
    """End of ` ?[class]+` from p, or -1, where the class is the characters whose
    classes & mask == wanted (U+0020 not among them)."""
    if (c.classes & mask) == wanted:
        return run_end(s, n, c.end, mask, wanted)
    if s[p] == b' ' and c.end < n and (char_at(s, n, c.end).classes & mask) == wanted:
        return run_end(s, n, c.end, mask, wanted)
    return -1


cdef inline Py_ssize_t others_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p, Char c) noexcept nogil:
    """End of ` ?[^\\s\\p{L}\\p{N}]+` from p, or -1."""
    return spaced_run_end(s, n, p, c, OTHER_MASK, 0)


cdef inline Py_ssize_t cl100k_word_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p,
                                       Char c, int most_digits) noexcept nogil:
    """The alternatives cl100k, llama3 and qwen2 share before their whitespace ones, or -1:
    contractions | [^\\r\\n\\p{L}\\p{N}]?\\p{L}+ | \\p{N}{1,most_digits} | ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*
    (their possessive quantifiers never change the outcome: nothing after them could
    match what backtracking would give back)."""
    cdef Py_ssize_t end = contraction_end(s, n, p)
    cdef Char next_char
    if end >= 0:
        return end
    if c.classes & LETTER:
        return letters_end(s, n, c.end)
    if c.end < n and not (c.classes & NUMBER) and not is_newline(s[p]):
        next_char = char_at(s, n, c.end)
        if next_char.classes & LETTER:  # one non-letter, non-number prefix character
            return letters_end(s, n, next_char.end)
    if c.classes & NUMBER:
        return numbers_end(s, n, p, most_digits)
    end = others_end(s, n, p, c)
    return newlines_end(s, n, end) if end >= 0 else -1


cdef Py_ssize_t cl100k_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
    # |\s++$|\s*[\r\n]|\s+(?!\S)|\s
    cdef Char c = char_at(s, n, p)
    cdef Py_ssize_t end = cl100k_word_end(s, n, p, c, 3)
    cdef WhitespaceRun run
    if end >= 0:
        return end
    run = whitespace_run(s, n, p)
    if run.end == n:  # \s++$ takes all trailing whitespace, newlines included
        return run.end
    if run.newline_end >= 0:  # \s*[\r\n] backtracks to the run's last newline
        return run.newline_end
    return shorter_whitespace_end(run, p, n)


cdef inline Py_ssize_t llama3_like_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p,
                                             int most_digits) noexcept nogil:
    cdef Char c = char_at(s, n, p)
    cdef Py_ssize_t end = cl100k_word_end(s, n, p, c, most_digits)
    return end if end >= 0 else newline_whitespace_end(s, n, p)


cdef Py_ssize_t llama3_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
    # |\s*[\r\n]+|\s+(?!\S)|\s+
    return llama3_like_piece_end(s, n, p, 3)


cdef Py_ssize_t qwen2_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # Llama 3's with \p{N} for \p{N}{1,3}
    return llama3_like_piece_end(s, n, p, 1)


cdef inline Py_ssize_t with_contraction(const unsigned char* s, Py_ssize_t n, Py_ssize_t end) noexcept nogil:
    cdef Py_ssize_t contracted = contraction_end(s, n, end)
    return contracted if contracted >= 0 else end


cdef inline Py_ssize_t o200k_suffix_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t end,
                                        bint contractions) noexcept nogil:
    """A word's end, after its `(?i:'s|...)?` suffix where the pattern has one (o200k, not tekken)."""
    return with_contraction(s, n, end) if contractions else end


cdef inline Py_ssize_t o200k_lower_word_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i,
                                            bint contractions) noexcept nogil:
    """`[upper]*[lower]+(?i:'s|...)?` from i, or -1. The greedy [upper]* gives back characters
    until [lower]+ can start: right after the run if a lower-only character (Ll) follows it,
    else at the run's last character that is both upper and lower (Lm, Lo, M)."""
    cdef Char c
    cdef Py_ssize_t last_both = -1
    while i < n:
        c = char_at(s, n, i)
        if not (c.classes & O200K_UPPER):
            break
        if c.classes & O200K_LOWER:
            last_both = i
        i = c.end
    if i < n and char_at(s, n, i).classes & O200K_LOWER:
        return o200k_suffix_end(s, n, run_end(s, n, i, O200K_LOWER, O200K_LOWER), contractions)
    if last_both >= 0:
        return o200k_suffix_end(s, n, run_end(s, n, last_both, O200K_LOWER, O200K_LOWER), contractions)
    return -1


cdef inline Py_ssize_t o200k_upper_word_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i,
                                            bint contractions) noexcept nogil:
    """`[upper]+[lower]*(?i:'s|...)?` from i, or -1."""
    cdef Py_ssize_t upper_end = run_end(s, n, i, O200K_UPPER, O200K_UPPER)
    if upper_end == i:
        return -1
    return o200k_suffix_end(s, n, run_end(s, n, upper_end, O200K_LOWER, O200K_LOWER), contractions)


cdef inline Py_ssize_t o200k_like_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p,
                                            bint contractions, int most_digits) noexcept nogil:
    cdef Char c = char_at(s, n, p)
    cdef bint has_prefix = not (c.classes & (LETTER | NUMBER)) and not is_newline(s[p])
    cdef Py_ssize_t end
    # Each word alternative first tries with the optional prefix character taken, then
    # without it (which can only succeed when that character is a mark, M).
    if has_prefix:
        end = o200k_lower_word_end(s, n, c.end, contractions)
        if end < 0:
            end = o200k_lower_word_end(s, n, p, contractions)
        if end < 0:
            end = o200k_upper_word_end(s, n, c.end, contractions)
        if end < 0:
            end = o200k_upper_word_end(s, n, p, contractions)
    else:
        end = o200k_lower_word_end(s, n, p, contractions)
        if end < 0:
            end = o200k_upper_word_end(s, n, p, contractions)
    if end >= 0:
        return end
    if c.classes & NUMBER:
        return numbers_end(s, n, p, most_digits)
    end = others_end(s, n, p, c)
    if end >= 0:
        while end < n and (is_newline(s[end]) or s[end] == b'/'):
            end += 1
        return end
    return newline_whitespace_end(s, n, p)


cdef Py_ssize_t o200k_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # [^\r\n\p{L}\p{N}]?[upper]*[lower]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
    # |[^\r\n\p{L}\p{N}]?[upper]+[lower]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
    # |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
    # with upper = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], lower = [\p{Ll}\p{Lm}\p{Lo}\p{M}]
    return o200k_like_piece_end(s, n, p, True, 3)


cdef Py_ssize_t tekken_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # o200k's without the contraction suffixes, with \p{N} for \p{N}{1,3}
    return o200k_like_piece_end(s, n, p, False, 1)


# Hugging Face's Isolated Splits, the text between matches kept as pieces (patterns.py).

cdef inline bint is_ascii_letter(unsigned char byte) noexcept nogil:
    return b'a' <= (byte | 0x20) <= b'z'


cdef inline bint is_ascii_punctuation(unsigned char byte) noexcept nogil:
    """[!"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]: every printable ASCII character but
    letters, digits and the space."""
    return (0x21 <= byte <= 0x2F or 0x3A <= byte <= 0x40 or 0x5B <= byte <= 0x60
            or 0x7B <= byte <= 0x7E)


cdef inline Py_ssize_t deepseek_gap_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """End of `(?:[^\\s\\p{L}\\p{M}\\p{P}\\p{S}](?![\\p{L}\\p{M}]))+` from i: the characters
    where DeepSeek's Split finds no match (one before [\\p{L}\\p{M}] starts a word)."""
    cdef Char c
    while i < n:
        c = char_at(s, n, i)
        if c.classes & (SPACE | LETTER_OR_MARK | PUNCT_SYMBOL):
            break
        if c.end < n and char_at(s, n, c.end).classes & LETTER_OR_MARK:
            break
        i = c.end
    return i


cdef Py_ssize_t deepseek_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
    # | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
    # |(?:[^\s\p{L}\p{M}\p{P}\p{S}](?![\p{L}\p{M}]))+      (the gaps)
    cdef Char c = char_at(s, n, p)
    cdef Py_ssize_t end
    if p + 1 < n and is_ascii_punctuation(s[p]) and is_ascii_letter(s[p + 1]):
        end = p + 2
        while end < n and is_ascii_letter(s[end]):
            end += 1
        return end
    # An [\p{L}\p{M}] run, with a prefix character or without: a mark may be either (not
    # \p{L}, \p{P}, \p{S}), and either way the run from it is the same.
    if c.classes & LETTER_OR_MARK:
        return run_end(s, n, c.end, LETTER_OR_MARK, LETTER_OR_MARK)
    if (c.end < n and not (c.classes & PUNCT_SYMBOL) and not is_newline(s[p])
            and char_at(s, n, c.end).classes & LETTER_OR_MARK):
        return run_end(s, n, c.end, LETTER_OR_MARK, LETTER_OR_MARK)
    end = spaced_run_end(s, n, p, c, PUNCT_SYMBOL, PUNCT_SYMBOL)
    if end >= 0:
        return newlines_end(s, n, end)
    if c.classes & SPACE:
        return newline_whitespace_end(s, n, p)
    return deepseek_gap_end(s, n, p)


cdef Py_ssize_t digits_1_3_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # \p{N}{1,3}|\P{N}+
    cdef Char c = char_at(s, n, p)
    if c.classes & NUMBER:
        return numbers_end(s, n, p, 3)
    return run_end(s, n, c.end, NUMBER, 0)


cdef Py_ssize_t digits_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # \p{N}|\P{N}+
    cdef Char c = char_at(s, n, p)
    if c.classes & NUMBER:
        return c.end
    return run_end(s, n, c.end, NUMBER, 0)


cdef Py_ssize_t cjk_runs_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+|[^\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+:
    # the run of characters on the same side of the class as the first
    cdef Char c = char_at(s, n, p)
    return run_end(s, n, c.end, CJK, c.classes & CJK)


# The PathPiece paper's variants.

cdef inline bint is_digit(unsigned char byte) noexcept nogil:
    return b'0' <= byte <= b'9'


cdef inline Py_ssize_t firstspace_whitespace_end(const unsigned char* s, Py_ssize_t n,
                                                 Py_ssize_t p) noexcept nogil:
    """`\\s+(?= \\S)|\\s+` from p, a whitespace character: only the run's last character can be
    a space followed by \\S, so the first alternative ends just before it when that leaves
    something, else the run is whole."""
    cdef Py_ssize_t end = whitespace_run(s, n, p).end
    if end < n and s[end - 1] == b' ' and end - 1 > p:
        return end - 1
    return end


cdef inline Py_ssize_t not_space_or_digit_end(const unsigned char* s, Py_ssize_t n,
                                              Py_ssize_t i) noexcept nogil:
    """End of the run of [^\\s0-9] from i."""
    cdef Char c
    while i < n:
        if s[i] < 0x80:
            if (ASCII_CLASS[s[i]] & SPACE) or is_digit(s[i]):
                break
            i += 1
        else:
            c = char_at(s, n, i)
            if c.classes & SPACE:
                break
            i = c.end
    return i


cdef inline Py_ssize_t byte_run_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t i,
                                    bint stop_at_space, bint stop_at_digit) noexcept nogil:
    """End of the run from i of bytes that are not a stop (U+0020, ASCII digits: single bytes
    that never occur inside a multi-byte character)."""
    while i < n and not ((stop_at_space and s[i] == b' ') or (stop_at_digit and is_digit(s[i]))):
        i += 1
    return i


cdef Py_ssize_t firstspace_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    #  ?\S+|\s+(?= \S)|\s+
    cdef Char c = char_at(s, n, p)
    if s[p] == b' ' and c.end < n and not (char_at(s, n, c.end).classes & SPACE):
        return run_end(s, n, c.end, SPACE, 0)
    if not (c.classes & SPACE):
        return run_end(s, n, c.end, SPACE, 0)
    return firstspace_whitespace_end(s, n, p)


cdef Py_ssize_t firstspace_digit_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # [0-9]| ?[^\s0-9]+| (?=[0-9])|\s+(?= \S)|\s+
    cdef Char c = char_at(s, n, p)
    if is_digit(s[p]):
        return p + 1
    if s[p] == b' ' and c.end < n:
        if is_digit(s[c.end]):
            return c.end
        if not (char_at(s, n, c.end).classes & SPACE):
            return not_space_or_digit_end(s, n, c.end)
    if not (c.classes & SPACE):
        return not_space_or_digit_end(s, n, c.end)
    return firstspace_whitespace_end(s, n, p)


cdef Py_ssize_t space_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    #  |[^ ]+
    return p + 1 if s[p] == b' ' else byte_run_end(s, n, p, True, False)


cdef Py_ssize_t digit_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # [0-9]|[^0-9]+
    return p + 1 if is_digit(s[p]) else byte_run_end(s, n, p, False, True)


cdef Py_ssize_t space_digit_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    #  |[0-9]|[^ 0-9]+
    if s[p] == b' ' or is_digit(s[p]):
        return p + 1
    return byte_run_end(s, n, p, True, True)


cdef inline bint is_meta_space(const unsigned char* s, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """U+2581 (E2 96 81) at i: sentencepiece's space. E2 is never a continuation byte, so a match
    is always a whole character."""
    return i + 2 < n and s[i] == 0xE2 and s[i + 1] == 0x96 and s[i + 2] == 0x81


cdef Py_ssize_t sentencepiece_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # \u2581*[^\u2581]+|\u2581+
    cdef const unsigned char* lead
    while is_meta_space(s, n, p):
        p += 3
    # The next U+2581 by its lead byte E2, found by memchr: a Chinese line holds few (the
    # quotation marks), and a byte loop over it was a sixth of sentencepiece BPE's encode.
    while p < n:
        lead = <const unsigned char*>memchr(s + p, 0xE2, n - p)
        if lead == NULL:
            return n
        p = lead - s
        if is_meta_space(s, n, p):
            return p
        p += 1
    return p


cdef Py_ssize_t none_piece_end(const unsigned char* s, Py_ssize_t n, Py_ssize_t p) noexcept nogil:
    # [\s\S]+
    return n


# ---------------------------------------------------------------------------------------------
# Public API

cdef PieceEnd MATCHERS[17]
MATCHERS[0] = gpt2_piece_end
MATCHERS[1] = cl100k_piece_end
MATCHERS[2] = llama3_piece_end
MATCHERS[3] = o200k_piece_end
MATCHERS[4] = firstspace_piece_end
MATCHERS[5] = firstspace_digit_piece_end
MATCHERS[6] = space_piece_end
MATCHERS[7] = digit_piece_end
MATCHERS[8] = space_digit_piece_end
MATCHERS[9] = none_piece_end
MATCHERS[10] = sentencepiece_piece_end
MATCHERS[11] = qwen2_piece_end
MATCHERS[12] = tekken_piece_end
MATCHERS[13] = digits_1_3_piece_end
MATCHERS[14] = cjk_runs_piece_end
MATCHERS[15] = deepseek_piece_end
MATCHERS[16] = digits_piece_end
_MATCHER_OF_PATTERN = {"gpt2": 0, "cl100k": 1, "gpt4": 1, "llama3": 2, "o200k": 3, "firstspace": 4,
                       "firstspace-digit": 5, "space": 6, "digit": 7, "space-digit": 8, "none": 9,
                       "sentencepiece": 10, "qwen2": 11, "tekken": 12, "digits-1-3": 13,
                       "cjk-runs": 14, "deepseek": 15, "digits": 16}
FAST_PATTERNS = frozenset(_MATCHER_OF_PATTERN)


cdef PieceEnd matcher_for(name) except NULL:
    try:
        return MATCHERS[<int> _MATCHER_OF_PATTERN[name]]
    except (KeyError, TypeError):
        raise ValueError(f"no native pre-tokenizer for pattern {name!r}; "
                         f"fast patterns are {', '.join(sorted(FAST_PATTERNS))}") from None


def piece_ends(bytes data not None, name, const int64_t[::1] chunk_ends=None):
    """Exclusive end byte offsets of the pieces `regex.findall(PATTERNS[name], ...)` gives.

    With `chunk_ends` (increasing, the last one len(data)), `data` is the chunks data[:e0],
    data[e0:e1], ... joined, and each chunk is split apart, as if alone: one call splits a
    batch of texts (a call per short text costs more than its splitting)."""
    cdef PieceEnd piece_end = matcher_for(name)
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = len(data), p = 0, start = 0, end, c
    cdef vector[int64_t] ends
    if chunk_ends is None:
        with nogil:
            while p < n:
                p = piece_end(s, n, p)
                ends.push_back(p)
    else:
        check_chunk_ends(chunk_ends, n)
        with nogil:
            for c in range(chunk_ends.shape[0]):
                end = chunk_ends[c]
                while p < end:
                    p = chunk_piece_end(piece_end, s, start, end, p)
                    ends.push_back(p)
                start = end
    return int64s_as_array(ends)


def matcher(name):
    """The matcher of a built-in pattern, for CountTable.add_pretokens (tokfx._count_table): a
    capsule of its piece_end.PieceEnd."""
    return PyCapsule_New(<void*> matcher_for(name), PIECE_END_CAPSULE, NULL)


def split(bytes data not None, name):
    """The pieces `regex.findall(PATTERNS[name], ...)` gives, as bytes."""
    cdef PieceEnd piece_end = matcher_for(name)
    cdef const char* s = PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = len(data), p = 0, end
    cdef list pieces = []
    while p < n:
        end = piece_end(<const unsigned char*> s, n, p)
        pieces.append(PyBytes_FromStringAndSize(s + p, end - p))
        p = end
    return pieces
