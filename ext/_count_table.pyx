# distutils: language = c++
"""CountTable: a {bytes: count} table in native memory, what counting fills and training reads.

A Python dict of pre-tokens costs some 170 bytes per entry (the bytes object, its hash, the
dict's slot) and a Python call per occurrence; this table keeps one 32-byte entry per key (a
key of up to 8 bytes inside it, a longer one in one arena) and an open-addressing index of
4-byte slots, and counts a text's pieces without making a Python object per piece. Keys stay in order of first insertion, as a dict's.

It is what the pipeline's counting stages pass between them (pickled as three flat buffers),
and what `tokfx train FILES` counts into. Its twin is a dict: tests compare every operation
with the dict one; `tokfx.reference.count_table` is the twin of the hash that `split_packed` uses.
"""
from array import array
from collections.abc import Mapping
from itertools import accumulate

cimport cython
from cpython.array cimport array as c_array, clone
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItemWithError
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

from piece_end cimport PIECE_END_CAPSULE, PieceEnd, check_chunk_ends, chunk_piece_end

cdef extern from *:
    """
    #include <algorithm>
    #include <cstring>
    #include <functional>
    #include <vector>
    #if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    #error "CountTable reads keys as little-endian words: a big-endian machine would hash them differently"
    #endif
    // A key of at most INLINE_KEY bytes is held in `start` itself (its bytes, zero-padded);
    // a longer one is at arena + start.
    enum { INLINE_KEY = 8 };
    struct CountEntry { uint64_t hash; int64_t start; int64_t count; uint32_t length; };
    static inline const unsigned char* entry_key(const CountEntry& entry, const unsigned char* arena) {
        return entry.length <= INLINE_KEY ? (const unsigned char*) &entry.start : arena + entry.start;
    }
    // Byte order of the keys, then the shorter first: Python's order of bytes.
    struct KeyBefore {
        const unsigned char* keys;
        const std::vector<CountEntry>* entries;
        bool operator()(uint32_t a, uint32_t b) const {
            const CountEntry& x = (*entries)[a];
            const CountEntry& y = (*entries)[b];
            size_t n = x.length < y.length ? x.length : y.length;
            int order = n ? std::memcmp(entry_key(x, keys), entry_key(y, keys), n) : 0;
            if (order != 0) return order < 0;
            return x.length < y.length;
        }
    };
    // Sorted by key: on the keys' first 8 bytes as one big-endian number (zero-padded, which
    // orders as the bytes do), the whole keys compared only where those are equal; comparing
    // through the entries cost a cache miss or two per comparison.
    struct Prefixed { uint64_t prefix; uint32_t index; };
    static std::vector<Prefixed> prefixed(const std::vector<uint32_t>& order, const KeyBefore& full) {
        std::vector<Prefixed> items(order.size());
        for (size_t i = 0; i < order.size(); i++) {
            const CountEntry& entry = (*full.entries)[order[i]];
            const unsigned char* key = entry_key(entry, full.keys);
            uint64_t prefix = 0;
            for (uint32_t k = 0; k < 8; k++)
                prefix = (prefix << 8) | (k < entry.length ? key[k] : 0);
            items[i].prefix = prefix;
            items[i].index = order[i];
        }
        return items;
    }
    struct PrefixedBefore {
        const KeyBefore* full;
        bool operator()(const Prefixed& a, const Prefixed& b) const {
            if (a.prefix != b.prefix) return a.prefix < b.prefix;
            return (*full)(a.index, b.index);
        }
    };
    // By the prefixes first, a byte at a time from the last (a stable radix sort, which skips
    // a byte that every prefix has the same), then each run of equal prefixes by whole keys:
    // std::sort by (prefix, key) took 0.15 s for the million keys a 1 GB run trains on.
    // Returns an i > 0 where order[i - 1] and order[i] hold the same key, else 0: two equal
    // keys share a prefix, so only the runs need looking at (checking every neighbour after
    // the sort cost the reducer's join 0.055 s).
    static size_t sort_by_key(std::vector<uint32_t>& order, const KeyBefore& full) {
        std::vector<Prefixed> items = prefixed(order, full), spare(items.size());
        const size_t n = items.size();
        std::vector<size_t> counts(8 * 256, 0);
        for (const Prefixed& item : items)
            for (int b = 0; b < 8; b++) counts[256 * b + ((item.prefix >> (8 * b)) & 255)]++;
        for (int b = 0; b < 8; b++) {
            size_t* count = counts.data() + 256 * b;
            if (count[(items.empty() ? 0 : items[0].prefix >> (8 * b)) & 255] == n) continue;
            size_t at = 0;
            for (int v = 0; v < 256; v++) { size_t c = count[v]; count[v] = at; at += c; }
            for (const Prefixed& item : items) spare[count[(item.prefix >> (8 * b)) & 255]++] = item;
            items.swap(spare);
        }
        size_t same = 0;
        for (size_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && items[j].prefix == items[i].prefix; j++) {}
            if (j - i < 2) continue;
            std::sort(items.begin() + i, items.begin() + j, PrefixedBefore{&full});
            for (size_t k = i + 1; k < j && !same; k++)
                if (!full(items[k - 1].index, items[k].index)) same = k;
        }
        for (size_t i = 0; i < n; i++) order[i] = items[i].index;
        return same;
    }
    // The first `k` of `order` sorted by key (k <= its size), in no particular order.
    static void smallest_by_key(std::vector<uint32_t>& order, size_t k, const KeyBefore& full) {
        std::vector<Prefixed> items = prefixed(order, full);
        std::nth_element(items.begin(), items.begin() + k, items.end(), PrefixedBefore{&full});
        order.resize(k);
        for (size_t i = 0; i < k; i++) order[i] = items[i].index;
    }
    // CountTable.most_frequent: the indices of the k most frequent entries (ties to the smaller
    // key), in table order. The k-th count is found among the counts alone; the smallest keys
    // of the entries tied at it are picked by nth_element (a partial sort of all entries by
    // (count, key) took 1.5 s for 2.4 million; a sort of the tied ones, 380,000 at the 2^20 cut
    // of a 1 GB run, cost the reducer's join 0.15 s more).
    static void most_frequent_order(std::vector<uint32_t>& order, size_t k, const KeyBefore& full) {
        const std::vector<CountEntry>& entries = *full.entries;
        std::vector<int64_t> counts(entries.size());
        for (size_t e = 0; e < entries.size(); e++) counts[e] = entries[e].count;
        std::nth_element(counts.begin(), counts.begin() + (k - 1), counts.end(), std::greater<int64_t>());
        int64_t cut = counts[k - 1];
        std::vector<int64_t>().swap(counts);
        std::vector<uint32_t> kept, tied;
        for (size_t e = 0; e < entries.size(); e++) {
            if (entries[e].count > cut) kept.push_back((uint32_t) e);
            else if (entries[e].count == cut) tied.push_back((uint32_t) e);
        }
        smallest_by_key(tied, k - kept.size(), full);
        kept.insert(kept.end(), tied.begin(), tied.end());
        std::sort(kept.begin(), kept.end());
        order.swap(kept);
    }
    """
    enum:
        INLINE_KEY
    struct CountEntry:
        uint64_t hash
        int64_t start  # of the key in the arena, or the key itself (entry_key)
        int64_t count
        uint32_t length
    const unsigned char* entry_key(const CountEntry& entry, const unsigned char* arena) noexcept nogil
    struct KeyBefore:
        const unsigned char* keys
        const vector[CountEntry]* entries
    size_t sort_by_key(vector[uint32_t]& order, const KeyBefore& full) noexcept nogil
    void most_frequent_order(vector[uint32_t]& order, size_t k, const KeyBefore& full) noexcept nogil

