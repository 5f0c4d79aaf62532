"""Tokens (sequences of base symbols) held packed: every token's symbols concatenated in one
array('i') and where each starts in an array('q') of offsets, 4 bytes a symbol and 8 a token
where a tuple of ints took 48 bytes and more (the Unigram trainer holds tens of thousands of
them through its EM rounds: issue 26). The native passes read the two arrays directly; a token
becomes a tuple only where Python asks for one.

Twin: a list of tuples (tests/models/test_packed_tokens.py compares the two).
"""
from array import array

from cpython.array cimport array as c_array, clone
from cpython.list cimport PyList_GET_ITEM
from cpython.long cimport PyLong_FromLong
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <vector>
    // Orders token ids by key (when there are keys), then by their symbols as Python compares
    // tuples of ints; stable, so ids of equal tokens and keys keep their order.
    struct TokenOrder {
        const int32_t* symbols;
        const int64_t* offsets;
        const double* keys;  // NULL: by symbols alone
        bool operator()(int64_t a, int64_t b) const {
            if (keys && keys[a] != keys[b]) return keys[a] < keys[b];
            return std::lexicographical_compare(symbols + offsets[a], symbols + offsets[a + 1],
                                                symbols + offsets[b], symbols + offsets[b + 1]);
        }
    };
    static void order_tokens(std::vector<int64_t>& ids, const int32_t* symbols, const int64_t* offsets,
                             const double* keys) {
        std::stable_sort(ids.begin(), ids.end(), TokenOrder{symbols, offsets, keys});
    }
    """
    void order_tokens(vector[int64_t]& ids, const int32_t* symbols, const int64_t* offsets,
                      const double* keys) except + nogil

cdef c_array INT32 = array("i")
# The tuples of a vocabulary share one int object per symbol below this (a chars alphabet's
# symbols are no small ints: the trained tokenizer's 32,000 tuples of new ints were 4.6 MB of
# a Unigram trainer's peak, issue 26).
cdef Py_ssize_t SHARED_INTS = 1 << 16
cdef c_array INT64 = array("q")


cdef class PackedTokens:
    """Tokens by id: token k is symbols[offsets[k]:offsets[k + 1]]. The arrays are the
    instance's own (neither is changed once given)."""
    cdef readonly c_array symbols  # array('i')
    cdef readonly c_array offsets  # array('q'), one more than the tokens, from 0 up to len(symbols)
    cdef list _ints  # made on the first tuple: the int objects of the symbols 0..SHARED_INTS-1

    def __init__(self, c_array symbols not None, c_array offsets not None):
        """From the arrays themselves (not copied): symbols array('i'), offsets array('q')."""
        cdef Py_ssize_t k, n
        if symbols.ob_descr.typecode != b"i" or offsets.ob_descr.typecode != b"q":
            raise TypeError(f"PackedTokens takes array('i') symbols and array('q') offsets, got"
                            f" {symbols.typecode!r} and {offsets.typecode!r}")
        n = len(offsets) - 1
        if n < 0 or offsets.data.as_longlongs[0] != 0 or offsets.data.as_longlongs[n] != len(symbols):
            raise ValueError(f"offsets must run from 0 to {len(symbols)} (the symbols)")
        for k in range(n):
            if offsets.data.as_longlongs[k + 1] < offsets.data.as_longlongs[k]:
                raise ValueError(f"offsets must not decrease (at {k + 1})")
        self.symbols = symbols
        self.offsets = offsets

    @staticmethod
    def of(tokens):
        """From sequences of ints (tuples, lists): each symbol must fit an int32."""
        symbols, offsets = array("i"), array("q", [0])
        for k, token in enumerate(tokens):
            for symbol in token:
                if not -2**31 <= symbol < 2**31:
                    raise ValueError(f"token {k}: symbol {symbol} is not in [-2**31, 2**31)")
                symbols.append(symbol)
            offsets.append(len(symbols))
        return PackedTokens(symbols, offsets)

    def __len__(self):
        return len(self.offsets) - 1

    cdef Py_ssize_t _id(self, Py_ssize_t k) except -1:
        cdef Py_ssize_t n = len(self.offsets) - 1
        if not -n <= k < n:
            raise IndexError(f"token {k} of {n}")
        return k + n if k < 0 else k

    def __getitem__(self, Py_ssize_t k):
        """Token k as a tuple of ints."""
        k = self._id(k)
        cdef int64_t start = self.offsets.data.as_longlongs[k]
        cdef Py_ssize_t j, width = self.offsets.data.as_longlongs[k + 1] - start
        cdef int32_t value
        if self._ints is None:
            self._ints = list(range(min(max(self.symbols, default=-1) + 1, SHARED_INTS)))
        token = PyTuple_New(width)
        for j in range(width):
            value = self.symbols.data.as_ints[start + j]
            if 0 <= value < len(self._ints):
                symbol = <object>PyList_GET_ITEM(self._ints, value)
            else:
                symbol = PyLong_FromLong(value)
            Py_INCREF(symbol)  # PyTuple_SET_ITEM steals one
            PyTuple_SET_ITEM(token, j, symbol)
        return token

    def __iter__(self):
        for k in range(len(self)):
            yield self[k]

    def width(self, Py_ssize_t k):
        """Token k's number of symbols."""
        k = self._id(k)
        return self.offsets.data.as_longlongs[k + 1] - self.offsets.data.as_longlongs[k]

    def __add__(PackedTokens self, PackedTokens other):
        """These tokens, then other's."""
        cdef Py_ssize_t k, n = len(self), m = len(other)
        cdef int64_t shift = len(self.symbols)
        cdef c_array offsets = clone(INT64, n + m + 1, False)
        for k in range(n + 1):
            offsets.data.as_longlongs[k] = self.offsets.data.as_longlongs[k]
        for k in range(1, m + 1):
            offsets.data.as_longlongs[n + k] = shift + other.offsets.data.as_longlongs[k]
        return PackedTokens(self.symbols + other.symbols, offsets)

    def select(self, ids):
        """The tokens of these ids, in their order (a token may come more than once)."""
        cdef const int64_t[::1] chosen = ids if isinstance(ids, array) and ids.typecode == "q" else array("q", ids)
        cdef Py_ssize_t i, j, at = 0, n = len(self), total = 0
        cdef int64_t k, start, width
        for i in range(chosen.shape[0]):
            if not 0 <= chosen[i] < n:
                raise IndexError(f"token {chosen[i]} of {n}")
            total += self.offsets.data.as_longlongs[chosen[i] + 1] - self.offsets.data.as_longlongs[chosen[i]]
        cdef c_array symbols = clone(INT32, total, False)
        cdef c_array offsets = clone(INT64, chosen.shape[0] + 1, False)
        offsets.data.as_longlongs[0] = 0
        for i in range(chosen.shape[0]):
            k = chosen[i]
            start = self.offsets.data.as_longlongs[k]
            width = self.offsets.data.as_longlongs[k + 1] - start
            for j in range(width):
                symbols.data.as_ints[at + j] = self.symbols.data.as_ints[start + j]
            at += width
            offsets.data.as_longlongs[i + 1] = at
        return PackedTokens(symbols, offsets)

    def order(self, ids, keys=None):
        """The ids sorted by (keys[id], token) when `keys` (a float per token) is given, else by
        token, tokens compared as tuples of ints; stable. A list, as sorted(ids, key=...) gives:
        keys hold no NaN (its order is Python's only where comparisons are consistent)."""
        cdef vector[int64_t] order
        cdef const double[::1] by
        cdef const double* key_data = NULL
        cdef Py_ssize_t n = len(self)
        for k in ids:
            if not 0 <= k < n:
                raise IndexError(f"token {k} of {n}")
            order.push_back(k)
        if keys is not None:
            by = keys if isinstance(keys, array) and keys.typecode == "d" else array("d", keys)
            if by.shape[0] != n:
                raise ValueError(f"{by.shape[0]} keys for {n} tokens")
            if n:
                key_data = &by[0]
        with nogil:
            order_tokens(order, <const int32_t*>self.symbols.data.as_ints,
                         <const int64_t*>self.offsets.data.as_longlongs, key_data)
        return list(order)
