# cython: language_level=3
"""The fields a reader needs of one JSON-lines record, without decoding the rest of it: one pass
in C over the line that checks it is a JSON object as json.loads reads it and decodes only the
values of the named top-level fields. json.loads decoded every field of every record, and that
was most of the reading in the counting pass.

json.loads stays the judge: `fields` answers only for a line that json.loads surely reads, and
reads as it does; for anything else (not JSON, not an object, a lone surrogate in a needed value,
an integer too long for int(), nesting deeper than MAX_DEPTH, a BOM or another
encoding than UTF-8) it answers None and the reader calls json.loads, whose result or error is
then the answer. So a check that is stricter than json.loads is safe, a laxer one is not.

Twin: tokfx.reference.json_fields.
"""
from libc.stdint cimport uint8_t, uint32_t
from libc.stdint cimport uint64_t
from libc.string cimport memchr, memcmp, memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

cdef extern from "Python.h":
    const char* PyBytes_AS_STRING(object)
    Py_ssize_t PyBytes_GET_SIZE(object)
    object PyUnicode_DecodeUTF8(const char* s, Py_ssize_t size, const char* errors)

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


cdef inline bint is_hex(uint8_t b) noexcept nogil:
    return (48 <= b <= 57) or (65 <= b <= 70) or (97 <= b <= 102)


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


cdef uint64_t ONES = 0x0101010101010101, HIGHS = 0x8080808080808080


cdef inline uint64_t has_less(uint64_t x, uint64_t n) noexcept nogil:
    # Nonzero when a byte of x is below n (n <= 128), for bytes below 128.
    return (x - ONES * n) & ~x & HIGHS


cdef inline bint plain8(const uint8_t* p) noexcept nogil:
    """Whether the 8 bytes at p are plain string bytes: ASCII, no control character, quote or
    backslash (most of a text: checked a word at a time)."""
    cdef uint64_t x
    memcpy(&x, p, 8)
    return ((x & HIGHS) | has_less(x, 0x20) | has_less(x ^ (ONES * 0x22), 1)
            | has_less(x ^ (ONES * 0x5C), 1)) == 0


cdef bint skip_string(Cursor* c, bint* escaped) noexcept nogil:
    """Past the string that starts at c.i (a quote), checked as json.loads (strict) checks it;
    `escaped`: whether it holds a backslash."""
    cdef const uint8_t* p = c.p
    cdef Py_ssize_t i = c.i + 1, n = c.n, length
    cdef uint8_t b
    escaped[0] = False
    while i < n:
        while i + 8 <= n and plain8(p + i):
            i += 8
        if i >= n:
            break
        b = p[i]
        if b == 34:  # "
            c.i = i + 1
            return True
        if b == 92:  # \
            escaped[0] = True
            if i + 1 >= n:
                return False
            b = p[i + 1]
            if b == 117:  # u
                if i + 5 >= n or not (is_hex(p[i + 2]) and is_hex(p[i + 3]) and is_hex(p[i + 4]) and is_hex(p[i + 5])):
                    return False
                i += 6
            elif b == 34 or b == 92 or b == 47 or b == 98 or b == 102 or b == 110 or b == 114 or b == 116:
                i += 2
            else:
                return False
        elif b < 32:
            return False  # a control character: json.loads (strict) refuses it
        elif b < 128:
            i += 1
        else:
            length = utf8_length(p, i, n)
            if length == 0:
                return False
            i += length
    return False


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


cdef inline void append_utf8(string* out, uint32_t code) noexcept nogil:
    if code < 0x80:
        out.push_back(<char> code)
    elif code < 0x800:
        out.push_back(<char> (0xC0 | (code >> 6)))
        out.push_back(<char> (0x80 | (code & 0x3F)))
    elif code < 0x10000:
        out.push_back(<char> (0xE0 | (code >> 12)))
        out.push_back(<char> (0x80 | ((code >> 6) & 0x3F)))
        out.push_back(<char> (0x80 | (code & 0x3F)))
    else:
        out.push_back(<char> (0xF0 | (code >> 18)))
        out.push_back(<char> (0x80 | ((code >> 12) & 0x3F)))
        out.push_back(<char> (0x80 | ((code >> 6) & 0x3F)))
        out.push_back(<char> (0x80 | (code & 0x3F)))


cdef inline uint32_t hex4(const uint8_t* p) noexcept nogil:
    cdef uint32_t code = 0
    cdef uint8_t b
    cdef int k
    for k in range(4):
        b = p[k]
        code = code * 16 + (b - 48 if b <= 57 else (b - 55 if b <= 70 else b - 87))
    return code