cdef extern from *:
    """
    #define count_table_prefetch(address) __builtin_prefetch(address)
    """
    void prefetch "count_table_prefetch"(const void* address) noexcept nogil

cdef enum:
    FIRST_SLOTS = 64
    # add_pretokens hashes a piece this many pieces before adding it, and update looks this
    # many entries ahead: a key's slot is fetched then, its entry half-way (once the slot is
    # there). Each lookup waited for two cache misses in turn: in a worker, reading JSON between
    # two batches evicts the table (2^18 keys: 10 MB); the joins and sums of count files fill
    # tables of millions of keys (bench/README.md, "Counting in one native pass").
    AHEAD = 16

ctypedef struct Pending:  # a key hashed, waiting to be added
    const unsigned char* key
    size_t length
    uint64_t hash
    uint64_t word
    int64_t count

ctypedef struct Ahead:  # the keys of one add_* call hashed AHEAD keys before they are added
    Pending ring[AHEAD]
    size_t hashed
    size_t added

# Entry indices are uint32 slots (index + 1; 0 marks an empty slot).
cdef size_t MAX_ENTRIES = 0xFFFFFFFEULL


cdef inline uint64_t short_word(const unsigned char* key, size_t length, const unsigned char* end) noexcept nogil:
    """A key of at most 8 bytes as a little-endian word, zero-padded (also how an entry holds
    it): one load and a mask where the buffer holds 8 bytes from `key` on."""
    cdef uint64_t word = 0
    if key + 8 <= end:
        memcpy(&word, key, 8)
        return word & ((1ULL << (8 * length)) - 1) if length < 8 else word
    while length:
        length -= 1
        word = (word << 8) | key[length]
    return word


