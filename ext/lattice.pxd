"""The Unigram lattice of a piece's base symbols, shared inline by the likelihood segmenter
(tokfx._path_segment) and the Unigram trainer's passes (tokfx._unigram): Viterbi (the most
likely segmentation under the tokens' log probabilities), walking the trie of the reversed
tokens back from each end position, and forward-backward (log marginals), walking the tokens'
trie once from each start position; widths 1..max_width in increasing order, as
shortest_path.pxd does.

Tie rule: among equal path scores the later width wins (`>=`), so the longest last token at each
end position, as pathpiece-l and sentencepiece's Viterbi.
"""
from libc.math cimport exp, log
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from double_array cimport DoubleArray, da_child, da_token
from walk_trie cimport WalkTrie, walk_child

ctypedef fused AnyTrie:  # viterbi walks either layout of a trie
    WalkTrie
    DoubleArray

cdef extern from *:
    """
    #include <limits>
    static const double LATTICE_NEG_INF = -std::numeric_limits<double>::infinity();
    """
    const double LATTICE_NEG_INF


cdef struct Best:
    # Per end position e: the best log probability of symbols[0..e], and the width and token of
    # its last token (width 0: no path).
    vector[double] score
    vector[int32_t] width
    vector[int32_t] token


cdef inline double log_sum_exp(double x, double y) noexcept nogil:
    """log(exp(x) + exp(y)) as sentencepiece computes it: the larger alone when the other is
    more than 50 below it."""
    cdef double lo = x if x < y else y
    cdef double hi = y if x < y else x
    if hi == LATTICE_NEG_INF or hi > lo + 50.0:
        return hi
    return hi + log(exp(lo - hi) + 1.0)


cdef inline int viterbi(const int32_t* symbols, Py_ssize_t n, const AnyTrie* reversed_trie,
                        const double* scores, int max_width, bint skip_whole, Best* best) except -1 nogil:
    """The most likely paths of symbols[:n]; with skip_whole, no path is the single token of
    all n symbols (the alternative segmentation of a token, for pruning). Path scores are
    float64 sums (float32 ones, sentencepiece's, are viterbi32.pxd's)."""
    cdef Py_ssize_t e, w
    cdef int32_t node, token, chosen_width, chosen_token
    cdef double score, top, before
    best.score.resize(n)
    best.width.resize(n)
    best.token.resize(n)
    for e in range(n):
        if AnyTrie is DoubleArray:
            node = 0
        else:
            node = reversed_trie.root
        top = LATTICE_NEG_INF
        chosen_width = 0
        chosen_token = -1
        for w in range(1, min(max_width, e + 1) + 1):
            if AnyTrie is DoubleArray:
                node = da_child(reversed_trie, node, symbols[e - w + 1])
            else:
                node = walk_child(reversed_trie, node, symbols[e - w + 1])
            if node < 0:
                break
            if AnyTrie is DoubleArray:
                token = da_token(reversed_trie, node)
            else:
                token = reversed_trie.slots[node].token
            if token < 0:
                continue
            if w <= e:
                before = best.score[e - w]
                if best.width[e - w] == 0:
                    continue
            else:
                if skip_whole and e == n - 1:
                    continue
                before = 0.0
            score = before + scores[token]
            if chosen_width == 0 or score >= top:
                top, chosen_width, chosen_token = score, w, token
        best.score[e], best.width[e], best.token[e] = top, chosen_width, chosen_token
    return 0


cdef inline int viterbi_tokens(Py_ssize_t n, Best* best, vector[int32_t]* tokens) except -2 nogil:
    """Appends the best path's token ids to tokens, first token first; -1 if symbols[:n] has no
    path (n > 0)."""
    cdef Py_ssize_t e = n - 1, first = tokens.size(), k
    if n and best.width[n - 1] == 0:
        return -1
    while e >= 0:
        tokens.push_back(best.token[e])
        e -= best.width[e]
    k = tokens.size() - 1
    while first < k:
        tokens[0][first], tokens[0][k] = tokens[0][k], tokens[0][first]
        first += 1
        k -= 1
    return 0


