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

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <vector>
    // Candidates (indices into start/length/count) by count, highest first, ties by their
    // symbols flat[start..start+length) compared as Python compares tuples of ints.
    static void sort_grams(std::vector<int32_t>& order, const std::vector<int64_t>& count,
                           const std::vector<int64_t>& start, const std::vector<int32_t>& length,
                           const std::vector<int32_t>& flat) {
        std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
            if (count[a] != count[b]) return count[a] > count[b];
            const int32_t* x = flat.data() + start[a];
            const int32_t* y = flat.data() + start[b];
            return std::lexicographical_compare(x, x + length[a], y, y + length[b]);
        });
    }
    """
    void sort_grams(vector[int32_t]& order, const vector[int64_t]& count, const vector[int64_t]& start,
                    const vector[int32_t]& length, const vector[int32_t]& flat) except +


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
    cdef vector[int32_t] order, cand_length, flat
    cdef vector[int64_t] cand_count, cand_start
    cdef Py_ssize_t i, j, at
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
    # The candidates' symbols spelled out in C, sorted there (count, then symbols, as the
    # tuples (-count, symbols) sort), and only the kept made Python tuples.
    for node in range(<int32_t>node_count.size()):
        if length[node] >= 2 and node_count[node] >= threshold:
            at = flat.size()
            flat.resize(at + length[node])
            child = node
            j = length[node] - 1
            while child > 0:
                flat[at + j] = last_symbol[child]
                child = parent[child]
                j -= 1
            order.push_back(<int32_t>cand_count.size())
            cand_count.push_back(node_count[node])
            cand_start.push_back(at)
            cand_length.push_back(length[node])
    sort_grams(order, cand_count, cand_start, cand_length, flat)
    found = []
    for i in range(min(how_many, <Py_ssize_t>order.size())):
        at = cand_start[order[i]]
        found.append((tuple([flat[at + j] for j in range(cand_length[order[i]])]), cand_count[order[i]]))
    return found