cdef inline uint64_t finish_hash(uint64_t h, uint64_t word, size_t tail) noexcept nogil:
    """The last word (`tail` bytes of it, 0 to 8) mixed in, then MurmurHash3's fmix64."""
    if tail:
        h = (h ^ word) * 0xBF58476D1CE4E5B9ULL
        if tail == 8:
            h ^= h >> 31
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 33
    return h


cdef inline uint64_t key_hash(const unsigned char* key, size_t length, uint64_t word) noexcept nogil:
    """Multiply-xorshift over little-endian 8-byte words, the last one maybe shorter, finished
    with fmix64 (twin: tokfx.reference.count_table.key_hash). `word`: the key's short_word
    when it has at most 8 bytes (unread otherwise). Fixed, unlike Python's hash: `split_packed` must
    send a key to the same part on every worker."""
    cdef uint64_t h = <uint64_t> length * 0x9E3779B97F4A7C15ULL
    cdef const unsigned char* end = key + length
    if length <= 8:
        return finish_hash(h, word, length)
    while length > 8:
        memcpy(&word, key, 8)
        h = (h ^ word) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
        key += 8
        length -= 8
    return finish_hash(h, short_word(key, length, end), length)


cdef inline const unsigned char* bytes_data(bytes data):
    return <const unsigned char*> PyBytes_AS_STRING(data)


