"""Greedy segmentation (the longest token that is a prefix of the rest, left to right), shared
inline by the segmenter and the SaGe loss, whose ablation re-tokenizes with the same step."""
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from symbol_trie cimport SymbolTrie, trie_child, trie_token


cdef inline Py_ssize_t longest_token(const int32_t* symbols, Py_ssize_t at, Py_ssize_t limit,
                                     const SymbolTrie* trie, int32_t* chosen) except -1:
    """The width of the longest token of at most `limit` symbols at symbols[at:], its id in
    chosen."""
    cdef Py_ssize_t w, taken = 0
    cdef int32_t node = 0, token
    for w in range(1, limit + 1):
        node = trie_child(trie, node, symbols[at + w - 1])
        if node < 0:
            break
        token = trie_token(trie, node)
        if token >= 0:
            taken, chosen[0] = w, token
    if taken == 0:
        raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
    return taken


cdef inline int greedy(const int32_t* symbols, Py_ssize_t n, const SymbolTrie* trie, int max_width,
                       vector[int32_t]* out, vector[int32_t]* starts=NULL) except -1:
    """Appends the ids of the greedy tokens to out (and their starts to starts, if given)."""
    cdef Py_ssize_t s = 0, taken
    cdef int32_t chosen
    while s < n:
        taken = longest_token(symbols, s, min(max_width, n - s), trie, &chosen)
        out.push_back(chosen)
        if starts != NULL:
            starts.push_back(s)
        s += taken
    return 0
