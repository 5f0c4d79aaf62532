# distutils: language = c++
"""BPE merge loop: repeatedly merge the most frequent adjacent pair of symbols.

Words live in one array of positions threaded by prev/next links, so a merge rewrites only
the occurrences it touches; pair counts are updated from each occurrence's neighbours, an
index pair -> positions finds the occurrences, and a lazily invalidated max-heap picks the
next pair. The pure-Python twin is tokfx.reference.bpe_train.
"""
from libc.stdint cimport INT64_MAX, int32_t, int64_t, uint32_t, uint64_t
from libcpp.algorithm cimport sort
from libcpp.string cimport string
from libcpp.utility cimport move
from libcpp.vector cimport vector

cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil

cdef enum:
    # How many candidates ahead to prefetch: they are scattered over the whole position
    # array, and waiting for each one's cache line was half of the merge time on CJK text.
    PREFETCH_AHEAD = 8
    # The symbol of a position that was absorbed into its left neighbour.
    DEAD = -1
    # The link of a position at the start or end of its word.
    NONE = -1


# Everything a merge reads about one position, together: one cache line fetch, not four.
cdef struct Position:
    int32_t symbol
    int32_t prev
    int32_t next
    int32_t word


cdef struct PairSlot:
    uint64_t key
    int32_t pair


cdef struct HeapEntry:
    int64_t count
    int32_t left
    int32_t right


# Token ids are below 2**31, so no pair has this key.
cdef uint64_t EMPTY_SLOT = 0xFFFFFFFFFFFFFFFF


cdef inline uint64_t pair_key(int32_t left, int32_t right) noexcept nogil:
    return (<uint64_t><uint32_t>left << 32) | <uint32_t>right


cdef inline size_t slot_of(uint64_t key, int shift) noexcept nogil:
    # Fibonacci hashing: the top bits of key * 2**64/phi spread consecutive ids well.
    return <size_t>((key * <uint64_t>0x9E3779B97F4A7C15) >> shift)


