# cython: language_level=3
"""The fields a reader needs of one JSON-lines record, without decoding the rest of it: one pass
in C over the line that checks it is a JSON object as json.loads reads it and decodes only the
values of the named top-level fields. json.loads decoded every field of every record, and that
was most of the reading in the counting pass.

json.loads stays the judge: `fields` answers only for a line that json.loads surely reads, and
reads as it does; for anything else (not JSON, not an object, bad UTF-8 or an encoded surrogate,
which json.loads's surrogatepass reads, a lone surrogate's escape in a needed value, an integer
too long for int(), nesting deeper than MAX_DEPTH, a BOM or another encoding than UTF-8) it
answers None and the reader calls json.loads, whose result or error is then the answer. So a
check that is stricter than json.loads is safe, a laxer one is not.

Twin: tokfx.reference.json_fields.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp, memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector
from cpython.array cimport array as c_array, clone
from array import array

cdef extern from "Python.h":
    const char* PyBytes_AS_STRING(object)
    Py_ssize_t PyBytes_GET_SIZE(object)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object)

cdef enum:
    # Deeper nesting is left to json.loads (which recurses, and raises RecursionError deep down).
    MAX_DEPTH = 100
    # A longer integer is left to json.loads: int() refuses more than
    # sys.get_int_max_str_digits() digits (4300 by default, 640 at the least it can be set to).
    MAX_INT_DIGITS = 640


cdef struct Cursor:
    const uint8_t* p
    Py_ssize_t n
    Py_ssize_t i


cdef inline void skip_space(Cursor* c) noexcept nogil:
    # json's whitespace: space, tab, LF, CR (not the other characters bytes.strip takes).
    while c.i < c.n and (c.p[c.i] == 32 or c.p[c.i] == 9 or c.p[c.i] == 10 or c.p[c.i] == 13):
        c.i += 1


# The value of each hex digit's byte, 255 for any other byte.
cdef uint8_t HEX[256]
for _byte in range(256):
    HEX[_byte] = int(chr(_byte), 16) if chr(_byte) in "0123456789abcdefABCDEF" else 255


cdef inline bint is_hex4(const uint8_t* p) noexcept nogil:
    return (HEX[p[0]] | HEX[p[1]] | HEX[p[2]] | HEX[p[3]]) < 16


cdef inline bint is_continuation(const uint8_t* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    return i < n and (p[i] & 0xC0) == 0x80


cdef inline Py_ssize_t utf8_length(const uint8_t* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The length of the UTF-8 sequence of a non-ASCII character at p[i], 0 when it is not one.
    An encoded surrogate (ED A0..BF ..), which json.loads's surrogatepass would read, is 0 too:
    left to json.loads."""
    cdef uint8_t b = p[i]
    cdef uint8_t low = 0x80, high = 0xBF
    cdef Py_ssize_t length, k
    if 0xC2 <= b <= 0xDF:
        length = 2
    elif 0xE0 <= b <= 0xEF:
        length = 3
        if b == 0xE0:
            low = 0xA0
        elif b == 0xED:
            high = 0x9F
    elif 0xF0 <= b <= 0xF4:
        length = 4
        if b == 0xF0:
            low = 0x90
        elif b == 0xF4:
            high = 0x8F
    else:
        return 0
    if i + 1 >= n or not (low <= p[i + 1] <= high):
        return 0
    for k in range(2, length):
        if not is_continuation(p, i + k, n):
            return 0
    return length


cdef extern from *:
    """
    /* How many of the 8 bytes at p are plain string bytes (ASCII, no control character, quote
       or backslash) before the first that is not: most of a text is skipped a word at a time.
       hasless(x, n) (Bit Twiddling Hacks) marks a byte below n; a borrow can mark a byte above
       it too, never below, so the lowest mark is the first such byte. */
    static inline int json_fields_plain_run(const unsigned char* p) {
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        uint64_t x, quote, backslash, marks;
        memcpy(&x, p, 8);
        quote = x ^ (ones * 0x22);
        backslash = x ^ (ones * 0x5C);
        marks = (x & highs) | ((x - ones * 0x20) & ~x & highs) | ((quote - ones) & ~quote & highs)
                | ((backslash - ones) & ~backslash & highs);
        if (marks == 0) return 8;
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return __builtin_ctzll(marks) >> 3;
    #else
        return 0;
    #endif
    }
    """
    int plain_run "json_fields_plain_run"(const uint8_t* p) noexcept nogil


