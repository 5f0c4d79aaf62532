"""A trie of tokens' base-symbol sequences, shared inline by the cores that walk it (segmentation,
the PathPiece MI pass, the n-gram count, the SaGe loss). Node 0 is the root; the edges sit in one
open-addressing hash table (linear probing, at most half full) keyed by parent node and symbol,
and the root's children for small symbols in an array, since every walk starts there.

A struct with inline functions rather than a cdef class: a cdef class shared between extension
modules lives in one of them, so every step of a walk in the others would be an indirect call
through its vtable into another shared object, where now trie_child inlines into each DP loop.
"""
from libc.stdint cimport UINT64_MAX, int32_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from piece_cache cimport mix

cdef enum:
    # The root's children for symbols below this sit in root_children.
    ROOT_TABLE = 1024


cdef struct Edge:
    uint64_t key  # parent node << 32 | symbol; UINT64_MAX marks an empty slot (nodes, symbols < 2**31)
    int32_t child


cdef struct SymbolTrie:
    vector[Edge] edges
    vector[int32_t] token_of_node  # the token id spelled by the path to a node, or -1
    size_t mask  # edges.size() - 1, a power of two minus one
    int32_t root_children[ROOT_TABLE]  # -1: none


cdef inline void trie_init(SymbolTrie* trie, size_t nodes) noexcept nogil:
    """An empty trie (the root alone) whose edge table has room for `nodes` nodes at load 1/2
    (trie_child_or_new doubles it as it fills)."""
    cdef size_t slots = 2
    cdef int k
    while slots < 2 * nodes:
        slots *= 2
    trie.edges.assign(slots, Edge(UINT64_MAX, 0))
    trie.mask = slots - 1
    trie.token_of_node.assign(1, -1)
    for k in range(ROOT_TABLE):
        trie.root_children[k] = -1


cdef inline int trie_build(SymbolTrie* trie, tokens, bint reverse) except -1:
    """The trie of tokens: by id, each a sequence of base symbols (walked reversed with
    `reverse`), or None to leave that id out; a repeated token keeps its lowest id."""
    cdef int32_t node
    total = 0
    for token in tokens:
        if token is not None:
            total += len(token)
    trie_init(trie, total)
    for token_id, token in enumerate(tokens):
        if token is None:
            continue
        if not token:
            raise ValueError(f"token {token_id} is empty")
        node = 0
        for symbol in (reversed(token) if reverse else token):
            if not 0 <= symbol < 2**31:
                raise ValueError(f"token {token_id}: symbol {symbol} is not in [0, 2**31)")
            node = trie_child_or_new(trie, node, symbol)
        if trie.token_of_node[node] < 0:
            trie.token_of_node[node] = token_id
    return 0


cdef inline int trie_double_edges(SymbolTrie* trie) except -1 nogil:
    cdef vector[Edge] old
    cdef size_t i
    old.swap(trie.edges)
    trie.edges.assign(2 * old.size(), Edge(UINT64_MAX, 0))
    trie.mask = trie.edges.size() - 1
    for edge in old:
        if edge.key != UINT64_MAX:
            i = mix(edge.key) & trie.mask
            while trie.edges[i].key != UINT64_MAX:
                i = (i + 1) & trie.mask
            trie.edges[i] = edge
    return 0


cdef inline int32_t trie_child_or_new(SymbolTrie* trie, int32_t node, int32_t symbol) except -1 nogil:
    """The child of node along symbol, made (the next node id) if missing."""
    cdef uint64_t key = (<uint64_t>(<uint32_t>node) << 32) | <uint32_t>symbol
    if 2 * trie.token_of_node.size() >= trie.edges.size():  # at most half full
        trie_double_edges(trie)
    cdef size_t i = mix(key) & trie.mask
    while trie.edges[i].key != UINT64_MAX:
        if trie.edges[i].key == key:
            return trie.edges[i].child
        i = (i + 1) & trie.mask
    trie.edges[i] = Edge(key, trie.token_of_node.size())
    trie.token_of_node.push_back(-1)
    if node == 0 and <uint32_t>symbol < ROOT_TABLE:  # negative symbols live in the hash table only
        trie.root_children[symbol] = trie.edges[i].child
    return trie.edges[i].child


cdef inline int32_t trie_child(const SymbolTrie* trie, int32_t node, int32_t symbol) noexcept nogil:
    """The child of node along symbol, or -1."""
    if node == 0 and <uint32_t>symbol < ROOT_TABLE:  # negative symbols live in the hash table only
        return trie.root_children[symbol]
    cdef uint64_t key = (<uint64_t>(<uint32_t>node) << 32) | <uint32_t>symbol
    cdef size_t i = mix(key) & trie.mask
    cdef const Edge* edges = trie.edges.data()
    while edges[i].key != key:
        if edges[i].key == UINT64_MAX:
            return -1
        i = (i + 1) & trie.mask
    return edges[i].child


cdef inline int32_t trie_token(const SymbolTrie* trie, int32_t node) noexcept nogil:
    """The token id the path to node spells, or -1."""
    return trie.token_of_node[node]
