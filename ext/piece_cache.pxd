"""A bounded cache piece bytes -> token ids, shared by the encode cores (BPE merges and the
shortest-path segmenters), inline as cjk_remap.pxd is.

An open-addressing table (linear probing, at most half full) whose slots point into one arena;
a node-based std::unordered_map spent most of the time chasing pointers. It grows up to
2 * capacity slots and is emptied whole once it holds capacity pieces.
"""
from libc.stdint cimport int32_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

cdef enum:
    # Longer pieces (mostly CJK runs) rarely repeat: looking them up and storing them costs more
    # than encoding them again (measured on zh_5M).
    MAX_CACHED_PIECE = 24
    # The table starts this small (and doubles) so that short-lived encoders stay cheap.
    FIRST_CACHE_SLOTS = 1024


cdef struct CacheSlot:
    uint64_t hash
    uint32_t offset  # in the arena: the piece's bytes, then its ids (int32, unaligned)
    uint16_t piece_size  # 0 marks an empty slot (pieces of 0 or 1 byte are never cached)
    uint16_t id_count


cdef struct PieceCache:
    size_t capacity
    size_t count
    vector[CacheSlot] slots
    vector[unsigned char] arena


cdef inline uint64_t mix(uint64_t h) noexcept nogil:
    """splitmix64's finaliser: every input bit reaches the low bits that index a table."""
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL
    return h ^ (h >> 31)


cdef inline uint64_t hash_piece(const unsigned char* piece, Py_ssize_t size) noexcept nogil:
    """One multiply per 8 bytes (each step a bijection of h, so keys of one size that differ in
    one chunk differ in h), the tail read by fixed-size loads, then one mix: a full mix per chunk
    and a memcpy of variable size for the tail were a quarter of the Unigram segment cache's
    time on English (perf)."""
    cdef uint64_t h = <uint64_t>size * 0x9E3779B97F4A7C15ULL, chunk = 0
    cdef uint32_t four
    cdef uint16_t two
    while size >= 8:
        memcpy(&chunk, piece, 8)
        h = (h ^ chunk) * 0xBF58476D1CE4E5B9ULL
        piece += 8
        size -= 8
    chunk = 0
    if size & 4:
        memcpy(&four, piece, 4)
        chunk = four
        piece += 4
    if size & 2:
        memcpy(&two, piece, 2)
        chunk = (chunk << 16) | two
        piece += 2
    if size & 1:
        chunk = (chunk << 8) | piece[0]
    return mix(h ^ chunk)


cdef inline bint same_bytes(const unsigned char* a, const unsigned char* b, Py_ssize_t size) noexcept nogil:
    """memcmp(a, b, size) == 0 by 8-byte loads: the short keys of the cache spent more in the
    call to libc's memcmp than in the comparison."""
    cdef uint64_t x, y
    cdef uint32_t x4, y4
    while size >= 8:
        memcpy(&x, a, 8)
        memcpy(&y, b, 8)
        if x != y:
            return False
        a += 8
        b += 8
        size -= 8
    if size >= 4:
        memcpy(&x4, a, 4)
        memcpy(&y4, b, 4)
        if x4 != y4:
            return False
        a += 4
        b += 4
        size -= 4
    while size > 0:
        if a[0] != b[0]:
            return False
        a += 1
        b += 1
        size -= 1
    return True


cdef inline void cache_init(PieceCache* cache, size_t capacity) noexcept:
    cdef size_t slots = 2  # a power of two, so that hash & (slots - 1) indexes the table
    while slots < min(<size_t>FIRST_CACHE_SLOTS, 2 * capacity):
        slots *= 2
    cache.capacity = capacity
    cache.count = 0
    cache.arena.clear()
    cache.slots.assign(slots, CacheSlot(0, 0, 0, 0))


cdef inline bint cacheable(PieceCache* cache, Py_ssize_t size) noexcept:
    return cache.capacity > 0 and 1 < size <= MAX_CACHED_PIECE


cdef inline CacheSlot* cache_slot(PieceCache* cache, const unsigned char* piece, Py_ssize_t size,
                                  uint64_t h) noexcept:
    """The slot holding piece, or the empty slot where it belongs."""
    cdef size_t mask = cache.slots.size() - 1
    cdef size_t i = h & mask
    cdef CacheSlot* slot
    while True:
        slot = &cache.slots[i]
        if slot.piece_size == 0 or (
                slot.hash == h and slot.piece_size == size
                and same_bytes(cache.arena.data() + slot.offset, piece, size)):
            return slot
        i = (i + 1) & mask


cdef inline int cache_append_ids(PieceCache* cache, CacheSlot* slot, vector[int32_t]* out) except -1:
    """Append the ids of the (full) slot to out."""
    cdef size_t start = out.size()
    out.resize(start + slot.id_count)
    memcpy(out.data() + start, cache.arena.data() + slot.offset + slot.piece_size,
           slot.id_count * sizeof(int32_t))
    return 0


cdef inline int cache_double_slots(PieceCache* cache) except -1:
    cdef vector[CacheSlot] old
    old.swap(cache.slots)
    cache.slots.assign(2 * old.size(), CacheSlot(0, 0, 0, 0))
    cdef size_t mask = cache.slots.size() - 1, i
    for slot in old:
        if slot.piece_size != 0:
            i = slot.hash & mask
            while cache.slots[i].piece_size != 0:
                i = (i + 1) & mask
            cache.slots[i] = slot
    return 0


cdef inline int cache_store(PieceCache* cache, const unsigned char* piece, Py_ssize_t size,
                            uint64_t h, const int32_t* ids, size_t id_count) except -1:
    """Remember that piece encodes to ids[:id_count]."""
    cdef size_t id_bytes = id_count * sizeof(int32_t)
    cdef size_t offset = cache.arena.size()
    if cache.count >= cache.capacity or offset + size + id_bytes > 0xffffffff:
        cache.count = 0
        cache.arena.clear()
        offset = 0
        cache.slots.assign(cache.slots.size(), CacheSlot(0, 0, 0, 0))
    elif 2 * (cache.count + 1) > cache.slots.size():
        cache_double_slots(cache)
    cache.arena.resize(offset + size + id_bytes)
    memcpy(cache.arena.data() + offset, piece, size)
    memcpy(cache.arena.data() + offset + size, ids, id_bytes)
    cdef CacheSlot* slot = cache_slot(cache, piece, size, h)
    slot[0] = CacheSlot(h, offset, size, id_count)
    cache.count += 1
    return 0
