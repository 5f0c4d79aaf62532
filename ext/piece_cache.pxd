"""A bounded cache piece bytes -> token ids, shared by the encode cores (BPE merges and the
shortest-path segmenters), inline as cjk_remap.pxd is.

An open-addressing table (linear probing, at most half full) whose slots point into one arena;
a node-based std::unordered_map spent most of the time chasing pointers. It grows up to
2 * capacity slots and is emptied whole once it holds capacity pieces.

A slot is 8 bytes: half the piece's hash, and where its entry starts in the arena (the piece's
size and number of ids, its bytes, its ids). With the hash, sizes and offset in 16-byte slots, the
table of a GPT-2 encoder (2^19 slots) was 8 MiB of every pipeline worker's memory (bench/README,
"Per-worker cost"); now 4, with 4 bytes an entry more in the arena (1 MiB).

Callers find a piece with cache_slot and read what it holds with cache_found, cache_id_count and
cache_ids (or cache_append_ids), not the slot's fields.
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
    uint32_t tag  # the high half of the piece's hash (the low bits choose the slot)
    uint32_t entry  # 1 + the offset of the piece's entry in the arena; 0 marks an empty slot


cdef struct EntryHead:  # an entry: this, the piece's bytes, then its ids (int32, unaligned)
    uint16_t piece_size
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
    cache.slots.assign(slots, CacheSlot(0, 0))


cdef inline bint cacheable(PieceCache* cache, Py_ssize_t size) noexcept:
    return cache.capacity > 0 and 1 < size <= MAX_CACHED_PIECE


cdef inline const unsigned char* cache_entry(const PieceCache* cache, const CacheSlot* slot) noexcept nogil:
    """The arena entry of a full slot."""
    return cache.arena.data() + slot.entry - 1


cdef inline EntryHead entry_head(const unsigned char* entry) noexcept nogil:
    cdef EntryHead head
    memcpy(&head, entry, sizeof(EntryHead))
    return head


cdef inline bint cache_found(const CacheSlot* slot) noexcept nogil:
    """Whether cache_slot's slot holds the piece (else it is the empty slot where it belongs)."""
    return slot.entry != 0


cdef inline size_t cache_id_count(const PieceCache* cache, const CacheSlot* slot) noexcept nogil:
    """The number of ids of a full slot's piece."""
    return entry_head(cache_entry(cache, slot)).id_count


cdef inline const unsigned char* cache_ids(const PieceCache* cache, const CacheSlot* slot) noexcept nogil:
    """The ids of a full slot's piece: cache_id_count int32, unaligned (read them with memcpy)."""
    cdef const unsigned char* entry = cache_entry(cache, slot)
    return entry + sizeof(EntryHead) + entry_head(entry).piece_size


cdef inline CacheSlot* cache_slot(PieceCache* cache, const unsigned char* piece, Py_ssize_t size,
                                  uint64_t h) noexcept:
    """The slot holding piece, or the empty slot where it belongs."""
    cdef size_t mask = cache.slots.size() - 1
    cdef size_t i = h & mask
    cdef uint32_t tag = <uint32_t>(h >> 32)
    cdef CacheSlot* slot
    cdef const unsigned char* entry
    while True:
        slot = &cache.slots[i]
        if slot.entry == 0:
            return slot
        if slot.tag == tag:
            entry = cache_entry(cache, slot)
            if entry_head(entry).piece_size == size and same_bytes(entry + sizeof(EntryHead), piece, size):
                return slot
        i = (i + 1) & mask


cdef inline int cache_append_ids(PieceCache* cache, CacheSlot* slot, vector[int32_t]* out) except -1:
    """Append the ids of the (full) slot to out."""
    cdef size_t start = out.size(), count = cache_id_count(cache, slot)
    out.resize(start + count)
    memcpy(out.data() + start, cache_ids(cache, slot), count * sizeof(int32_t))
    return 0


cdef inline int cache_double_slots(PieceCache* cache) except -1:
    """Twice the slots, each entry placed again by its piece's hash (a slot keeps only half of it)."""
    cdef vector[CacheSlot] old
    old.swap(cache.slots)
    cache.slots.assign(2 * old.size(), CacheSlot(0, 0))
    cdef size_t mask = cache.slots.size() - 1, i
    cdef const unsigned char* entry
    for slot in old:
        if slot.entry != 0:
            entry = cache_entry(cache, &slot)
            i = hash_piece(entry + sizeof(EntryHead), entry_head(entry).piece_size) & mask
            while cache.slots[i].entry != 0:
                i = (i + 1) & mask
            cache.slots[i] = slot
    return 0


cdef inline int cache_store(PieceCache* cache, const unsigned char* piece, Py_ssize_t size,
                            uint64_t h, const int32_t* ids, size_t id_count) except -1:
    """Remember that piece encodes to ids[:id_count] (a piece of more ids than an entry counts
    is not remembered)."""
    if id_count > 0xffff:
        return 0
    cdef size_t id_bytes = id_count * sizeof(int32_t)
    cdef size_t offset = cache.arena.size(), entry_bytes = sizeof(EntryHead) + size + id_bytes
    if cache.count >= cache.capacity or offset + entry_bytes >= 0xffffffff:
        cache.count = 0
        cache.arena.clear()
        offset = 0
        cache.slots.assign(cache.slots.size(), CacheSlot(0, 0))
    elif 2 * (cache.count + 1) > cache.slots.size():
        cache_double_slots(cache)
    if offset + entry_bytes > cache.arena.capacity():
        # A quarter more at a time, not twice as the vector grows: the arena of a full GPT-2
        # cache is about 3.8 MB, which doubling had made 8 MiB of memory held.
        cache.arena.reserve(offset + entry_bytes + cache.arena.capacity() // 4)
    cache.arena.resize(offset + entry_bytes)
    cdef EntryHead head = EntryHead(<uint16_t>size, <uint16_t>id_count)
    cdef unsigned char* entry = cache.arena.data() + offset
    memcpy(entry, &head, sizeof(EntryHead))
    memcpy(entry + sizeof(EntryHead), piece, size)
    memcpy(entry + sizeof(EntryHead) + size, ids, id_bytes)
    cdef CacheSlot* slot = cache_slot(cache, piece, size, h)
    slot[0] = CacheSlot(<uint32_t>(h >> 32), <uint32_t>(offset + 1))
    cache.count += 1
    return 0