cdef bint unescape(const uint8_t* p, Py_ssize_t start, Py_ssize_t end, string* out) noexcept nogil:
    """The UTF-8 of the checked string body p[start:end] with its escapes decoded; False for a
    lone surrogate (\\ud800 alone: json.loads keeps it, UTF-8 has none), left to json.loads.
    A high surrogate's escape followed at once by a low one's is their character, as in json."""
    cdef Py_ssize_t i = start, run
    cdef const uint8_t* found
    cdef uint32_t code, low
    cdef uint8_t b
    out.clear()
    out.reserve(end - start)
    while i < end:
        run = i
        found = <const uint8_t*> memchr(p + i, 92, end - i)
        i = end if found == NULL else found - p
        out.append(<const char*> p + run, i - run)
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
                return False
            append_utf8(out, code)
            continue
        out.push_back(<char> (8 if b == 98 else 12 if b == 102 else 10 if b == 110 else 13 if b == 114
                              else 9 if b == 116 else b))
        i += 2
    return True


cdef struct Wanted:
    # The top-level fields asked for: their names in UTF-8, and where the value of each starts
    # and ends in the line (-1: absent) and whether it is a string with escapes.
    const vector[string]* keys
    Py_ssize_t* starts
    Py_ssize_t* ends
    char* escapes
    string* key  # room for a key written with escapes, decoded


cdef size_t which_key(const Cursor* c, Py_ssize_t start, bint escaped, Wanted* wanted) noexcept nogil:
    """Which of the wanted names the checked key string at p[start:c.i] is; their count for none."""
    cdef size_t k = 0, count = wanted.keys.size()
    cdef Py_ssize_t length = c.i - start - 2
    if not escaped:
        while k < count and not (<Py_ssize_t> wanted.keys[0][k].size() == length
                                 and memcmp(wanted.keys[0][k].data(), c.p + start + 1, length) == 0):
            k += 1
    elif unescape(c.p, start + 1, c.i - 1, wanted.key):
        while k < count and wanted.keys[0][k] != wanted.key[0]:
            k += 1
    else:
        k = count  # a key with a lone surrogate: none of the names, given in UTF-8
    return k


cdef bint skip_value(Cursor* c, int depth, bint* escaped) noexcept nogil:
    """Past the value at c.i; `escaped`: whether it is a string holding a backslash."""
    escaped[0] = False
    if c.i >= c.n:
        return False
    cdef uint8_t b = c.p[c.i]
    if b == 34:
        return skip_string(c, escaped)
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
    cdef bint is_object = c.p[c.i] == 123, escaped
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
            if c.i >= c.n or c.p[c.i] != 34 or not skip_string(c, &escaped):
                return False
            if wanted != NULL:
                k = which_key(c, start, escaped, wanted)
            skip_space(c)
            if c.i >= c.n or c.p[c.i] != 58:  # :
                return False
            c.i += 1
            skip_space(c)
        start = c.i
        if not skip_value(c, depth, &escaped):
            return False
        if wanted != NULL and k < wanted.keys.size():  # a duplicate key: the last value counts
            wanted.starts[k], wanted.ends[k], wanted.escapes[k] = start, c.i, escaped
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
    """
    cdef vector[string] keys
    cdef list names
    cdef string buffer

    def __init__(self, names):
        self.names = list(dict.fromkeys(names))  # the text field may be the id field too
        for name in self.names:
            self.keys.push_back(name.encode("utf-8"))

    def fields(self, bytes line not None):
        cdef const uint8_t* p = <const uint8_t*> PyBytes_AS_STRING(line)
        cdef size_t k, count = self.keys.size()
        cdef vector[Py_ssize_t] starts = vector[Py_ssize_t](count, -1)
        cdef vector[Py_ssize_t] ends = vector[Py_ssize_t](count, -1)
        cdef vector[char] escapes = vector[char](count, False)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(line)
        cdef Wanted wanted
        wanted.keys, wanted.starts, wanted.ends = &self.keys, starts.data(), ends.data()
        wanted.escapes, wanted.key = escapes.data(), &self.buffer
        cdef bint read
        with nogil:
            read = scan_record(p, n, &wanted)
        if not read:
            return None
        found = {}
        for k in range(count):
            if starts[k] < 0:
                continue
            if p[starts[k]] != 34:
                found[self.names[k]] = line[starts[k]:ends[k]]
            elif not escapes[k]:
                found[self.names[k]] = PyUnicode_DecodeUTF8(<const char*> p + starts[k] + 1,
                                                            ends[k] - starts[k] - 2, NULL)
            elif unescape(p, starts[k] + 1, ends[k] - 1, &self.buffer):
                found[self.names[k]] = PyUnicode_DecodeUTF8(self.buffer.data(), self.buffer.size(), NULL)
            else:
                return None
        return found