cdef struct LatticeEdge:
    int32_t at  # in Edges.by_start, the edge's width; in Edges.by_end, its start
    int32_t token


cdef struct Edges:
    # A piece's lattice edges (the tokens its trie walk found), twice: by_start[by_start_row[s]
    # .. by_start_row[s + 1]) are those that start at symbol s, by increasing width;
    # by_end[by_end_row[e] .. by_end_row[e + 1]) those that end at symbol e, by increasing start
    # (decreasing width). As many as the edges, not a row of max_width per symbol: a CJK line
    # is one piece of up to thousands of symbols, and a pass runs on each thread.
    vector[LatticeEdge] by_start
    vector[int32_t] by_start_row
    vector[LatticeEdge] by_end
    vector[int32_t] by_end_row
    vector[int32_t] filled  # per end, while by_end is filled


cdef inline double forward_backward(const int32_t* symbols, Py_ssize_t n, const WalkTrie* trie,
                                    const double* scores, int max_width, vector[double]* alpha,
                                    vector[double]* beta, Edges* edges) except? -1 nogil:
    """alpha[i]: log of the summed probability of every path over symbols[0..i-1] (alpha[0] = 0);
    beta[i]: over symbols[i..n-1] (beta[n] = 0). Returns log Z = alpha[n] (-inf: no path). Sums
    run in increasing width, as the twin's. The trie (of the tokens, not reversed) is walked
    once from each start, into `edges`, which both passes then read (and a later pass over the
    same edges may): one walk instead of one per pass (a walk is a hash lookup per symbol, most
    of them cache misses with a large vocabulary, a CJK seed's), and each pass reads the edges
    that exist, where it read every (start, width) pair and skipped those without a token."""
    cdef Py_ssize_t e, s, w, j
    cdef int32_t node, token
    cdef double acc
    alpha.assign(n + 1, LATTICE_NEG_INF)
    beta.assign(n + 1, LATTICE_NEG_INF)
    alpha[0][0] = 0.0
    beta[0][n] = 0.0
    edges.by_start.clear()
    edges.by_start_row.resize(n + 1)
    edges.by_end_row.assign(n + 1, 0)
    for s in range(n):
        edges.by_start_row[s] = <int32_t>edges.by_start.size()
        node = trie.root
        for w in range(1, min(max_width, n - s) + 1):
            node = walk_child(trie, node, symbols[s + w - 1])
            if node < 0:
                break
            token = trie.slots[node].token
            if token >= 0:
                edges.by_start.push_back(LatticeEdge(<int32_t>w, token))
                edges.by_end_row[s + w] += 1  # counted at its end + 1, summed below
    edges.by_start_row[n] = <int32_t>edges.by_start.size()
    for e in range(n):
        edges.by_end_row[e + 1] += edges.by_end_row[e]
    edges.by_end.resize(edges.by_start.size())
    edges.filled.assign(edges.by_end_row.begin(), edges.by_end_row.end() - 1)
    for s in range(n):  # by increasing start
        for j in range(edges.by_start_row[s], edges.by_start_row[s + 1]):
            e = s + edges.by_start[j].at - 1
            edges.by_end[edges.filled[e]] = LatticeEdge(<int32_t>s, edges.by_start[j].token)
            edges.filled[e] += 1
    for e in range(n):
        acc = LATTICE_NEG_INF
        for j in range(edges.by_end_row[e + 1] - 1, edges.by_end_row[e] - 1, -1):  # increasing width
            s = edges.by_end[j].at
            if alpha[0][s] != LATTICE_NEG_INF:
                acc = log_sum_exp(acc, alpha[0][s] + scores[edges.by_end[j].token])
        alpha[0][e + 1] = acc
    for s in range(n - 1, -1, -1):
        acc = LATTICE_NEG_INF
        for j in range(edges.by_start_row[s], edges.by_start_row[s + 1]):
            w = edges.by_start[j].at
            if beta[0][s + w] != LATTICE_NEG_INF:
                acc = log_sum_exp(acc, beta[0][s + w] + scores[edges.by_start[j].token])
        beta[0][s] = acc
    return alpha[0][n]
