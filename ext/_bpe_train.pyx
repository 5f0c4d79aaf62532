# distutils: language = c++
"""BPE merge loop: repeatedly merge the most frequent adjacent pair of symbols.

Words live in one array of symbols threaded by prev/next links, so a merge rewrites only the
occurrences it touches; pair counts are updated from each occurrence's neighbours, an index
pair -> positions finds the occurrences, and a lazily invalidated max-heap picks the next pair.
The pure-Python twin is tokfx.reference.bpe_train.
"""
from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.algorithm cimport sort
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.utility cimport move
from libcpp.vector cimport vector

cdef enum:
    # The symbol of a position that was absorbed into its left neighbour.
    DEAD = -1
    # The link of a position at the start or end of its word.
    NONE = -1


cdef struct HeapEntry:
    int64_t count
    int32_t left
    int32_t right


cdef inline uint64_t pair_key(int32_t left, int32_t right) noexcept nogil:
    return (<uint64_t><uint32_t>left << 32) | <uint32_t>right


cdef class _MergeLoop:
    # One slot per base symbol of every word; positions are int32 (checked in __init__).
    cdef vector[int32_t] symbol
    cdef vector[int32_t] prev
    cdef vector[int32_t] next
    cdef vector[int32_t] word_of
    cdef vector[int64_t] word_count

    # Per pair, by a dense pair id: its symbols, its count, positions where it may start.
    cdef unordered_map[uint64_t, int32_t] pair_id
    cdef vector[int32_t] pair_left
    cdef vector[int32_t] pair_right
    cdef vector[int64_t] pair_count
    cdef vector[vector[int32_t]] pair_positions
    # Pairs whose count grew during the current merge (pushed once at its end).
    cdef vector[int32_t] grown
    cdef vector[int32_t] grown_stamp

    cdef vector[HeapEntry] heap
    cdef vector[string] token_key
    cdef int32_t next_token
    cdef public list merges

    def __init__(self, const int32_t[::1] symbols, const int64_t[::1] offsets,
                 const int64_t[::1] counts, list symbol_keys):
        cdef Py_ssize_t n_words = counts.shape[0]
        cdef Py_ssize_t n_symbols = symbols.shape[0]
        cdef int32_t alphabet_size = len(symbol_keys)
        cdef Py_ssize_t w, p
        cdef int64_t start, end
        if offsets.shape[0] != n_words + 1:
            raise ValueError(f"offsets has {offsets.shape[0]} entries, expected n_words + 1 = {n_words + 1}")
        if n_words and (offsets[0] != 0 or offsets[n_words] != n_symbols):
            raise ValueError("offsets must start at 0 and end at len(symbols)")
        if n_symbols >= 2**31 - 1:
            raise ValueError(f"{n_symbols} symbols: positions are int32, at most 2**31 - 2")
        for key in symbol_keys:
            self.token_key.push_back(key)
        self.next_token = alphabet_size
        self.merges = []

        if n_symbols:
            self.symbol.assign(&symbols[0], &symbols[0] + n_symbols)
        self.prev.resize(n_symbols)
        self.next.resize(n_symbols)
        self.word_of.resize(n_symbols)
        if n_words:
            self.word_count.assign(&counts[0], &counts[0] + n_words)
        for w in range(n_words):
            start, end = offsets[w], offsets[w + 1]
            if end < start:
                raise ValueError(f"offsets decrease at word {w}")
            if counts[w] < 1:
                raise ValueError(f"word {w} has count {counts[w]}; counts must be >= 1")
            for p in range(start, end):
                if not 0 <= self.symbol[p] < alphabet_size:
                    raise ValueError(f"symbol {self.symbol[p]} at {p} is outside the alphabet of {alphabet_size}")
                self.prev[p] = p - 1 if p > start else NONE
                self.next[p] = p + 1 if p + 1 < end else NONE
                self.word_of[p] = w
        with nogil:
            self._count_initial_pairs()

    cdef void _count_initial_pairs(self) noexcept nogil:
        cdef int32_t p, pair
        for p in range(<int32_t>self.symbol.size()):
            if self.next[p] != NONE:
                pair = self._pair(self.symbol[p], self.symbol[p + 1])
                self.pair_count[pair] += self.word_count[self.word_of[p]]
                self.pair_positions[pair].push_back(p)
        self.grown_stamp.assign(self.pair_count.size(), -1)
        for pair in range(<int32_t>self.pair_count.size()):
            self._push(pair)

    cdef int32_t _pair(self, int32_t left, int32_t right) noexcept nogil:
        """The dense id of (left, right), allocated on first sight."""
        cdef uint64_t key = pair_key(left, right)
        cdef unordered_map[uint64_t, int32_t].iterator found = self.pair_id.find(key)
        if found != self.pair_id.end():
            return deref(found).second
        cdef int32_t pair = <int32_t>self.pair_count.size()
        self.pair_id[key] = pair
        self.pair_left.push_back(left)
        self.pair_right.push_back(right)
        self.pair_count.push_back(0)
        self.pair_positions.push_back(vector[int32_t]())
        self.grown_stamp.push_back(-1)
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
        if entry.count <= 0:
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

    cdef int32_t _best_pair(self) noexcept nogil:
        """Pop until an entry matches its pair's current count; -1 when no pair is left.

        Counts only grow through a push, so a stale entry is one whose pair has since shrunk:
        re-queue it at its current count.
        """
        cdef HeapEntry entry
        cdef int32_t pair
        cdef int64_t current
        while not self.heap.empty():
            entry = self._pop()
            pair = self.pair_id[pair_key(entry.left, entry.right)]
            current = self.pair_count[pair]
            if current == entry.count:
                return pair
            if 0 < current < entry.count:
                self._push(pair)
        return -1

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

        Positions only ever keep or grow their order, so sorting the candidate positions visits
        each word's occurrences left to right; that is what makes runs like `a a a` become
        `aa a`. Each occurrence's counts change through its own neighbours only, applied one
        occurrence at a time, so they stay equal to a fresh overlapping recount.
        """
        cdef int32_t left = self.pair_left[pair], right = self.pair_right[pair]
        cdef int32_t merged = self.next_token
        cdef vector[int32_t] candidates = move(self.pair_positions[pair])
        self.pair_positions[pair].clear()
        self.pair_positions[pair].shrink_to_fit()
        sort(candidates.begin(), candidates.end())
        cdef int32_t p, q, before, after
        cdef int64_t weight
        self.token_key.push_back(self.token_key[left] + self.token_key[right])
        for p in candidates:
            if self.symbol[p] != left:
                continue
            q = self.next[p]
            if q == NONE or self.symbol[q] != right:
                continue
            weight = self.word_count[self.word_of[p]]
            before = self.prev[p]
            after = self.next[q]
            self.pair_count[pair] -= weight
            if before != NONE:
                self._add(self.symbol[before], left, -weight, before)
            if after != NONE:
                self._add(right, self.symbol[after], -weight, q)
            self.symbol[p] = merged
            self.symbol[q] = DEAD
            self.next[p] = after
            if after != NONE:
                self.prev[after] = p
                self._add(merged, self.symbol[after], weight, p)
            if before != NONE:
                self._add(self.symbol[before], merged, weight, before)
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
    every progress_every merges.
    """
    if progress_every < 1:
        raise ValueError("progress_every must be >= 1")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
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
