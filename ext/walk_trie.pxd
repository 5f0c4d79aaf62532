"""A SymbolTrie (symbol_trie.pxd) laid out again for the walks of the Unigram trainer's passes,
shared inline by its forward-backward and Viterbi (lattice.pxd). A node's id is its edge's
slot in the hash table, and the slot holds the node's token and a 32-bit filter of its
children's symbols beside the key, so a step of a walk reads one slot where it read an edge's
slot and then the node's token elsewhere; and a step that leaves the trie (most of them, with
a CJK seed's vocabulary) is mostly answered by the filter of the slot just read, where it
probed the table. The root's children sit in an array by symbol. Same tokens at the same
paths; built for each pass.
"""
from libc.stdint cimport UINT64_MAX, int32_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from piece_cache cimport mix
from symbol_trie cimport Edge, SymbolTrie

cdef enum:
    # The root's children along symbols below this are found in `roots` (a token's symbols are
    # a dense alphabet's ids); along a larger one, in the table.
    ROOT_SYMBOLS = 1 << 20


cdef struct WalkSlot:
    uint64_t key  # parent node << 32 | symbol; UINT64_MAX marks an empty slot
    int32_t token  # the token id the path to the node spells, or -1
    uint32_t children  # child_bit(symbol) set for the symbol of each child (0: a leaf)


cdef struct WalkTrie:
    vector[WalkSlot] slots  # the table (mask + 1 slots, at most half full), then the root's slot
    size_t mask
    int32_t root  # the root's node id, its slot: mask + 1
    vector[int32_t] roots  # the root's child along each symbol below its size, or -1


cdef inline uint32_t child_bit(uint32_t symbol) noexcept nogil:
    """The filter's bit of a symbol: the top 5 bits of a multiplicative hash (a node's few
    children rarely share one, whatever the symbols' ids)."""
    return (<uint32_t>1) << ((symbol * 2654435761u) >> 27)


cdef inline int walk_trie_build(WalkTrie* walk, SymbolTrie* trie) except -1 nogil:
    """walk: trie's nodes and tokens; trie's edge table is freed once read (the two tables at
    once would add to the trainer's peak). A child's id in a SymbolTrie is above its parent's
    (made after it), so placing nodes by id places each parent first."""
    cdef vector[Edge] edges
    cdef size_t k, size = 2, nodes = trie.token_of_node.size()
    cdef vector[int32_t] parent, symbol, slot_of
    cdef uint64_t key
    cdef uint32_t top = 0
    cdef int32_t node
    parent.resize(nodes)
    symbol.resize(nodes)
    edges.swap(trie.edges)
    for edge in edges:
        if edge.key != UINT64_MAX:
            parent[edge.child], symbol[edge.child] = <int32_t>(edge.key >> 32), <int32_t><uint32_t>edge.key
            if edge.key >> 32 == 0 and <uint32_t>edge.key < ROOT_SYMBOLS:
                top = max(top, <uint32_t>edge.key + 1)
    vector[Edge]().swap(edges)
    while size < 2 * nodes:
        size *= 2
    walk.mask = size - 1
    walk.root = <int32_t>size
    walk.slots.assign(size + 1, WalkSlot(UINT64_MAX, -1, 0))
    walk.slots[size].token = trie.token_of_node[0]
    walk.roots.assign(top, -1)
    slot_of.resize(nodes)
    slot_of[0] = walk.root
    for node in range(1, <int32_t>nodes):
        key = (<uint64_t>(<uint32_t>slot_of[parent[node]]) << 32) | <uint32_t>symbol[node]
        k = mix(key) & walk.mask
        while walk.slots[k].key != UINT64_MAX:
            k = (k + 1) & walk.mask
        walk.slots[k].key, walk.slots[k].token = key, trie.token_of_node[node]
        slot_of[node] = <int32_t>k
        walk.slots[slot_of[parent[node]]].children |= child_bit(<uint32_t>symbol[node])
        if parent[node] == 0 and <uint32_t>symbol[node] < top:
            walk.roots[symbol[node]] = <int32_t>k
    return 0


cdef inline int32_t walk_child(const WalkTrie* walk, int32_t node, int32_t symbol) noexcept nogil:
    """The child of node along symbol, or -1 (as trie_child; the root is walk.root)."""
    if node == walk.root and <uint32_t>symbol < walk.roots.size():
        return walk.roots[symbol]
    if not walk.slots[node].children & child_bit(<uint32_t>symbol):
        return -1
    cdef uint64_t key = (<uint64_t>(<uint32_t>node) << 32) | <uint32_t>symbol
    cdef size_t k = mix(key) & walk.mask
    cdef const WalkSlot* slots = walk.slots.data()
    while slots[k].key != key:
        if slots[k].key == UINT64_MAX:
            return -1
        k = (k + 1) & walk.mask
    return <int32_t>k

