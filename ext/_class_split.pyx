# cython: language_level=3
"""Hugging Face's pre-tokenizers that split at the characters of one class (BertPreTokenizer,
Punctuation, Digits, WhitespaceSplit, and a Split of a class written k times such as Falcon's
`[0-9][0-9][0-9]`) over UTF-8 bytes and piece ends, each piece cut alone, in one call.

A match is k consecutive members of the class (leftmost first, as a regex `C{k}` finds them: a
run of m members holds m // k matches, its rest joins the gap after it); the gaps between
matches are kept as parts too, then the parts are grouped by the Split behaviour exactly as
tokenizers' NormalizedString::split groups them. The class is a bitmap over code points, or
after a ByteLevel step (whose pieces are spelled one character per byte) over byte values.

Twin: tokfx.pre_tokenizers.huggingface.split_spans over the class regex's matches; the tests
compare the two, and both with `tokenizers`.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from id_list cimport int64s_as_array
from piece_end cimport check_chunk_ends
from utf8_units cimport unit_end

BEHAVIOURS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
MAX_GROUP = 64  # members a match holds, at most

cdef enum Behaviour:
    ISOLATED, REMOVED, MERGED_WITH_PREVIOUS, MERGED_WITH_NEXT, CONTIGUOUS


cdef struct Part:
    int64_t start
    int64_t end
    bint is_match


cdef inline bint is_member(const uint8_t* members, Py_ssize_t size, uint32_t code) noexcept nogil:
    return (code >> 3) < <uint32_t> size and (members[code >> 3] >> (code & 7)) & 1


cdef void find_parts(const unsigned char* s, int64_t start, int64_t end, const uint8_t* members,
                     Py_ssize_t size, bint byte_units, int group, vector[Part]& parts) noexcept nogil:
    """The parts of s[start:end]: each match (`group` consecutive members) and each gap between."""
    cdef int64_t p = start, gap = start, q, run_start
    cdef uint32_t code
    cdef int count
    parts.clear()
    while p < end:
        q = unit_end(s, p, end, byte_units, &code)
        if not is_member(members, size, code):
            p = q
            continue
        # A run of members from p: matches of `group` units from its start, the rest a gap.
        run_start, count = p, 0
        while True:
            count += 1
            if count == group:
                if gap < run_start:
                    parts.push_back(Part(gap, run_start, False))
                parts.push_back(Part(run_start, q, True))
                gap = run_start = q
                count = 0
            p = q
            if p >= end:
                break
            q = unit_end(s, p, end, byte_units, &code)
            if not is_member(members, size, code):
                p = q
                break
    if gap < end:
        parts.push_back(Part(gap, end, False))


cdef void group_parts(const vector[Part]& parts, Behaviour behaviour, vector[Part]& kept) noexcept nogil:
    """The pieces the parts make under `behaviour` (split_spans, tokenizers' SplitDelimiterBehavior)."""
    cdef bint previous = False
    cdef Py_ssize_t i, first = kept.size(), n = parts.size()
    cdef Part part
    if behaviour == MERGED_WITH_NEXT:
        i = n - 1
        while i >= 0:
            part = parts[i]
            if part.is_match and not previous and kept.size() > first:
                kept.back().start = part.start
            else:
                kept.push_back(part)
            previous = part.is_match
            i -= 1
        reverse(kept, first)
        return
    for i in range(n):
        part = parts[i]
        if behaviour == REMOVED and part.is_match:
            continue
        if kept.size() > first and ((behaviour == CONTIGUOUS and part.is_match == previous)
                                    or (behaviour == MERGED_WITH_PREVIOUS and part.is_match and not previous)):
            kept.back().end = part.end
        else:
            kept.push_back(part)
        previous = part.is_match


cdef inline void reverse(vector[Part]& parts, Py_ssize_t first) noexcept nogil:
    cdef Py_ssize_t i = first, j = parts.size() - 1
    cdef Part swap
    while i < j:
        swap = parts[i]
        parts[i] = parts[j]
        parts[j] = swap
        i += 1
        j -= 1


def class_split(bytes data not None, const int64_t[::1] ends not None, const uint8_t[::1] members not None,
                bint byte_units, int group, behaviour):
    """(data, ends) of the pieces that each piece data[:e0], data[e0:e1], ... is cut into at the
    members of a class, grouped by `behaviour` (one of BEHAVIOURS). `members`: a bitmap (bit
    c & 7 of byte c >> 3) over code points, or with `byte_units` over byte values; `group`: the
    members one match holds. Only Removed drops text: then `data` is the kept pieces joined."""
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"behaviour: expected one of {', '.join(BEHAVIOURS)}, got {behaviour!r}")
    if not 1 <= group <= MAX_GROUP:
        raise ValueError(f"group: expected 1 to {MAX_GROUP} members a match, got {group}")
    cdef int index = BEHAVIOURS.index(behaviour)
    cdef Behaviour how = <Behaviour> index
    cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
    cdef int64_t n = len(data), start = 0, end
    cdef Py_ssize_t c, k, chunks = ends.shape[0]
    cdef vector[Part] parts, kept
    cdef vector[int64_t] new_ends
    check_chunk_ends(ends, n)
    with nogil:
        for c in range(chunks):
            end = ends[c]
            if end > start:
                find_parts(s, start, end, &members[0], members.shape[0], byte_units, group, parts)
                group_parts(parts, how, kept)
            start = end
    if how != REMOVED:
        for k in range(<Py_ssize_t> kept.size()):
            new_ends.push_back(kept[k].end)
        return data, int64s_as_array(new_ends)
    cdef vector[unsigned char] joined
    for k in range(<Py_ssize_t> kept.size()):
        joined.insert(joined.end(), s + kept[k].start, s + kept[k].end)
        new_ends.push_back(joined.size())
    return PyBytes_FromStringAndSize(<const char*> joined.data(), joined.size()), int64s_as_array(new_ends)