@cython.final  # no subclass: its cdef methods are called directly, and inlined
cdef class CountTable:
    """{key bytes: count >= 1}, in order of first insertion. A Mapping (read-only through the
    mapping interface; `add`, `add_pieces` and `update` add counts)."""
    cdef vector[unsigned char] arena
    cdef vector[CountEntry] entries
    cdef vector[uint32_t] slots
    cdef size_t mask

    def __cinit__(self, counts=None):
        self.slots.assign(FIRST_SLOTS, 0)
        self.mask = FIRST_SLOTS - 1

    def __init__(self, counts=None):
        """An empty table, or one holding `counts` (a CountTable or a {bytes: int} mapping)."""
        if counts is not None:
            self.update(counts)

    # ---- the native core

    cdef inline const unsigned char* key_of(self, const CountEntry& entry) noexcept nogil:
        return entry_key(entry, self.arena.data())

    cdef void _grow(self) noexcept nogil:
        self._place_all(2 * self.slots.size())

    cdef void _place_all(self, size_t size) noexcept nogil:
        """Place every entry in `size` new slots (a power of two, at least twice the entries)."""
        cdef size_t i, e
        self.slots.assign(size, 0)
        self.mask = size - 1
        for e in range(self.entries.size()):
            i = self.entries[e].hash & self.mask
            while self.slots[i]:
                i = (i + 1) & self.mask
            self.slots[i] = <uint32_t> (e + 1)

    cdef Py_ssize_t _find(self, const unsigned char* key, size_t length, uint64_t h, uint64_t word) noexcept nogil:
        """The index of the key's entry, or -1 - the empty slot where it belongs. `word`: the
        key's short_word if it has at most INLINE_KEY bytes."""
        cdef size_t i = h & self.mask
        cdef const CountEntry* entry
        while self.slots[i]:
            entry = &self.entries[self.slots[i] - 1]
            if entry.hash == h and entry.length == length:
                # A short key is compared as one word, without a trip to the arena.
                if <uint64_t> entry.start == word if length <= INLINE_KEY else \
                        memcmp(self.arena.data() + entry.start, key, length) == 0:
                    return self.slots[i] - 1
            i = (i + 1) & self.mask
        return -1 - <Py_ssize_t> i

    cdef inline void _fetch_slot(self, uint64_t h) noexcept nogil:
        """Start fetching the first slot of a key hashed `h`, to be looked up AHEAD keys later."""
        prefetch(self.slots.data() + (h & self.mask))

    cdef inline void _fetch_entry(self, uint64_t h) noexcept nogil:
        """Start fetching the entry that the key's first slot (fetched AHEAD // 2 keys ago) names:
        where its lookup ends unless the key is new or collided. A stale slot (the table grew
        since) only fetches an entry for nothing."""
        cdef uint32_t slot = self.slots[h & self.mask]
        prefetch(self.entries.data() + (slot - 1 if slot else 0))

    cdef int _add_key(self, const unsigned char* key, size_t length, const unsigned char* end,
                      int64_t count) except -1 nogil:
        """Add `count` to the key at `key` (its buffer ends at `end`)."""
        cdef uint64_t word = short_word(key, length, end) if length <= INLINE_KEY else 0
        return self._add(key, length, key_hash(key, length, word), word, count)

    cdef int _add(self, const unsigned char* key, size_t length, uint64_t h, uint64_t word,
                  int64_t count) except -1 nogil:
        cdef Py_ssize_t found = self._find(key, length, h, word)
        cdef CountEntry entry
        if found >= 0:
            self.entries[found].count += count
            return 0
        if self.entries.size() >= MAX_ENTRIES or length > 0xFFFFFFFFULL:
            with gil:
                raise OverflowError(f"a count table holds at most {MAX_ENTRIES:,} keys of at most 4 GiB")
        entry.hash, entry.start, entry.count, entry.length = h, <int64_t> word, count, <uint32_t> length
        if length > INLINE_KEY:
            entry.start = self.arena.size()
            self.arena.resize(entry.start + length)
            memcpy(self.arena.data() + entry.start, key, length)
        self.entries.push_back(entry)
        self.slots[-1 - found] = <uint32_t> self.entries.size()
        if 2 * self.entries.size() > self.slots.size():  # load <= 1/2 keeps probes short
            self._grow()
        return 0

    cdef void _append_new(self, bytes keys, const int64_t[::1] ends, const int64_t[::1] counts) noexcept:
        """Append the entries of `packed`'s three buffers (checked: check_packed) as new keys,
        without looking them up or placing them in the slots: only for join_disjoint's table,
        which never leaves it."""
        cdef const unsigned char* s = bytes_data(keys)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(keys), i, start = 0
        cdef CountEntry entry
        cdef size_t length
        with nogil:
            for i in range(ends.shape[0]):
                length = ends[i] - start
                entry.length, entry.count = <uint32_t> length, counts[i]
                entry.start = <int64_t> (short_word(s + start, length, s + n) if length <= INLINE_KEY else 0)
                entry.hash = key_hash(s + start, length, <uint64_t> entry.start)
                if length > INLINE_KEY:
                    entry.start = self.arena.size()
                    self.arena.insert(self.arena.end(), s + start, s + ends[i])
                self.entries.push_back(entry)
                start = ends[i]

    cdef int _add_entry_of(self, CountTable other, size_t e) except -1 nogil:
        cdef const CountEntry* entry = &other.entries[e]
        return self._add(other.key_of(entry[0]), entry.length, entry.hash, <uint64_t> entry.start, entry.count)

    cdef CountTable _subset(self, const vector[uint32_t]& order):
        """A new table of the entries at `order` (distinct), in that order: copied, not looked up."""
        cdef CountTable out = CountTable()
        cdef size_t e, key_bytes = 0, slots = FIRST_SLOTS
        cdef CountEntry entry
        with nogil:
            for e in range(order.size()):
                if self.entries[order[e]].length > INLINE_KEY:
                    key_bytes += self.entries[order[e]].length
            out.arena.resize(key_bytes)
            out.entries.resize(order.size())
            key_bytes = 0
            for e in range(order.size()):
                entry = self.entries[order[e]]
                if entry.length > INLINE_KEY:
                    memcpy(out.arena.data() + key_bytes, self.arena.data() + entry.start, entry.length)
                    entry.start = key_bytes
                    key_bytes += entry.length
                out.entries[e] = entry
            while slots < 2 * order.size():
                slots <<= 1
            out._place_all(slots)
        return out

    def reserve(self, size_t keys):
        """Room for `keys` keys without growing."""
        if keys > MAX_ENTRIES:
            raise OverflowError(f"a count table holds at most {MAX_ENTRIES:,} keys")
        cdef size_t slots = self.slots.size()
        self.entries.reserve(keys)
        while slots < 2 * keys:
            slots <<= 1
        if slots != self.slots.size():
            self._place_all(slots)

    # ---- adding counts

    def add(self, bytes key not None, int64_t count=1):
        """Add `count` (>= 1) occurrences of `key`."""
        if count < 1:
            raise ValueError(f"counts must be >= 1, got {count}")
        cdef Py_ssize_t n = PyBytes_GET_SIZE(key)
        self._add_key(bytes_data(key), n, bytes_data(key) + n, count)

    def add_pieces(self, bytes data not None, const int64_t[::1] ends not None):
        """Add one occurrence of each piece data[ends[i-1]:ends[i]] (from 0); `ends` increasing,
        the last at most len(data)."""
        cdef const unsigned char* s = bytes_data(data)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data), i, start = 0, end
        for i in range(ends.shape[0]):
            if not start <= ends[i] <= n:
                raise ValueError(f"piece end {ends[i]} at {i} is outside [{start}, {n}]")
            start = ends[i]
        cdef Ahead ahead
        ahead.hashed = ahead.added = 0
        start = 0
        with nogil:
            for i in range(ends.shape[0]):
                end = ends[i]
                self._add_ahead(&ahead, s + start, end - start, s + n, 1)
                start = end
            self._add_waiting(&ahead)

    def add_packed(self, bytes keys not None, const int64_t[::1] ends not None, const int64_t[::1] counts not None):
        """Add the counts of `packed`'s three buffers (keys concatenated, their end offsets, their
        counts >= 1), without a table of them in between: what summing count files does."""
        check_packed(keys, ends, counts)
        cdef const unsigned char* s = bytes_data(keys)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(keys), i, start = 0
        cdef Ahead ahead
        ahead.hashed = ahead.added = 0
        with nogil:
            for i in range(ends.shape[0]):
                self._add_ahead(&ahead, s + start, ends[i] - start, s + n, counts[i])
                start = ends[i]
            self._add_waiting(&ahead)

    def add_pretokens(self, bytes data not None, matcher not None, const int64_t[::1] chunk_ends not None):
        """Add one occurrence of each piece that `matcher` (tokfx._pretokenize.matcher) finds in
        the chunks data[:e0], data[e0:e1], ... of `chunk_ends` (increasing, the last len(data)),
        each chunk split alone: add_pieces(data, piece_ends(data, name, chunk_ends)) without the
        array of ends in between, and with the table's memory fetched ahead of each lookup
        (bench/README.md, "Counting in one native pass")."""
        cdef PieceEnd piece_end = <PieceEnd> PyCapsule_GetPointer(matcher, PIECE_END_CAPSULE)
        cdef const unsigned char* s = bytes_data(data)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data), c, p = 0, start = 0, end, piece
        cdef Ahead ahead
        ahead.hashed = ahead.added = 0
        check_chunk_ends(chunk_ends, n)
        with nogil:
            for c in range(chunk_ends.shape[0]):
                end = chunk_ends[c]
                while p < end:
                    piece = chunk_piece_end(piece_end, s, start, end, p)
                    self._add_ahead(&ahead, s + p, piece - p, s + n, 1)
                    p = piece
                start = end
            self._add_waiting(&ahead)

    cdef inline int _add_ahead(self, Ahead* ahead, const unsigned char* key, size_t length,
                               const unsigned char* end, int64_t count) except -1 nogil:
        """Add `count` to the key at `key` (its buffer ends at `end`) once AHEAD more keys have
        come: it is hashed now and its slot fetched, its entry half-way (_add_waiting adds the
        last ones)."""
        cdef Pending* pending
        if ahead.hashed - ahead.added == AHEAD:
            self._add_pending(&ahead.ring[ahead.added % AHEAD])
            ahead.added += 1
        pending = &ahead.ring[ahead.hashed % AHEAD]
        pending.key, pending.length, pending.count = key, length, count
        pending.word = short_word(key, length, end) if length <= INLINE_KEY else 0
        pending.hash = key_hash(key, length, pending.word)
        self._fetch_slot(pending.hash)
        ahead.hashed += 1
        if ahead.hashed - ahead.added > AHEAD // 2:
            self._fetch_entry(ahead.ring[(ahead.hashed - 1 - AHEAD // 2) % AHEAD].hash)
        return 0

    cdef inline int _add_waiting(self, Ahead* ahead) except -1 nogil:
        while ahead.added < ahead.hashed:
            self._add_pending(&ahead.ring[ahead.added % AHEAD])
            ahead.added += 1
        return 0

    cdef inline int _add_pending(self, const Pending* pending) except -1 nogil:
        return self._add(pending.key, pending.length, pending.hash, pending.word, pending.count)

    def update(self, other):
        """Add the counts of another CountTable or of a {bytes: int} mapping."""
        cdef CountTable table
        cdef size_t e
        if isinstance(other, CountTable):
            table = other
            with nogil:
                for e in range(table.entries.size()):
                    if e + AHEAD < table.entries.size():
                        self._fetch_slot(table.entries[e + AHEAD].hash)
                    if e + AHEAD // 2 < table.entries.size():
                        self._fetch_entry(table.entries[e + AHEAD // 2].hash)
                    self._add_entry_of(table, e)
        else:
            for key, count in other.items():
                self.add(key, count)

    # ---- the mapping interface

    def __len__(self):
        return self.entries.size()

    cdef Py_ssize_t _index(self, key) except -2:
        if not isinstance(key, bytes):
            return -1
        cdef const unsigned char* k = bytes_data(key)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(key)
        cdef uint64_t word = short_word(k, n, k + n) if n <= INLINE_KEY else 0
        cdef Py_ssize_t found = self._find(k, n, key_hash(k, n, word), word)
        return found if found >= 0 else -1

    def __getitem__(self, key):
        cdef Py_ssize_t e = self._index(key)
        if e < 0:
            raise KeyError(key)
        return self.entries[e].count

    def get(self, key, default=None):
        cdef Py_ssize_t e = self._index(key)
        return default if e < 0 else self.entries[e].count

    def __contains__(self, key):
        return self._index(key) >= 0

    cdef bytes _key(self, size_t e):
        return PyBytes_FromStringAndSize(<const char*> self.key_of(self.entries[e]), self.entries[e].length)

    def keys(self):
        """The keys in table order, as a list."""
        return [self._key(e) for e in range(self.entries.size())]

    def values(self):
        return [self.entries[e].count for e in range(self.entries.size())]

    def items(self):
        return [(self._key(e), self.entries[e].count) for e in range(self.entries.size())]

    def __iter__(self):
        return iter(self.keys())

    def __eq__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(other) != len(self):
            return False
        for key, count in other.items():
            if self.get(key) != count:
                return False
        return True

    def __repr__(self):
        return f"CountTable({len(self):,} keys, {self.total():,} occurrences)"

    def total(self):
        """The sum of the counts."""
        cdef int64_t total = 0
        cdef size_t e
        for e in range(self.entries.size()):
            total += self.entries[e].count
        return total

    def to_dict(self):
        """A dict with the same items in the same order."""
        return dict(self.items())

    def add_to_dict(self, counts not None):
        """Add every count into `counts` (a dict, or a dict subclass such as Counter, of bytes ->
        int); new keys go in in table order."""
        if not isinstance(counts, dict):
            raise TypeError(f"counts must be a dict of bytes -> int, not {type(counts).__name__}")
        cdef size_t e
        cdef PyObject* known
        cdef bint was_empty = not counts  # then no key is there to look up
        for e in range(self.entries.size()):
            key = self._key(e)
            known = NULL
            if not was_empty:
                known = PyDict_GetItemWithError(counts, key)
            counts[key] = self.entries[e].count if known == NULL else <object> known + self.entries[e].count

    # ---- tables made from this one

    def split_packed(self, int parts):
        """`parts` parts, key k in part key_hash(k) % parts: disjoint, the same part for a key
        whatever table it is in; each in this table's order, as `packed` gives it: what a count
        file holds, without a table of each part in between (whose slots took a counting flush
        twice as long as writing)."""
        if parts < 1:
            raise ValueError(f"parts must be >= 1, got {parts}")
        cdef vector[vector[uint32_t]] orders
        cdef size_t e
        orders.resize(parts)
        for e in range(self.entries.size()):
            orders[self.entries[e].hash % <uint64_t> parts].push_back(<uint32_t> e)
        return [self._packed_of(orders[p]) for p in range(parts)]

    def at_least(self, int64_t min_count):
        """The entries counted at least `min_count` times, in table order."""
        cdef vector[uint32_t] order
        cdef size_t e
        for e in range(self.entries.size()):
            if self.entries[e].count >= min_count:
                order.push_back(<uint32_t> e)
        return self if order.size() == self.entries.size() else self._subset(order)

    def most_frequent(self, Py_ssize_t n):
        """The `n` most frequent entries, ties to the smaller key (so the cut is stable), in
        table order; the table itself when it holds no more than `n`."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        if <size_t> n >= self.entries.size():
            return self
        cdef vector[uint32_t] order
        cdef KeyBefore rule
        rule.keys = self.arena.data()
        rule.entries = &self.entries
        if n:
            with nogil:
                most_frequent_order(order, n, rule)
        return self._subset(order)

    def sort(self):
        """Reorder the entries by key (Python's order of bytes), in place."""
        cdef vector[uint32_t] order = self._order()
        cdef KeyBefore rule
        rule.keys = self.arena.data()
        rule.entries = &self.entries
        cdef CountTable sorted_table
        with nogil:
            sort_by_key(order, rule)
        sorted_table = self._subset(order)
        order.clear()
        order.shrink_to_fit()
        self.arena.swap(sorted_table.arena)
        self.entries.swap(sorted_table.entries)
        self.slots.swap(sorted_table.slots)
        self.mask = sorted_table.mask

    cdef vector[uint32_t] _order(self):
        cdef vector[uint32_t] order
        cdef size_t e
        order.resize(self.entries.size())
        for e in range(self.entries.size()):
            order[e] = <uint32_t> e
        return order

    # ---- flat buffers

    def packed(self):
        """(keys concatenated, their end offsets as array('q'), counts as array('q')), in table
        order: what the trainers map to symbols, and what a pickle holds."""
        return self._packed_of(self._order())

    cdef tuple _packed_of(self, const vector[uint32_t]& order):
        """packed() of the entries at `order`, in that order."""
        cdef size_t n = order.size(), i, key_bytes = 0
        for i in range(n):
            key_bytes += self.entries[order[i]].length
        cdef c_array ends = clone(array("q"), n, False)
        cdef c_array counts = clone(array("q"), n, False)
        cdef bytes blob = PyBytes_FromStringAndSize(NULL, key_bytes)
        cdef unsigned char* out = <unsigned char*> PyBytes_AS_STRING(blob)
        cdef int64_t end = 0
        cdef const CountEntry* entry
        with nogil:
            for i in range(n):
                entry = &self.entries[order[i]]
                if entry.length:
                    memcpy(out + end, self.key_of(entry[0]), entry.length)
                end += entry.length
                ends.data.as_longlongs[i] = end
                counts.data.as_longlongs[i] = entry.count
        return blob, ends, counts

    @staticmethod
    def from_packed(bytes keys not None, const int64_t[::1] ends not None, const int64_t[::1] counts not None):
        """The table `packed` gave (counts of repeated keys add up)."""
        cdef CountTable table = CountTable()
        table.entries.reserve(ends.shape[0])
        table.add_packed(keys, ends, counts)
        return table

    def __reduce__(self):
        keys, ends, counts = self.packed()
        return _unpickle, (keys, ends.tobytes(), counts.tobytes())


def join_disjoint(parts, keep=None):
    """The table of `parts`, an iterable of `packed` triples no two of which hold the same key,
    in key order, holding only the `keep` most frequent entries (ties to the smaller key) unless
    `keep` is None: what the training reducer makes of the counting pass's summed parts
    (beam_jobs.count.Counted). The keys are only appended as they come, the kept ones placed
    once: adding them to a table looked up and placed all 2.4 million keys of a 1 GB run
    (bench/README.md, "The reducer's join"). A key in two parts is an error where both are kept."""
    if keep is not None and keep < 0:
        raise ValueError(f"keep must be None or >= 0, got {keep}")
    cdef CountTable gathered = CountTable()
    cdef vector[uint32_t] order
    cdef KeyBefore rule
    cdef size_t same, kept = 0 if keep is None else keep
    for keys, ends, counts in parts:
        check_packed(keys, ends, counts)
        if gathered.entries.size() + len(ends) > MAX_ENTRIES:
            raise OverflowError(f"a count table holds at most {MAX_ENTRIES:,} keys")
        gathered._append_new(keys, ends, counts)
    rule.keys = gathered.arena.data()
    rule.entries = &gathered.entries
    if keep is None or kept >= gathered.entries.size():
        order = gathered._order()
    elif kept:
        with nogil:
            most_frequent_order(order, kept, rule)
    with nogil:
        same = sort_by_key(order, rule)
    if same:
        raise ValueError(f"key {gathered._key(order[same])!r} is in two of the parts joined")
    return gathered._subset(order)


cdef int check_packed(bytes keys, const int64_t[::1] ends, const int64_t[::1] counts) except -1:
    """`packed`'s three buffers agree: as many ends as counts, the ends increasing to the keys'
    length, every count >= 1."""
    if ends.shape[0] != counts.shape[0]:
        raise ValueError(f"{ends.shape[0]} ends but {counts.shape[0]} counts")
    cdef Py_ssize_t n = PyBytes_GET_SIZE(keys), i, start = 0
    for i in range(ends.shape[0]):
        if not start <= ends[i] <= n or counts[i] < 1:
            raise ValueError(f"entry {i}: end {ends[i]} outside [{start}, {n}] or count {counts[i]} < 1")
        if ends[i] - start > 0xFFFFFFFF:
            raise OverflowError(f"entry {i}: a key of {ends[i] - start:,} bytes (a count table's are at most 4 GiB)")
        start = ends[i]
    if start != n:
        raise ValueError(f"the keys hold {n} bytes, the ends cover {start}")
    return 0


def _unpickle(bytes keys, bytes ends, bytes counts):
    return CountTable.from_packed(keys, memoryview(ends).cast("q"), memoryview(counts).cast("q"))


def count_pieces(counts, bytes data not None, const int64_t[::1] ends not None):
    """Add one occurrence of each piece data[ends[i-1]:ends[i]] into `counts`: a CountTable, or
    a dict (or dict subclass, such as Counter) of bytes -> int, whose new keys go in in order of
    first occurrence."""
    if isinstance(counts, CountTable):
        counts.add_pieces(data, ends)
    elif isinstance(counts, dict):
        distinct = CountTable()
        distinct.add_pieces(data, ends)
        distinct.add_to_dict(counts)
    else:
        raise TypeError(f"counts must be a CountTable or a dict of bytes -> int, not {type(counts).__name__}")


def packed_counts(counts):
    """(keys concatenated, their end offsets as array('q'), counts as array('q')) of a CountTable
    or of any {bytes: int} mapping, in its order: what the trainers map to symbols."""
    if isinstance(counts, CountTable):
        return counts.packed()
    keys = list(counts.keys())  # a mapping's keys and values iterate in the same order
    return b"".join(keys), array("q", accumulate(map(len, keys))), array("q", counts.values())


Mapping.register(CountTable)
