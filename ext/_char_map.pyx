# cython: language_level=3
"""A character map over a str, for the Hugging Face normalizers that drop, blank or pad the
characters of a class (BertNormalizer's clean_text and handle_chinese_chars, the removal of
marks after NFD, StripAccents): one pass in C where `regex`'s sub with a callback took most of a
BERT tokenizer's time. Classes are bitmaps over code points (bit c & 7 of byte c >> 3), built
from the regexes the Python twin matches (tokfx.normalizers.code_point_sets).

Twin: tokfx.reference.char_map.
"""
from libc.stdint cimport uint8_t, uint32_t
from libcpp.vector cimport vector

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    uint32_t PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_4BYTE_KIND


cdef inline bint is_member(const uint8_t* bits, Py_ssize_t size, uint32_t code) noexcept nogil:
    return (code >> 3) < <uint32_t> size and (bits[code >> 3] >> (code & 7)) & 1


cdef inline const uint8_t* start_of(const uint8_t[::1] bits) noexcept:
    return &bits[0] if bits.shape[0] else NULL


def char_map(str text not None, const uint8_t[::1] dropped not None, const uint8_t[::1] spaced not None,
             const uint8_t[::1] padded not None):
    """`text` with each character of `dropped` removed, each of `spaced` (and not `dropped`)
    written as one space, each of `padded` (and neither) with a space on either side. An empty
    bitmap holds no character. `text` itself when nothing changes."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = len(text)
    cdef const uint8_t* drop = start_of(dropped)
    cdef const uint8_t* space = start_of(spaced)
    cdef const uint8_t* pad = start_of(padded)
    cdef Py_ssize_t drop_size = dropped.shape[0], space_size = spaced.shape[0], pad_size = padded.shape[0]
    cdef uint32_t code
    cdef vector[uint32_t] out
    cdef bint changed = False
    with nogil:
        out.reserve(n)
        for i in range(n):
            code = PyUnicode_READ(kind, data, i)
            if is_member(drop, drop_size, code):
                changed = True
            elif is_member(space, space_size, code):
                changed = changed or code != 32
                out.push_back(32)
            elif is_member(pad, pad_size, code):
                changed = True
                out.push_back(32)
                out.push_back(code)
                out.push_back(32)
            else:
                out.push_back(code)
    if not changed:
        return text
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out.data(), out.size())


def first_member(str text not None, const uint8_t[::1] members not None):
    """The index of the first character of `text` in `members`, or -1."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = len(text)
    cdef const uint8_t* bits = start_of(members)
    cdef Py_ssize_t size = members.shape[0], found = -1
    with nogil:
        for i in range(n):
            if is_member(bits, size, PyUnicode_READ(kind, data, i)):
                found = i
                break
    return found