cdef class _MergeLoop:
    # One entry per base symbol of every word; positions are int32 (checked in __init__).
    cdef vector[Position] positions
    cdef vector[int64_t] word_count

    # Pair key -> dense pair id, by open addressing with linear probing (std::unordered_map's
    # node per entry cost a fifth of the run time).
    cdef vector[PairSlot] slots
    cdef int slot_shift
    # Per dense pair id: its symbols, its count, positions where it may start (stale ones
    # included: they are re-checked when the pair is merged).
    cdef vector[int32_t] pair_left
    cdef vector[int32_t] pair_right
    cdef vector[int64_t] pair_count
    cdef vector[vector[int32_t]] pair_positions
    # Pairs whose count grew during the current merge, pushed once at its end.
    cdef vector[int32_t] grown
    cdef vector[int32_t] grown_stamp

    # Only pairs counted at least admit_at enter the heap, so the long tail of rare pairs
    # (most of them, in CJK text) is never pushed; the threshold falls when the heap empties.
    cdef vector[HeapEntry] heap
    cdef int64_t admit_at
    cdef vector[string] token_key
    cdef int32_t next_token

    def __init__(self, const int32_t[::1] symbols, const int64_t[::1] offsets,
                 const int64_t[::1] counts, list symbol_keys):
        cdef Py_ssize_t n_words = counts.shape[0]
        cdef Py_ssize_t n_symbols = symbols.shape[0]
        cdef int32_t alphabet_size = len(symbol_keys)
        cdef Py_ssize_t w, p
        cdef int64_t start, end
        if offsets.shape[0] != n_words + 1:
            raise ValueError(f"offsets has {offsets.shape[0]} entries, expected n_words + 1 = {n_words + 1}")
        if offsets[0] != 0 or offsets[n_words] != n_symbols:
            raise ValueError("offsets must start at 0 and end at len(symbols)")
        if n_symbols >= 2**31 - 1 or n_words >= 2**31:
            raise ValueError(f"{n_symbols} symbols, {n_words} words: positions and words are int32")
        for key in symbol_keys:
            self.token_key.push_back(key)
        self.next_token = alphabet_size
        self.admit_at = INT64_MAX

        self.positions.resize(n_symbols)
        self.word_count.resize(n_words)
        for w in range(n_words):
            start, end = offsets[w], offsets[w + 1]
            # Checked before any write: start is the previous word's end, already in range.
            if end < start or end > n_symbols:
                raise ValueError(f"offsets[{w + 1}] = {end} is outside [{start}, {n_symbols}]")
            if counts[w] < 1:
                raise ValueError(f"word {w} has count {counts[w]}; counts must be >= 1")
            self.word_count[w] = counts[w]
            for p in range(start, end):
                if not 0 <= symbols[p] < alphabet_size:
                    raise ValueError(f"symbol {symbols[p]} at {p} is outside the alphabet of {alphabet_size}")
                self.positions[p].symbol = symbols[p]
                self.positions[p].prev = p - 1 if p > start else NONE
                self.positions[p].next = p + 1 if p + 1 < end else NONE
                self.positions[p].word = w
        with nogil:
            self._resize_slots(1 << 16)
            self._count_initial_pairs()

    cdef void _count_initial_pairs(self) noexcept nogil:
        cdef int32_t p, pair
        for p in range(<int32_t>self.positions.size()):
            if self.positions[p].next != NONE:
                pair = self._pair(self.positions[p].symbol, self.positions[p + 1].symbol)
                self.pair_count[pair] += self.word_count[self.positions[p].word]
                self.pair_positions[pair].push_back(p)

    # ---- pair key -> dense pair id

    cdef void _resize_slots(self, size_t capacity) noexcept nogil:
        cdef PairSlot empty
        empty.key = EMPTY_SLOT
        empty.pair = -1
        self.slots.assign(capacity, empty)
        self.slot_shift = 64
        while capacity > 1:
            capacity >>= 1
            self.slot_shift -= 1
        cdef int32_t pair
        for pair in range(<int32_t>self.pair_left.size()):
            self.slots[self._find_slot(pair_key(self.pair_left[pair], self.pair_right[pair]))].pair = pair

    cdef size_t _find_slot(self, uint64_t key) noexcept nogil:
        """The slot holding key, or the empty slot where it belongs (claimed for key)."""
        cdef size_t mask = self.slots.size() - 1
        cdef size_t i = slot_of(key, self.slot_shift)
        while self.slots[i].key != key and self.slots[i].key != EMPTY_SLOT:
            i = (i + 1) & mask
        self.slots[i].key = key
        return i

    cdef int32_t _pair(self, int32_t left, int32_t right) noexcept nogil:
        """The dense id of (left, right), allocated on first sight."""
        cdef size_t slot = self._find_slot(pair_key(left, right))
        if self.slots[slot].pair >= 0:
            return self.slots[slot].pair
        cdef int32_t pair = <int32_t>self.pair_count.size()
        self.slots[slot].pair = pair
        self.pair_left.push_back(left)
        self.pair_right.push_back(right)
        self.pair_count.push_back(0)
        self.pair_positions.push_back(vector[int32_t]())
        self.grown_stamp.push_back(-1)
        if 2 * self.pair_count.size() > self.slots.size():
            self._resize_slots(2 * self.slots.size())
        return pair

    # ---- max-heap of (count, pair); ties toward the greater (key(left), key(right), left, right)

    cdef inline bint _ranks_above(self, const HeapEntry& a, const HeapEntry& b) noexcept nogil:
        if a.count != b.count:
            return a.count > b.count
        cdef int order = self.token_key[a.left].compare(self.token_key[b.left])
        if order == 0:
            order = self.token_key[a.right].compare(self.token_key[b.right])
        if order != 0:
            return order > 0
        if a.left != b.left:
            return a.left > b.left
        return a.right > b.right

    cdef void _push(self, int32_t pair) noexcept nogil:
        cdef HeapEntry entry
        entry.count = self.pair_count[pair]
        if entry.count < self.admit_at:
            return
        entry.left = self.pair_left[pair]
        entry.right = self.pair_right[pair]
        self.heap.push_back(entry)
        cdef size_t child = self.heap.size() - 1, parent
        while child > 0:
            parent = (child - 1) // 2
            if not self._ranks_above(entry, self.heap[parent]):
                break
            self.heap[child] = self.heap[parent]
            child = parent
        self.heap[child] = entry

    cdef HeapEntry _pop(self) noexcept nogil:
        cdef HeapEntry top = self.heap[0]
        cdef HeapEntry last = self.heap.back()
        self.heap.pop_back()
        cdef size_t n = self.heap.size(), hole = 0, child
        if n == 0:
            return top
        while True:
            child = 2 * hole + 1
            if child >= n:
                break
            if child + 1 < n and self._ranks_above(self.heap[child + 1], self.heap[child]):
                child += 1
            if not self._ranks_above(self.heap[child], last):
                break
            self.heap[hole] = self.heap[child]
            hole = child
        self.heap[hole] = last
        return top

    cdef bint _lower_admission(self) noexcept nogil:
        """Admit the pairs counted at least half the highest count; False when none is left.

        Called with an empty heap, so every pair is below the old threshold and none is lost.
        """
        cdef int64_t highest = 0
        cdef int32_t pair
        for pair in range(<int32_t>self.pair_count.size()):
            if self.pair_count[pair] > highest:
                highest = self.pair_count[pair]
        if highest == 0:
            return False
        self.admit_at = max(<int64_t>1, highest // 2)
        for pair in range(<int32_t>self.pair_count.size()):
            self._push(pair)
        return True

    cdef int32_t _best_pair(self) noexcept nogil:
        """Pop until an entry matches its pair's current count; -1 when no pair is left.

        Counts only grow through a push, so a stale entry is one whose pair has since shrunk:
        re-queue it at its current count if that is still admitted.
        """
        cdef HeapEntry entry
        cdef int32_t pair
        cdef int64_t current
        while True:
            if self.heap.empty() and not self._lower_admission():
                return -1
            entry = self._pop()
            pair = self._pair(entry.left, entry.right)
            current = self.pair_count[pair]
            if current == entry.count:
                return pair
            if current < entry.count:
                self._push(pair)

    # ---- one merge

    cdef inline void _add(self, int32_t left, int32_t right, int64_t delta, int32_t position) noexcept nogil:
        cdef int32_t pair = self._pair(left, right)
        self.pair_count[pair] += delta
        if delta > 0:
            self.pair_positions[pair].push_back(position)
            if self.grown_stamp[pair] != self.next_token:
                self.grown_stamp[pair] = self.next_token
                self.grown.push_back(pair)

    cdef void _merge(self, int32_t pair) noexcept nogil:
        """Rewrite every occurrence of `pair` into the next token, left to right in each word.

        A merged token keeps its left part's position, so positions stay in word order and
        sorting the candidates visits each word's occurrences left to right; that is what
        makes runs like `a a a` become `aa a`. Each occurrence changes the counts through its
        own neighbours only, one occurrence at a time, so they stay equal to a fresh
        overlapping recount.
        """
        cdef int32_t left = self.pair_left[pair], right = self.pair_right[pair]
        cdef int32_t merged = self.next_token
        cdef vector[int32_t] candidates = move(self.pair_positions[pair])
        self.pair_positions[pair].clear()
        self.pair_positions[pair].shrink_to_fit()
        sort(candidates.begin(), candidates.end())
        cdef int32_t p, q, before, after
        cdef size_t i, n_candidates = candidates.size()
        cdef int64_t weight
        cdef Position* at
        self.token_key.push_back(self.token_key[left] + self.token_key[right])
        for i in range(n_candidates):
            if i + PREFETCH_AHEAD < n_candidates:
                __builtin_prefetch(&self.positions[candidates[i + PREFETCH_AHEAD]])
            p = candidates[i]
            at = &self.positions[p]
            if at.symbol != left:
                continue
            q = at.next
            if q == NONE or self.positions[q].symbol != right:
                continue
            weight = self.word_count[at.word]
            before = at.prev
            after = self.positions[q].next
            self.pair_count[pair] -= weight
            if before != NONE:
                self._add(self.positions[before].symbol, left, -weight, before)
            if after != NONE:
                self._add(right, self.positions[after].symbol, -weight, q)
            at.symbol = merged
            at.next = after
            self.positions[q].symbol = DEAD
            if after != NONE:
                self.positions[after].prev = p
                self._add(merged, self.positions[after].symbol, weight, p)
            if before != NONE:
                self._add(self.positions[before].symbol, merged, weight, before)
        for p in self.grown:
            self._push(p)
        self.grown.clear()
        self.next_token += 1

    cdef int32_t run(self, int32_t n_merges, vector[int32_t]* out) noexcept nogil:
        """Do up to n_merges merges, appending (left, right) to out; return how many were done."""
        cdef int32_t done = 0, pair
        while done < n_merges:
            pair = self._best_pair()
            if pair < 0:
                break
            out.push_back(self.pair_left[pair])
            out.push_back(self.pair_right[pair])
            self._merge(pair)
            done += 1
        return done


def train_merges(symbols, offsets, counts, list symbol_keys, Py_ssize_t num_merges,
                 progress=None, Py_ssize_t progress_every=1000):
    """Learn up to `num_merges` BPE merges over words given as base-symbol ids.

    symbols: int32 buffer, every word's symbols concatenated; offsets: int64 buffer, word i is
    symbols[offsets[i]:offsets[i+1]]; counts: int64 buffer, each word's count (>= 1);
    symbol_keys: the sort key (bytes) of each base symbol. Merge i creates id len(symbol_keys)+i;
    the result is shorter than num_merges when no pair is left. Ties go to the greater
    (key(left), key(right)), then the greater (left, right). progress(done, num_merges) is called
    every progress_every merges and after the last one. Pair counts are int64 sums of counts.
    """
    if progress_every < 1:
        raise ValueError("progress_every must be >= 1")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
    if len(symbol_keys) + num_merges >= 2**31:
        raise ValueError("token ids are int32: len(symbol_keys) + num_merges must be below 2**31")
    cdef _MergeLoop loop = _MergeLoop(symbols, offsets, counts, symbol_keys)
    cdef vector[int32_t] flat
    cdef int32_t done = 0, chunk, got
    flat.reserve(2 * num_merges)
    while done < num_merges:
        chunk = <int32_t>min(num_merges - done, progress_every if progress is not None else num_merges)
        with nogil:
            got = loop.run(chunk, &flat)
        done += got
        if progress is not None:
            progress(done, num_merges)
        if got < chunk:
            break
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(done)]
