"""A SymbolTrie (symbol_trie.pxd) laid out again as a double array, for the walks that dominate a
segmenter's time (the likelihood Viterbi over a whole text): the child of node n along symbol s
is slot base[n] + s when check[that slot] == n, one addition and one load where the hash table
mixes and probes. Same nodes, same tokens; built once per segmenter.
"""
from libc.stdint cimport UINT64_MAX, int32_t, uint32_t
from libcpp.algorithm cimport sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector

from symbol_trie cimport SymbolTrie

cdef enum:
    FREE = -1  # a check[] slot no node holds
    ROOT_CHECK = -2  # the root's own slot


cdef struct DoubleArray:
    vector[int32_t] base  # per slot that holds a node: where its children's slots start
    vector[int32_t] check  # per slot: the slot of the node whose child it holds, FREE, or ROOT_CHECK
    vector[int32_t] token  # per slot: the token id the path to it spells, or -1


cdef inline int32_t da_child(const DoubleArray* da, int32_t node, int32_t symbol) noexcept nogil:
    """The slot of node's child along symbol (symbols >= 0), or -1."""
    cdef size_t slot = <size_t>da.base[node] + <uint32_t>symbol
    if slot < da.check.size() and da.check[slot] == node:
        return <int32_t>slot
    return -1


cdef inline int32_t da_token(const DoubleArray* da, int32_t node) noexcept nogil:
    return da.token[node]


cdef inline int da_build(DoubleArray* da, const SymbolTrie* trie) except -1:
    """da: the nodes of trie, the root at slot 0; each node's children placed at the first base
    where all their slots are free."""
    cdef vector[pair[int32_t, pair[int32_t, int32_t]]] edges  # (parent, (symbol, child))
    cdef vector[int32_t] first_edge  # per trie node: its first edge in `edges`, sorted by parent
    cdef vector[int32_t] slot_of  # per trie node: its slot
    cdef vector[int32_t] queue
    cdef Py_ssize_t k, nodes = trie.token_of_node.size(), head = 0, free_from = 1
    cdef int32_t node, slot, base, first, last, e
    cdef bint fits
    for k in range(<Py_ssize_t>trie.edges.size()):
        if trie.edges[k].key != UINT64_MAX:
            edges.push_back(pair[int32_t, pair[int32_t, int32_t]](
                <int32_t>(trie.edges[k].key >> 32),
                pair[int32_t, int32_t](<int32_t>(trie.edges[k].key & 0xFFFFFFFF), trie.edges[k].child)))
    sort(edges.begin(), edges.end())
    first_edge.assign(nodes + 1, <int32_t>edges.size())
    for k in range(<Py_ssize_t>edges.size() - 1, -1, -1):
        first_edge[edges[k].first] = <int32_t>k
    for k in range(nodes - 1, -1, -1):  # a node without edges starts where the next one does
        if first_edge[k] > first_edge[k + 1]:
            first_edge[k] = first_edge[k + 1]
    slot_of.assign(nodes, -1)
    da.base.assign(1, 0)
    da.check.assign(1, ROOT_CHECK)
    da.token.assign(1, trie.token_of_node[0])
    slot_of[0] = 0
    queue.push_back(0)
    while head < <Py_ssize_t>queue.size():
        node = queue[head]
        head += 1
        first, last = first_edge[node], first_edge[node + 1]
        if first == last:
            continue
        while free_from < <Py_ssize_t>da.check.size() and da.check[free_from] != FREE:
            free_from += 1
        base = max(0, <int32_t>free_from - edges[first].second.first)  # its lowest symbol at the first free slot
        while True:
            fits = True
            for e in range(first, last):
                slot = base + edges[e].second.first
                if slot < <int32_t>da.check.size() and da.check[slot] != FREE:
                    fits = False
                    break
            if fits:
                break
            base += 1
        slot = base + edges[last - 1].second.first  # the highest symbol: the arrays reach it
        if slot >= <int32_t>da.check.size():
            da.base.resize(slot + 1, 0)
            da.check.resize(slot + 1, FREE)
            da.token.resize(slot + 1, -1)
        da.base[slot_of[node]] = base
        for e in range(first, last):
            slot = base + edges[e].second.first
            da.check[slot] = slot_of[node]
            da.token[slot] = trie.token_of_node[edges[e].second.second]
            slot_of[edges[e].second.second] = slot
            queue.push_back(edges[e].second.second)
    return 0
