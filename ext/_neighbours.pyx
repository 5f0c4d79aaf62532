"""Distinct (token, neighbour) pairs within a window, for context diversity (SaGe).

For each position i of an id sequence, every id at positions i-window..i+window other than i is
a neighbour of ids[i]. The distinct pairs are kept as sorted 64-bit keys (token << 32 |
neighbour), 8 bytes each; new pairs are appended and the vector is sorted and deduplicated
whenever it has doubled. So memory is about 8 bytes x 2 x the distinct pairs, which are at
most vocab_size**2 however long the corpus (in practice far fewer: 2.1 M pairs for BPE 8K on
en_10M, window 2). A corpus is fed sequence by sequence.

Twin: tokfx.reference.neighbours (the tests run both on random sequences and on real text).
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libcpp.algorithm cimport sort, unique
from libcpp.vector cimport vector

cdef size_t _MIN_COMPACT = 1 << 20  # pairs appended before the first sort


cdef class NeighbourPairs:
    cdef vector[uint64_t] pairs  # a sorted distinct prefix, then pairs appended since
    cdef size_t settled  # length of the sorted distinct prefix
    cdef readonly int window

    def __init__(self, int window):
        if window < 1:
            raise ValueError(f"the neighbour window must be at least 1, got {window}")
        self.window = window
        self.settled = 0

    cdef void _compact(self):
        sort(self.pairs.begin(), self.pairs.end())
        self.pairs.erase(unique(self.pairs.begin(), self.pairs.end()), self.pairs.end())
        self.settled = self.pairs.size()

    def add(self, const int32_t[:] ids):
        """Record the pairs of one sequence; pairs never span two sequences."""
        cdef Py_ssize_t n = ids.shape[0], i, j, lo, hi
        cdef uint64_t left
        for i in range(n):
            left = (<uint64_t><uint32_t>ids[i]) << 32
            lo = i - self.window if i >= self.window else 0
            hi = i + self.window + 1 if i + self.window + 1 < n else n
            for j in range(lo, hi):
                if j != i:
                    self.pairs.push_back(left | <uint32_t>ids[j])
            if self.pairs.size() >= 2 * self.settled + _MIN_COMPACT:
                self._compact()

    def distinct_neighbours(self, Py_ssize_t vocab_size) -> list:
        """For each id 0..vocab_size-1, how many distinct ids were seen next to it."""
        self._compact()
        cdef list counts = [0] * vocab_size
        cdef uint64_t pair
        cdef Py_ssize_t token
        for pair in self.pairs:
            token = <Py_ssize_t>(pair >> 32)
            if token >= vocab_size:
                raise ValueError(f"token id {token} outside 0..{vocab_size - 1}")
            counts[token] += 1
        return counts

    def __len__(self):
        """The distinct pairs seen so far."""
        self._compact()
        return self.pairs.size()