cdef inline bint all_high(const uint8_t* p) noexcept nogil:
    """Whether the 8 bytes at p are all non-ASCII (inside a run of CJK text, say)."""
    cdef uint64_t x
    memcpy(&x, p, 8)
    return (x & <uint64_t> 0x8080808080808080) == <uint64_t> 0x8080808080808080


cdef struct Shape:
    # What a checked string holds, for decoding it: its escapes, and whether it is ASCII with no
    # \u escape (then its text is as many characters as its bytes less one an escape).
    Py_ssize_t escapes
    bint ascii


cdef bint skip_string(Cursor* c, Shape* shape, bint check_utf8) noexcept nogil:
    """Past the string that starts at c.i (a quote), checked as json.loads (strict) checks it;
    its UTF-8 only when `check_utf8` (a needed value's is checked as it is decoded: most of a
    line's bytes are its text)."""
    cdef const uint8_t* p = c.p
    cdef Py_ssize_t i = c.i + 1, n = c.n, length
    cdef int run
    cdef uint8_t b
    shape.escapes, shape.ascii = 0, True
    while i < n:
        while i + 8 <= n:
            run = plain_run(p + i)
            i += run
            if run < 8:
                break
        if i >= n:
            break
        b = p[i]
        if b == 34:  # "
            c.i = i + 1
            return True
        if b == 92:  # \
            shape.escapes += 1
            if i + 1 >= n:
                return False
            b = p[i + 1]
            if b == 117:  # u
                if i + 5 >= n or not is_hex4(p + i + 2):
                    return False
                shape.ascii = False
                i += 6
            elif b == 34 or b == 92 or b == 47 or b == 98 or b == 102 or b == 110 or b == 114 or b == 116:
                i += 2
            else:
                return False
        elif b < 32:
            return False  # a control character: json.loads (strict) refuses it
        elif b < 128:
            i += 1
        elif check_utf8:
            length = utf8_length(p, i, n)
            if length == 0:
                return False
            shape.ascii = False
            i += length
        else:
            shape.ascii = False
            i += 1
            while i + 8 <= n and all_high(p + i):
                i += 8
            while i < n and p[i] >= 128:
                i += 1
    return False


cdef inline bint any_high(const uint8_t* p) noexcept nogil:
    """Whether any of the 8 bytes at p is non-ASCII."""
    cdef uint64_t x
    memcpy(&x, p, 8)
    return (x & <uint64_t> 0x8080808080808080) != 0


