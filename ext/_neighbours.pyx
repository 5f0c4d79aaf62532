"""Distinct (token, neighbour) pairs within a window, for context diversity (SaGe).

For each position i of an id sequence, every id at positions i-window..i+window other than i is
a neighbour of ids[i]. The set of distinct pairs is bounded by vocab_size**2 (in practice far
less), whatever the corpus length: a corpus is fed sequence by sequence.

Twin: tokfx.reference.neighbours (the tests run both on random sequences and on real text).
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libcpp.unordered_set cimport unordered_set


cdef class NeighbourPairs:
    cdef unordered_set[uint64_t] pairs
    cdef readonly int window

    def __init__(self, int window):
        if window < 1:
            raise ValueError(f"the neighbour window must be at least 1, got {window}")
        self.window = window

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
                    self.pairs.insert(left | <uint32_t>ids[j])

    def distinct_neighbours(self, Py_ssize_t vocab_size) -> list:
        """For each id 0..vocab_size-1, how many distinct ids were seen next to it."""
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
        return self.pairs.size()
