"""A trie of tokens (as symbol_trie.pxd's) laid out for the walks of the Unigram trainer's passes,
shared inline by its forward-backward and Viterbi (lattice.pxd). A node's id is its edge's
slot in the hash table, and the slot holds the node's token and a 32-bit filter of its
children's symbols beside the key, so a step of a walk reads one slot where it read an edge's
slot and then the node's token elsewhere; and a step that leaves the trie (most of them, with
a CJK seed's vocabulary) is mostly answered by the filter of the slot just read, where it
probed the table. The root's children sit in an array by symbol. Same tokens at the same
paths; built for each pass.
"""
from libc.stdint cimport UINT64_MAX, int32_t, int64_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from piece_cache cimport mix

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


cdef inline int walk_trie_build(WalkTrie* walk, const int32_t* symbols, const int64_t* offsets,
                                Py_ssize_t n_tokens, bint reverse) except -1 nogil:
    """walk: the trie of tokens packed as PackedTokens holds them (tokfx._packed_tokens: token k
    is symbols[offsets[k]:offsets[k + 1]], checked non-empty, each symbol >= 0), each walked
    reversed with `reverse`; a repeated token keeps its lowest id. The table starts sized for a
    node per token at load 1/2 (a token trie has about that many nodes) and, should the nodes
    outgrow it, is built again twice as large: one table at a time, none kept beside it (the
    trainer's peak)."""
    cdef Py_ssize_t k
    cdef size_t size = 2
    cdef uint32_t top = 0, first
    for k in range(n_tokens):
        first = <uint32_t>symbols[offsets[k + 1] - 1 if reverse else offsets[k]]
        if first < ROOT_SYMBOLS:
            top = max(top, first + 1)
    while size < 2 * <size_t>(n_tokens + 1):
        size *= 2
    while not _walk_trie_fill(walk, symbols, offsets, n_tokens, reverse, size, top):
        size *= 2
    return 0


cdef inline bint _walk_trie_fill(WalkTrie* walk, const int32_t* symbols, const int64_t* offsets,
                                 Py_ssize_t n_tokens, bint reverse, size_t size, uint32_t top) noexcept nogil:
    """walk_trie_build into a table of `size` slots (the root's child along a symbol below
    `top` in walk.roots); False once it would be over half full."""
    cdef Py_ssize_t k, j, start, width
    cdef size_t nodes = 1, slot
    cdef int32_t node, child
    cdef uint32_t symbol
    cdef uint64_t key
    vector[WalkSlot]().swap(walk.slots)
    walk.slots.assign(size + 1, WalkSlot(UINT64_MAX, -1, 0))
    walk.mask = size - 1
    walk.root = <int32_t>size
    walk.roots.assign(top, -1)
    for k in range(n_tokens):
        node = walk.root
        start = offsets[k]
        width = offsets[k + 1] - start
        for j in range(width):
            symbol = <uint32_t>symbols[start + width - 1 - j if reverse else start + j]
            child = walk_child(walk, node, <int32_t>symbol)
            if child < 0:
                if 2 * (nodes + 1) > size:
                    return False
                nodes += 1
                key = (<uint64_t>(<uint32_t>node) << 32) | symbol
                slot = mix(key) & walk.mask
                while walk.slots[slot].key != UINT64_MAX:
                    slot = (slot + 1) & walk.mask
                walk.slots[slot].key = key
                walk.slots[node].children |= child_bit(symbol)
                if node == walk.root and symbol < top:
                    walk.roots[symbol] = <int32_t>slot
                child = <int32_t>slot
            node = child
        if walk.slots[node].token < 0:
            walk.slots[node].token = <int32_t>k
    return True


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