cdef inline bint is_blank(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Whether p[:n] is only what bytes.strip takes away (a blank line holds no document)."""
    cdef Py_ssize_t i
    for i in range(n):
        if not (p[i] == 32 or 9 <= p[i] <= 13):
            return False
    return True


cdef bint is_utf8(const uint8_t* p, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
    """Whether p[start:end] is UTF-8 with no encoded surrogate. ASCII is passed over a word at
    a time: a text with a single curly quote is checked whole (0.14 -> 0.10 s for the 127 MB of
    one file of the 1 GB bench corpus, 83 % of its texts not ASCII)."""
    cdef Py_ssize_t i = start, length
    while i < end:
        while i + 8 <= end and not any_high(p + i):
            i += 8
        if i >= end:
            break
        if p[i] < 128:
            i += 1
            continue
        length = utf8_length(p, i, end)
        if length == 0:
            return False
        i += length
    return True


cdef bint skip_word(Cursor* c, const char* word, Py_ssize_t length) noexcept nogil:
    if c.i + length > c.n or memcmp(c.p + c.i, word, length) != 0:
        return False
    c.i += length
    return True


cdef inline Py_ssize_t skip_digits(Cursor* c) noexcept nogil:
    cdef Py_ssize_t start = c.i
    while c.i < c.n and 48 <= c.p[c.i] <= 57:
        c.i += 1
    return c.i - start


cdef bint skip_number(Cursor* c) noexcept nogil:
    """-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, json's number."""
    cdef Py_ssize_t digits
    cdef bint whole = True
    if c.p[c.i] == 45:  # -
        c.i += 1
    if c.i >= c.n:
        return False
    if c.p[c.i] == 48:  # 0: no more digits before the fraction
        c.i += 1
        digits = 1
    else:
        digits = skip_digits(c)
        if digits == 0:
            return False
    if c.i < c.n and c.p[c.i] == 46:  # .
        c.i += 1
        whole = False
        if skip_digits(c) == 0:
            return False
    if c.i < c.n and (c.p[c.i] == 101 or c.p[c.i] == 69):  # e E
        c.i += 1
        whole = False
        if c.i < c.n and (c.p[c.i] == 43 or c.p[c.i] == 45):
            c.i += 1
        if skip_digits(c) == 0:
            return False
    return not (whole and digits > MAX_INT_DIGITS)


cdef inline char* write_utf8(char* out, uint32_t code) noexcept nogil:
    if code < 0x80:
        out[0] = <char> code
        return out + 1
    if code < 0x800:
        out[0] = <char> (0xC0 | (code >> 6))
        out[1] = <char> (0x80 | (code & 0x3F))
        return out + 2
    if code < 0x10000:
        out[0] = <char> (0xE0 | (code >> 12))
        out[1] = <char> (0x80 | ((code >> 6) & 0x3F))
        out[2] = <char> (0x80 | (code & 0x3F))
        return out + 3
    out[0] = <char> (0xF0 | (code >> 18))
    out[1] = <char> (0x80 | ((code >> 12) & 0x3F))
    out[2] = <char> (0x80 | ((code >> 6) & 0x3F))
    out[3] = <char> (0x80 | (code & 0x3F))
    return out + 4


cdef inline uint32_t hex4(const uint8_t* p) noexcept nogil:
    return (<uint32_t> HEX[p[0]] << 12) | (<uint32_t> HEX[p[1]] << 8) | (<uint32_t> HEX[p[2]] << 4) | HEX[p[3]]


cdef Py_ssize_t unescape(const uint8_t* p, Py_ssize_t start, Py_ssize_t end, char* out) noexcept nogil:
    """How many bytes of `out` the checked string body p[start:end] fills, its escapes decoded
    (in UTF-8; never more bytes than the body's); -1 for a lone surrogate (\\ud800 alone:
    json.loads keeps it, UTF-8 has none), left to json.loads. A high surrogate's escape followed
    at once by a low one's is their character, as in json."""
    cdef Py_ssize_t i = start, run
    cdef const uint8_t* found
    cdef char* at = out
    cdef uint32_t code, low
    cdef uint8_t b
    while i < end:
        if p[i] != 92:  # (escapes in a row, as \\uXXXX of a whole text, call no memchr)
            found = <const uint8_t*> memchr(p + i, 92, end - i)
            run = (end if found == NULL else found - p) - i
            memcpy(at, p + i, run)
            at += run
            i += run
            if i >= end:
                break
        b = p[i + 1]
        if b == 117:
            code = hex4(p + i + 2)
            i += 6
            if 0xD800 <= code <= 0xDBFF and i + 6 <= end and p[i] == 92 and p[i + 1] == 117:
                low = hex4(p + i + 2)
                if 0xDC00 <= low <= 0xDFFF:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            if 0xD800 <= code <= 0xDFFF:
                return -1
            at = write_utf8(at, code)
            continue
        at[0] = <char> (8 if b == 98 else 12 if b == 102 else 10 if b == 110 else 13 if b == 114
                        else 9 if b == 116 else b)
        at += 1
        i += 2
    return at - out


cdef struct Wanted:
    # The top-level fields asked for: their names in UTF-8, and where the value of each starts
    # and ends in the line (-1: absent) and, for a string, its shape.
    const vector[string]* keys
    Py_ssize_t* starts
    Py_ssize_t* ends
    Shape* shapes
    string* key  # room for a key written with escapes, decoded


cdef size_t which_key(const Cursor* c, Py_ssize_t start, const Shape* shape, Wanted* wanted) noexcept nogil:
    """Which of the wanted names the checked key string at p[start:c.i] is; their count for none."""
    cdef size_t k = 0, count = wanted.keys.size()
    cdef Py_ssize_t length = c.i - start - 2
    if shape.escapes == 0:
        while k < count and not (<Py_ssize_t> wanted.keys[0][k].size() == length
                                 and memcmp(wanted.keys[0][k].data(), c.p + start + 1, length) == 0):
            k += 1
    else:
        wanted.key.resize(length)
        length = unescape(c.p, start + 1, c.i - 1, wanted.key.data())
        if length < 0:
            return count  # a key with a lone surrogate: none of the names, given in UTF-8
        wanted.key.resize(length)
        while k < count and wanted.keys[0][k] != wanted.key[0]:
            k += 1
    return k


cdef bint skip_value(Cursor* c, int depth, Shape* shape, bint check_utf8) noexcept nogil:
    """Past the value at c.i; `shape`: a string's; `check_utf8`: a string's UTF-8 too."""
    if c.i >= c.n:
        return False
    cdef uint8_t b = c.p[c.i]
    if b == 34:
        return skip_string(c, shape, check_utf8)
    if b == 123 or b == 91:  # { [
        return depth < MAX_DEPTH and skip_container(c, depth + 1, NULL)
    if b == 110:
        return skip_word(c, b"null", 4)
    if b == 116:
        return skip_word(c, b"true", 4)
    if b == 102:
        return skip_word(c, b"false", 5)
    if b == 78:
        return skip_word(c, b"NaN", 3)
    if b == 73:
        return skip_word(c, b"Infinity", 8)
    if b == 45 and c.i + 1 < c.n and c.p[c.i + 1] == 73:
        return skip_word(c, b"-Infinity", 9)
    if b == 45 or 48 <= b <= 57:
        return skip_number(c)
    return False


cdef bint skip_container(Cursor* c, int depth, Wanted* wanted) noexcept nogil:
    """Past the object or array that starts at c.i; where an object's wanted fields are, when
    `wanted` is given (the record itself)."""
    cdef bint is_object = c.p[c.i] == 123, is_wanted
    cdef Shape shape
    cdef uint8_t close = 125 if is_object else 93
    cdef size_t k = 0
    cdef Py_ssize_t start
    c.i += 1
    skip_space(c)
    if c.i < c.n and c.p[c.i] == close:
        c.i += 1
        return True
    while True:
        if is_object:
            start = c.i
            if c.i >= c.n or c.p[c.i] != 34 or not skip_string(c, &shape, True):
                return False
            if wanted != NULL:
                k = which_key(c, start, &shape, wanted)
            skip_space(c)
            if c.i >= c.n or c.p[c.i] != 58:  # :
                return False
            c.i += 1
            skip_space(c)
        start = c.i
        is_wanted = wanted != NULL and k < wanted.keys.size()
        if not skip_value(c, depth, &shape, not is_wanted):
            return False
        if is_wanted:  # a duplicate key: the last value counts, the one before is checked now
            if wanted.starts[k] >= 0 and not is_utf8(c.p, wanted.starts[k], wanted.ends[k]):
                return False
            wanted.starts[k], wanted.ends[k], wanted.shapes[k] = start, c.i, shape
        skip_space(c)
        if c.i >= c.n:
            return False
        if c.p[c.i] == close:
            c.i += 1
            return True
        if c.p[c.i] != 44:  # ,
            return False
        c.i += 1
        skip_space(c)


cdef bint scan_record(const uint8_t* p, Py_ssize_t n, Wanted* wanted) noexcept nogil:
    """Whether p[:n] is one JSON object and nothing else but spaces, checked whole."""
    cdef Cursor c
    c.p, c.n, c.i = p, n, 0
    skip_space(&c)
    if c.i >= c.n or c.p[c.i] != 123 or not skip_container(&c, 1, wanted):
        return False
    skip_space(&c)
    return c.i == c.n


cdef class FieldScanner:
    """`fields(line)`: {name: value} for the top-level fields of `names` that the record on the
    line holds (a duplicate key: its last value, as json.loads keeps), a string value decoded, any
    other value as its JSON text (bytes, for json.loads); None when json.loads must read the line.
    `text_utf8(line)`: the UTF-8 of the one name's value, where it is a string.
    """
    cdef vector[string] keys
    cdef list names
    cdef string buffer
    # Where each name's value is in the line being read (kept: no allocation a line).
    cdef vector[Py_ssize_t] starts, ends
    cdef vector[Shape] shapes

    def __init__(self, names):
        self.names = list(dict.fromkeys(names))  # the text field may be the id field too
        for name in self.names:
            self.keys.push_back(name.encode("utf-8"))
        self.starts.resize(self.keys.size())
        self.ends.resize(self.keys.size())
        self.shapes.resize(self.keys.size())

    cdef bint _scan(self, bytes line) noexcept:
        """Whether the line is a record read here; if so, where its named values are."""
        return self._scan_at(<const uint8_t*> PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line))

    cdef bint _scan_at(self, const uint8_t* p, Py_ssize_t n) noexcept nogil:
        """_scan of the line p[:n]."""
        cdef size_t k
        cdef Wanted wanted
        for k in range(self.keys.size()):
            self.starts[k] = -1
        wanted.keys, wanted.starts, wanted.ends = &self.keys, self.starts.data(), self.ends.data()
        wanted.shapes, wanted.key = self.shapes.data(), &self.buffer
        return scan_record(p, n, &wanted)

    def fields(self, bytes line not None):
        cdef const uint8_t* p = <const uint8_t*> PyBytes_AS_STRING(line)
        cdef size_t k, count = self.keys.size()
        cdef Py_ssize_t* starts = self.starts.data()
        cdef Py_ssize_t* ends = self.ends.data()
        cdef Shape* shapes = self.shapes.data()
        cdef const char* body
        cdef Py_ssize_t size
        if not self._scan(line):
            return None
        found = {}
        for k in range(count):
            if starts[k] < 0:
                continue
            if p[starts[k]] != 34:
                found[self.names[k]] = line[starts[k]:ends[k]]
                continue
            body, size = <const char*> p + starts[k] + 1, ends[k] - starts[k] - 2
            if shapes[k].ascii:  # unescaped straight into the str
                text = PyUnicode_New(size - shapes[k].escapes, 127)
                unescape(p, starts[k] + 1, ends[k] - 1, <char*> PyUnicode_DATA(text))
            else:  # its UTF-8 checked here, in decoding it (strict: no encoded surrogate either)
                if shapes[k].escapes:
                    self.buffer.resize(size)
                    size = unescape(p, starts[k] + 1, ends[k] - 1, self.buffer.data())
                    if size < 0:
                        return None
                    body = self.buffer.data()
                try:
                    text = PyUnicode_DecodeUTF8(body, size, NULL)
                except UnicodeDecodeError:
                    return None
            found[self.names[k]] = text
        return found

    def texts_utf8(self, bytes block not None, Py_ssize_t start=0):
        """The UTF-8 of the one name's value (the text field) on each line of block[start:] in
        turn (lines end at b"\n", the block's last one maybe not), up to the first line that is
        not blank and is not a record read here whose value is a string: the bytes
        `fields(line)[name]` would encode to, without the str in between (what counting needs
        of a document). The reader reads the line it stops at the full way, which says why it
        is rejected.

        Returns (texts, ends, stop, lines): the texts concatenated, where each ends in them
        (array('q')), the offset in `block` of the line it stopped at (len(block) where none),
        and how many lines it passed (blank ones, which hold no document, included). A call a
        chunk of a file, not a line: a call, a bytes object and a list entry per line were a
        tenth of the counting pass (bench/README.md, "Counting reads a chunk at a time").
        For a scanner of one name only: the UTF-8 of other named values is left unchecked until
        they are decoded."""
        if self.keys.size() != 1:
            raise ValueError(f"texts_utf8 reads one field; this scanner reads {len(self.names)}")
        cdef Py_ssize_t n = PyBytes_GET_SIZE(block), at = start, end, lines = 0, size
        if not 0 <= start <= n:
            raise ValueError(f"start {start} is outside [0, {n}]")
        cdef const uint8_t* p = <const uint8_t*> PyBytes_AS_STRING(block)
        cdef const uint8_t* found
        cdef string texts
        cdef vector[int64_t] text_ends
        with nogil:
            texts.reserve(n - start)
            while at < n:
                found = <const uint8_t*> memchr(p + at, 10, n - at)
                end = n if found == NULL else found - p + 1
                if not is_blank(p + at, end - at):
                    size = self._text_into(p + at, end - at, texts)
                    if size < 0:
                        break
                    text_ends.push_back(texts.size())
                lines += 1
                at = end
        cdef c_array ends = clone(array("q"), text_ends.size(), False)
        if text_ends.size():
            memcpy(ends.data.as_longlongs, text_ends.data(), text_ends.size() * sizeof(int64_t))
        return <bytes> texts, ends, at, lines

    cdef Py_ssize_t _text_into(self, const uint8_t* line, Py_ssize_t n, string& out) except -2 nogil:
        """Append the UTF-8 of the line's text to `out`; its length, or -1 (`out` as it was)
        where the line is no record read here or its value is absent or no string. Growing
        `out` may fail: a MemoryError, not a text lost."""
        if not self._scan_at(line, n):
            return -1
        cdef Py_ssize_t start = self.starts[0], end = self.ends[0], size, before = out.size()
        cdef Shape shape = self.shapes[0]
        if start < 0 or line[start] != 34:
            return -1
        if shape.escapes == 0:
            # Its UTF-8 checked here, as decoding it checks it (strict: no encoded surrogate).
            if not shape.ascii and not is_utf8(line, start + 1, end - 1):
                return -1
            out.append(<const char*> line + start + 1, end - start - 2)
            return end - start - 2
        out.resize(before + end - start)
        size = unescape(line, start + 1, end - 1, &out[before])
        # An escape writes whole UTF-8 characters, so checking the unescaped bytes checks the
        # raw ones between the escapes (as `fields` decodes the same buffer).
        if size < 0 or (not shape.ascii and not is_utf8(<const uint8_t*> out.data() + before, 0, size)):
            out.resize(before)
            return -1
        out.resize(before + size)
        return size
