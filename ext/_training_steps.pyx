"""The trainers' steps around their cores, over arrays: the pieces cut around the fallback
symbols (packed_words, every trainer over characters) and the Unigram trainer's steps between
its passes (tokfx.models.unigram). numpy did them; training over characters no longer imports
it, 15 MB of its peak memory (bench/README.md, issue 26). Each gives the numbers the numpy code
gave, to the last bit.

Twin: tokfx.reference.training_steps.
"""
from libc.stdint cimport int8_t, int32_t, int64_t
from libcpp.vector cimport vector

from cpython.array cimport array as c_array, clone

from array import array

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <vector>
    // A token's prune key: (kind, value), NaN values last as numpy orders them.
    struct PruneKey {
        int8_t kind;
        double value;
        int64_t id;
    };
    static inline bool value_less(double a, double b) {
        return a < b || (a == a && b != b);
    }
    static inline bool prune_key_less(const PruneKey& a, const PruneKey& b) {
        if (a.kind != b.kind) return a.kind < b.kind;
        return value_less(a.value, b.value);
    }
    static void sort_prune_keys(std::vector<PruneKey>& keys) {
        std::stable_sort(keys.begin(), keys.end(), prune_key_less);
    }
    """
    cdef struct PruneKey:
        int8_t kind
        double value
        int64_t id
    void sort_prune_keys(vector[PruneKey]& keys) except + nogil

cdef c_array INT64 = array("q")
cdef c_array DOUBLES = array("d")
cdef c_array BYTES = array("B")


cdef check_offsets(const int64_t[::1] offsets, Py_ssize_t symbols, Py_ssize_t pieces, str name):
    """ValueError unless `offsets` run from 0 to `symbols`, never back, one more than `pieces`:
    the loops below index without bounds checks."""
    cdef Py_ssize_t k
    if offsets.shape[0] != pieces + 1 or offsets[0] != 0 or offsets[pieces] != symbols:
        raise ValueError(f"{name} must run from 0 to {symbols}, {pieces + 1} of them")
    for k in range(pieces):
        if offsets[k + 1] < offsets[k]:
            raise ValueError(f"{name} must not decrease (at {k + 1})")


def symbol_counts(const int32_t[::1] symbols not None, const int64_t[::1] offsets not None,
                  const int64_t[::1] counts not None, Py_ssize_t alphabet_size):
    """array('q'): each base symbol's occurrences in the pieces (piece k's symbols counted
    counts[k] times); a symbol outside [0, alphabet_size) is not counted."""
    check_offsets(offsets, symbols.shape[0], counts.shape[0], "offsets")
    cdef c_array found = clone(INT64, alphabet_size, True)
    cdef long long* out = found.data.as_longlongs
    cdef Py_ssize_t k, i
    cdef int32_t s
    cdef int64_t count
    with nogil:
        for k in range(counts.shape[0]):
            count = counts[k]
            for i in range(offsets[k], offsets[k + 1]):
                s = symbols[i]
                if 0 <= s < alphabet_size:
                    out[s] += count
    return found


def fallback_apart(const int32_t[::1] symbols not None, const int64_t[::1] offsets not None,
                   const int64_t[::1] counts not None, int32_t char_base):
    """(offsets, counts), arrays 'q': the pieces cut before and after every symbol below
    char_base, each part with its piece's count; empty pieces go."""
    check_offsets(offsets, symbols.shape[0], counts.shape[0], "offsets")
    cdef Py_ssize_t k, i, parts = 0
    with nogil:
        for k in range(counts.shape[0]):
            for i in range(offsets[k], offsets[k + 1]):
                if i == offsets[k] or symbols[i] < char_base or symbols[i - 1] < char_base:
                    parts += 1
    cdef c_array cut = clone(INT64, parts + 1, False)
    cdef c_array cut_counts = clone(INT64, parts, False)
    cdef long long* out = cut.data.as_longlongs
    cdef long long* out_counts = cut_counts.data.as_longlongs
    cdef Py_ssize_t part = 0
    with nogil:
        for k in range(counts.shape[0]):
            for i in range(offsets[k], offsets[k + 1]):
                if i == offsets[k] or symbols[i] < char_base or symbols[i - 1] < char_base:
                    out[part] = i
                    out_counts[part] = counts[k]
                    part += 1
        out[parts] = symbols.shape[0]
    return cut, cut_counts


