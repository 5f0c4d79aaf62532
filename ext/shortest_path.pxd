"""Fewest tokens over a piece's base symbols, shared inline by the segmenter and the PathPiece MI
pass: the forward DP over end positions with its tie rule (and the random state of a piece for
the random rule), the backtrack of the chosen path, and the backward DP (fewest tokens from each
start) that the MI of an occurrence needs.

The forward DP walks the trie of the reversed tokens back from each end position, so one walk
finds every token ending there, widths 1..max_width in increasing order.
"""
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from piece_cache cimport mix
from symbol_trie cimport SymbolTrie, trie_child, trie_token

cdef enum:
    # The tie rule among equal paths: the longest last token, or a uniform random one.
    LONGEST = 0
    RANDOM = 1
    UNREACHED = 2147483647  # INT32_MAX: no path (yet)


cdef struct Paths:
    # Per end position e of a piece: pl = fewest tokens for symbols[0..e], width and token of
    # the chosen last token, sc = how many widths reach pl[e].
    vector[int32_t] pl
    vector[int32_t] width
    vector[int32_t] token
    vector[int32_t] sc


cdef inline uint64_t next_random(uint64_t* state) noexcept nogil:
    """splitmix64."""
    state[0] += 0x9E3779B97F4A7C15ULL
    return mix(state[0])


cdef inline uint64_t piece_seed(uint64_t seed, const int32_t* symbols, Py_ssize_t n) noexcept nogil:
    """The random state of one piece: from the seed and the piece's symbols only, so a piece
    segments the same wherever it occurs and however the text around it was cut (and the
    PathPiece construction with random ties draws exactly as pathpiece-r then segments)."""
    cdef uint64_t h = mix(seed ^ <uint64_t>n)
    cdef Py_ssize_t i
    for i in range(n):
        h = mix(h ^ <uint32_t>symbols[i])
    return h


cdef inline int forward(const int32_t* symbols, Py_ssize_t n, const SymbolTrie* reversed_trie,
                        int max_width, int rule, uint64_t* state, Paths* paths) except -1:
    """Paths of symbols[:n] under the tie rule (LONGEST or RANDOM, drawing from state)."""
    cdef Py_ssize_t e, w
    cdef int32_t node, token, cost, best, ties, chosen_width, chosen_token
    paths.pl.resize(n)
    paths.width.resize(n)
    paths.token.resize(n)
    paths.sc.resize(n)
    for e in range(n):
        node = 0
        best = UNREACHED
        ties = 0
        chosen_width = 0
        chosen_token = -1
        for w in range(1, min(max_width, e + 1) + 1):
            node = trie_child(reversed_trie, node, symbols[e - w + 1])
            if node < 0:
                break
            token = trie_token(reversed_trie, node)
            if token < 0 or (w <= e and paths.pl[e - w] == UNREACHED):
                continue
            cost = (paths.pl[e - w] if w <= e else 0) + 1
            if cost < best:
                best, ties, chosen_width, chosen_token = cost, 1, w, token
            elif cost == best:
                ties += 1
                # Longest: the later width is the longer. Random: reservoir sampling keeps
                # each of the tied widths with probability 1/ties.
                if rule == LONGEST or next_random(state) % <uint64_t>ties == 0:
                    chosen_width, chosen_token = w, token
        paths.pl[e], paths.width[e], paths.token[e], paths.sc[e] = best, chosen_width, chosen_token, ties
    if n and paths.pl[n - 1] == UNREACHED:
        raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
    return 0


cdef inline int backtrack(Py_ssize_t n, Paths* paths, vector[int32_t]* starts,
                          vector[int32_t]* tokens) except -1:
    """The chosen path's token starts and ids, last token first."""
    cdef Py_ssize_t e = n - 1
    starts.clear()
    tokens.clear()
    while e >= 0:
        starts.push_back(e - paths.width[e] + 1)
        tokens.push_back(paths.token[e])
        e -= paths.width[e]
    return 0


cdef inline int backward(const int32_t* symbols, Py_ssize_t n, const SymbolTrie* trie, int max_width,
                         vector[int32_t]* bpl) except -1:
    """bpl[i] = fewest tokens for symbols[i..n-1]; bpl[n] = 0."""
    cdef Py_ssize_t i, w
    cdef int32_t node, best
    bpl.resize(n + 1)
    bpl[0][n] = 0
    for i in range(n - 1, -1, -1):
        node = 0
        best = UNREACHED
        for w in range(1, min(max_width, n - i) + 1):
            node = trie_child(trie, node, symbols[i + w - 1])
            if node < 0:
                break
            if trie_token(trie, node) >= 0 and bpl[0][i + w] != UNREACHED:
                best = min(best, bpl[0][i + w] + 1)
        bpl[0][i] = best
    return 0
