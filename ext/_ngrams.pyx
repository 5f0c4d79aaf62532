"""The most frequent n-grams of a corpus's pieces: an initial vocabulary to prune top-down
(PathPiece's initial_vocab="ngram"). Each n-gram is a node of a trie grown from every start
position, its count kept per node.

Twin: tokfx.reference.ngrams.
"""
from libc.stdint cimport int32_t, int64_t
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector

from chunks cimport check_chunks
from symbol_trie cimport SymbolTrie, trie_build, trie_child, trie_child_or_new


def top_ngrams(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
               Py_ssize_t how_many, int max_width):
    """The `how_many` most frequent n-grams of 2..max_width symbols inside the pieces
    symbols[offsets[k]:offsets[k+1]] (each occurrence counted counts[k] times), most frequent
    first, ties by their symbols: a list of symbol tuples."""
    return [gram for gram, _ in top_ngram_counts(symbols, offsets, counts, how_many, max_width)]


def top_ngram_counts(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                     Py_ssize_t how_many, int max_width):
    """As top_ngrams, each n-gram with its count: a list of (symbol tuple, count)."""
    cdef SymbolTrie trie
    # Per trie node: the n-gram's count, its parent node, last symbol and length.
    cdef vector[int64_t] node_count
    cdef vector[int32_t] parent, last_symbol, length
    cdef vector[int64_t] ranked
    cdef Py_ssize_t k, start, w
    cdef int32_t node, child
    cdef int64_t threshold
    trie_build(&trie, [], False)
    check_chunks(symbols, offsets, counts)
    node_count.push_back(0)
    parent.push_back(-1)
    last_symbol.push_back(-1)
    length.push_back(0)
    for k in range(counts.shape[0]):
        for start in range(offsets[k], offsets[k + 1]):
            node = 0
            for w in range(1, min(max_width, offsets[k + 1] - start) + 1):
                # Most n-grams were seen before: look up first (at the root, in its array) and
                # insert only a new one (trie_child_or_new inlined on every step measured 15% slower).
                child = trie_child(&trie, node, symbols[start + w - 1])
                if child < 0:
                    child = trie_child_or_new(&trie, node, symbols[start + w - 1])
                    node_count.push_back(0)
                    parent.push_back(node)
                    last_symbol.push_back(symbols[start + w - 1])
                    length.push_back(w)
                node_count[child] += counts[k]
                node = child
    for node in range(<int32_t>node_count.size()):
        if length[node] >= 2:
            ranked.push_back(node_count[node])
    if how_many <= 0 or ranked.empty():
        return []
    sort(ranked.begin(), ranked.end())
    threshold = ranked[max(0, <Py_ssize_t>ranked.size() - how_many)]
    found = []
    for node in range(<int32_t>node_count.size()):
        if length[node] >= 2 and node_count[node] >= threshold:
            gram = []
            child = node
            while child > 0:
                gram.append(last_symbol[child])
                child = parent[child]
            found.append((-node_count[node], tuple(reversed(gram))))
    found.sort()
    return [(gram, -negative_count) for negative_count, gram in found[:how_many]]
