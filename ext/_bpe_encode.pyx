"""Byte-level BPE encoding: within each pre-token, start from the byte ids and repeatedly apply
the lowest-rank merge present, replacing its occurrences left to right without overlap.

Twin: tokfx.reference.bpe_encode (the tests run both on random merge tables and on GPT-2).
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.queue cimport priority_queue
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport pair
from libcpp.vector cimport vector

cdef enum:
    NO_RANK = 2147483647  # INT32_MAX: no merge for this pair
    # Pieces up to this many bytes use the plain O(n^2) rounds, which beat a heap on the short
    # pieces that dominate real text; longer ones (CJK runs, whitespace runs) use a heap.
    SHORT_PIECE = 24
    # Longer pieces rarely repeat; caching them would only fill the id pool.
    MAX_CACHED_PIECE = 256

ctypedef unordered_map[string, pair[uint32_t, uint32_t]] PieceCache


cdef inline uint64_t pair_key(int32_t left, int32_t right) noexcept nogil:
    return (<uint64_t>(<uint32_t>left) << 32) | <uint32_t>right


@cython.final
cdef class BPEEncoder:
    """Merges by rank, with a bounded cache piece bytes -> ids (cleared whole when full).

    Not thread-safe: the cache and scratch buffers are shared by all calls, which is also why
    the GIL is held throughout.
    """
    # pair_key(left, right) -> (rank, merged id); the first occurrence of a pair keeps its rank.
    cdef unordered_map[uint64_t, pair[int32_t, int32_t]] _ranks
    cdef int32_t _byte_ids[256]
    cdef size_t _cache_size
    # piece bytes -> (offset, count) in _cache_pool.
    cdef PieceCache _cache
    cdef vector[int32_t] _cache_pool
    cdef string _key
    cdef vector[int32_t] _symbols
    cdef vector[int32_t] _pair_ranks
    cdef vector[int32_t] _pair_merged
    cdef vector[int32_t] _next
    cdef vector[int32_t] _prev
    cdef vector[int32_t] _out
    # Python ints for every id, so building the result list only increfs.
    cdef list _id_objects

    def __init__(self, merges, byte_ids, cache_size=1 << 18):
        byte_ids = list(byte_ids)
        if len(byte_ids) != 256:
            raise ValueError(f"byte_ids must hold 256 ids, got {len(byte_ids)}")
        max_id = -1
        for b, token_id in enumerate(byte_ids):
            self._byte_ids[b] = _checked_id(token_id)
            max_id = max(max_id, token_id)
        self._ranks.clear()
        for rank, (left, right, merged) in enumerate(merges):
            for token_id in (left, right, merged):
                max_id = max(max_id, _checked_id(token_id))
            key = pair_key(left, right)
            if self._ranks.count(key) == 0:
                self._ranks[key] = pair[int32_t, int32_t](rank, merged)
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        self._cache_size = cache_size
        self._cache.clear()
        self._cache_pool.clear()
        self._id_objects = list(range(max_id + 1))

    def encode_piece(self, bytes piece):
        """The ids of one pre-token."""
        self._out.clear()
        self._encode_into_out(<const unsigned char*>PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece))
        return self._out_as_list()

    def encode_pieces(self, bytes data, const int64_t[::1] ends):
        """The concatenated ids of the pieces data[ends[k-1]:ends[k]] (ends exclusive, ascending,
        the last equal to len(data))."""
        cdef const unsigned char* text = <const unsigned char*>PyBytes_AS_STRING(data)
        cdef int64_t size = PyBytes_GET_SIZE(data)
        cdef int64_t start = 0, end
        cdef Py_ssize_t k
        self._out.clear()
        for k in range(ends.shape[0]):
            end = ends[k]
            if end < start or end > size:
                raise ValueError(f"ends[{k}] = {end} is not in [{start}, {size}]")
            self._encode_into_out(text + start, end - start)
            start = end
        if start != size:
            raise ValueError(f"the last end is {start}, not len(data) = {size}")
        return self._out_as_list()

    cdef int _encode_into_out(self, const unsigned char* piece, Py_ssize_t size) except -1:
        cdef Py_ssize_t i
        cdef pair[uint32_t, uint32_t] span
        cdef PieceCache.iterator found
        if size <= 1:
            if size == 1:
                self._out.push_back(self._byte_ids[piece[0]])
            return 0
        cdef bint cacheable = self._cache_size > 0 and size <= MAX_CACHED_PIECE
        if cacheable:
            self._key.assign(<const char*>piece, size)
            found = self._cache.find(self._key)
            if found != self._cache.end():
                span = deref(found).second
                for i in range(span.first, span.first + span.second):
                    self._out.push_back(self._cache_pool[i])
                return 0
        self._symbols.clear()
        for i in range(size):
            self._symbols.push_back(self._byte_ids[piece[i]])
        if size <= SHORT_PIECE:
            self._merge_in_rounds()
        else:
            self._merge_with_heap()
        for i in range(<Py_ssize_t>self._symbols.size()):
            self._out.push_back(self._symbols[i])
        if cacheable:
            if self._cache.size() >= self._cache_size:
                self._cache.clear()
                self._cache_pool.clear()
            span.first = self._cache_pool.size()
            span.second = self._symbols.size()
            for i in range(<Py_ssize_t>self._symbols.size()):
                self._cache_pool.push_back(self._symbols[i])
            self._cache[self._key] = span
        return 0

    cdef inline int32_t _rank_of(self, int32_t left, int32_t right, int32_t* merged) noexcept:
        cdef unordered_map[uint64_t, pair[int32_t, int32_t]].iterator found = \
            self._ranks.find(pair_key(left, right))
        if found == self._ranks.end():
            return NO_RANK
        merged[0] = deref(found).second.second
        return deref(found).second.first

    cdef void _merge_in_rounds(self) noexcept:
        """Each round finds the lowest rank among adjacent pairs and rewrites the symbols once."""
        cdef Py_ssize_t n = self._symbols.size(), i, write
        cdef int32_t best
        cdef int32_t* symbols = self._symbols.data()
        self._pair_ranks.resize(n)
        self._pair_merged.resize(n)
        cdef int32_t* ranks = self._pair_ranks.data()
        cdef int32_t* merged = self._pair_merged.data()
        while n > 1:
            best = NO_RANK
            for i in range(n - 1):
                ranks[i] = self._rank_of(symbols[i], symbols[i + 1], &merged[i])
                if ranks[i] < best:
                    best = ranks[i]
            if best == NO_RANK:
                break
            write = 0
            i = 0
            while i < n:
                if i < n - 1 and ranks[i] == best:
                    symbols[write] = merged[i]
                    i += 2
                else:
                    symbols[write] = symbols[i]
                    i += 1
                write += 1
            n = write
        self._symbols.resize(n)

    cdef void _merge_with_heap(self) except *:
        """O(n log n): a linked list of symbols and a min-heap of (rank, position) of their pairs.

        All heap entries of the lowest rank are taken as one batch and applied in position order,
        which is exactly one round of _merge_in_rounds; entries made stale by earlier merges are
        recognised because the pair at their position no longer has their rank.
        """
        cdef Py_ssize_t n = self._symbols.size(), i
        cdef int32_t* symbols = self._symbols.data()
        self._pair_ranks.resize(n)
        self._pair_merged.resize(n)
        self._next.resize(n)
        self._prev.resize(n)
        cdef int32_t* ranks = self._pair_ranks.data()
        cdef int32_t* merged = self._pair_merged.data()
        cdef int32_t* nxt = self._next.data()
        cdef int32_t* prv = self._prev.data()
        # ~(rank << 32 | position): std::priority_queue is a max-heap.
        cdef priority_queue[uint64_t] heap
        cdef vector[int32_t] batch
        cdef uint64_t rank
        cdef int32_t position, gone
        for i in range(n):
            nxt[i] = i + 1 if i + 1 < n else -1
            prv[i] = i - 1
            ranks[i] = NO_RANK
        for i in range(n - 1):
            self._push_pair(heap, i)
        while not heap.empty():
            rank = (~heap.top()) >> 32
            batch.clear()
            while not heap.empty() and (~heap.top()) >> 32 == rank:
                batch.push_back(<int32_t>((~heap.top()) & 0xffffffff))
                heap.pop()
            for position in batch:
                if symbols[position] < 0 or ranks[position] != <int32_t>rank:
                    continue
                gone = nxt[position]
                symbols[position] = merged[position]
                symbols[gone] = -1
                nxt[position] = nxt[gone]
                if nxt[gone] != -1:
                    prv[nxt[gone]] = position
                self._push_pair(heap, position)
                if prv[position] != -1:
                    self._push_pair(heap, prv[position])
        i = 0
        position = 0
        while position != -1:
            symbols[i] = symbols[position]
            i += 1
            position = nxt[position]
        self._symbols.resize(i)

    cdef inline void _push_pair(self, priority_queue[uint64_t]& heap, int32_t position) except *:
        """Record the rank of the pair starting at position and queue it if it can merge."""
        cdef int32_t following = self._next[position]
        if following == -1:
            self._pair_ranks[position] = NO_RANK
            return
        cdef int32_t rank = self._rank_of(self._symbols[position], self._symbols[following],
                                          &self._pair_merged[position])
        self._pair_ranks[position] = rank
        if rank != NO_RANK:
            heap.push(~((<uint64_t>rank << 32) | <uint32_t>position))

    cdef list _out_as_list(self):
        cdef Py_ssize_t i, n = self._out.size()
        cdef list result = PyList_New(n)
        cdef object token
        for i in range(n):
            token = <object>PyList_GET_ITEM(self._id_objects, self._out[i])
            Py_INCREF(token)
            PyList_SET_ITEM(result, i, token)
        return result


def _checked_id(token_id):
    if not 0 <= token_id < 2**31:
        raise ValueError(f"token id {token_id} is not in [0, 2**31)")
    return token_id