def piece_ends_counts(const int64_t[::1] pretoken_offsets not None, const int64_t[::1] piece_offsets not None,
                      const int64_t[::1] per_pretoken not None):
    """array('q'), per piece (piece_offsets, over the symbols of the pre-tokens at
    pretoken_offsets, both from 0): per_pretoken[k] if it ends where pre-token k ends, else 0."""
    cdef Py_ssize_t pieces = max(piece_offsets.shape[0] - 1, 0), keys = per_pretoken.shape[0]
    if pretoken_offsets.shape[0] != keys + 1:
        raise ValueError("one count per pre-token needed")
    check_offsets(pretoken_offsets, pretoken_offsets[keys], keys, "pretoken_offsets")
    check_offsets(piece_offsets, pretoken_offsets[keys], pieces, "piece_offsets")
    cdef c_array found = clone(INT64, pieces, True)
    cdef long long* out = found.data.as_longlongs
    cdef Py_ssize_t p, k = 0
    cdef int64_t end
    with nogil:
        for p in range(pieces):
            end = piece_offsets[p + 1]
            # k: the last pre-token that starts before the piece's end.
            while k + 1 < keys and pretoken_offsets[k + 1] < end:
                k += 1
            if k < keys and pretoken_offsets[k + 1] == end:
                out[p] = per_pretoken[k]
    return found


def below_threshold(const double[::1] expected not None, Py_ssize_t first, Py_ssize_t n, double threshold):
    """array('q'): the ids in [first, n) expected fewer than `threshold` times, in order."""
    if n > expected.shape[0]:
        raise ValueError(f"{n} tokens but {expected.shape[0]} expected counts")
    cdef vector[int64_t] low
    cdef Py_ssize_t i
    with nogil:
        for i in range(first, n):
            if expected[i] < threshold:
                low.push_back(i)
    cdef c_array found = clone(INT64, low.size(), False)
    for i in range(<Py_ssize_t>low.size()):
        found.data.as_longlongs[i] = low[i]
    return found


def kept_expected(const double[::1] expected not None, Py_ssize_t n, dropped, double threshold):
    """The ids in [0, n) not in `dropped`, in order: (their ids array('q'), their expected counts
    array('d'), whether each is at or above `threshold` array('B'), the sum of those at or above
    it, added in order as Python 3.11's builtin sum adds floats)."""
    if n > expected.shape[0]:
        raise ValueError(f"{n} tokens but {expected.shape[0]} expected counts")
    cdef c_array drop = clone(BYTES, n, True)
    cdef Py_ssize_t i, kept = n
    for i in dropped:
        if not 0 <= i < n:
            raise ValueError(f"dropped id {i} is not in [0, {n})")
        if drop.data.as_uchars[i] == 0:
            drop.data.as_uchars[i] = 1
            kept -= 1
    cdef c_array ids = clone(INT64, kept, False)
    cdef c_array values = clone(DOUBLES, kept, False)
    cdef c_array counted = clone(BYTES, kept, False)
    cdef Py_ssize_t j = 0
    cdef double total = 0.0
    with nogil:
        for i in range(n):
            if drop.data.as_uchars[i]:
                continue
            ids.data.as_longlongs[j] = i
            values.data.as_doubles[j] = expected[i]
            counted.data.as_uchars[j] = expected[i] >= threshold
            if expected[i] >= threshold:
                total += expected[i]
            j += 1
    return ids, values, counted, total


def floored(const double[::1] scores not None, double minus, const unsigned char[::1] estimated not None,
            double below):
    """array('d') of scores[i] - minus, those not `estimated` `below` under the lowest
    estimated one (0 if none): 8 bytes a score, where a list of floats took 32 (the trainer
    holds two sets of tens of thousands of scores at once)."""
    if estimated.shape[0] != scores.shape[0]:
        raise ValueError("one flag per score needed")
    cdef Py_ssize_t i, n = scores.shape[0]
    cdef bint any_estimated = False
    cdef double lowest = 0.0, score
    for i in range(n):
        if estimated[i]:
            score = scores[i] - minus
            if not any_estimated or score < lowest:
                lowest = score
            any_estimated = True
    cdef double floor = lowest - below
    cdef c_array found = clone(DOUBLES, n, False)
    for i in range(n):
        found.data.as_doubles[i] = scores[i] - minus if estimated[i] else floor
    return found


def key_order(const int8_t[::1] kinds not None, const double[::1] values not None, Py_ssize_t first):
    """(ids, runs): the ids first..len(kinds)-1 ordered by (kind, value) (stable; NaN values
    last), as a list; runs, the (start, stop) positions in it of each run of two or more equal
    keys."""
    if kinds.shape[0] != values.shape[0]:
        raise ValueError("one value per kind needed")
    cdef vector[PruneKey] keys
    cdef Py_ssize_t i, start, n = kinds.shape[0]
    if first < n:
        keys.resize(n - first)
    with nogil:
        for i in range(first, n):
            keys[i - first].kind = kinds[i]
            keys[i - first].value = values[i]
            keys[i - first].id = i
        sort_prune_keys(keys)
    runs = []
    start = 0
    for i in range(1, <Py_ssize_t>keys.size() + 1):
        if i == <Py_ssize_t>keys.size() or keys[i].kind != keys[start].kind or keys[i].value != keys[start].value:
            if i - start > 1:
                runs.append((start, i))
            start = i
    return [key.id for key in keys], runs
