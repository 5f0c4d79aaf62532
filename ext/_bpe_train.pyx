# distutils: language = c++
"""BPE merge loop: repeatedly merge the most frequent adjacent pair of symbols.

Words live in one array of positions threaded by prev/next links, so a merge rewrites only
the occurrences it touches; pair counts are updated from each occurrence's neighbours, an
index pair -> positions finds the occurrences, and a lazily invalidated max-heap picks the
next pair. The pure-Python twin is tokfx.reference.bpe_train.

Scaffold mode (train_scaffold_merges, Scaffold-BPE) runs the same merges and also keeps each
token's standalone frequency, flags a merge's parts whose frequency falls below the queue
head, and queues flagged tokens beside the pairs. Its twin is
tokfx.reference.bpe_train.train_scaffold_merges.

PMI mode (train_wordpiece_merges, WordPiece as the PathPiece paper describes it) runs the same
merges but picks the pair with the highest count(ab) / (count(a) count(b)), each token's count
being its standalone frequency. A merge changes the score of every pair holding one of its
parts (their counts fall), so each token indexes the pairs it is in, and those pairs, with the
pairs the merge made, are re-queued in a max-heap of exact scores; an entry is valid when its
pair's count and its parts' counts are still those it was queued with. Its twin is
tokfx.reference.wordpiece_train.
"""
from array import array

cimport cython
from libc.stdint cimport INT32_MAX, INT64_MAX, int32_t, int64_t, uint32_t, uint64_t
from libcpp.algorithm cimport is_sorted, sort
from libcpp.string cimport string
from libcpp.utility cimport move
from libcpp.vector cimport vector

cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil

cdef extern from *:
    """
    #include <algorithm>
    #include <string>
    #include <vector>
    struct TokenEntry { int64_t count; int32_t token; };
    // Max-heap order of flagged tokens: the higher standalone frequency, then the greater
    // key, then the greater id (BPE's tie rule, a token standing for the pair (token, "")).
    struct TokenRanksBelow {
        const std::vector<std::string>* keys;
        bool operator()(const TokenEntry& a, const TokenEntry& b) const {
            if (a.count != b.count) return a.count < b.count;
            int order = (*keys)[a.token].compare((*keys)[b.token]);
            if (order != 0) return order < 0;
            return a.token < b.token;
        }
    };
    static void push_token(std::vector<TokenEntry>& heap, TokenEntry entry,
                           const std::vector<std::string>& keys) {
        heap.push_back(entry);
        std::push_heap(heap.begin(), heap.end(), TokenRanksBelow{&keys});
    }
    static void pop_token(std::vector<TokenEntry>& heap, const std::vector<std::string>& keys) {
        std::pop_heap(heap.begin(), heap.end(), TokenRanksBelow{&keys});
        heap.pop_back();
    }
    """
    struct TokenEntry:
        int64_t count
        int32_t token
    void push_token(vector[TokenEntry]& heap, TokenEntry entry, const vector[string]& keys) noexcept nogil
    void pop_token(vector[TokenEntry]& heap, const vector[string]& keys) noexcept nogil

cdef extern from *:
    """
    #include <algorithm>
    #include <string>
    #include <vector>
    // A pair queued in PMI mode with its score count / denom, denom = count(left) count(right)
    // at the time, exact: counts are below 2**42 (checked), so the cross products fit 128 bits.
    struct PmiEntry { int64_t count; unsigned __int128 denom; int32_t pair; int32_t left; int32_t right; };
    // Max-heap order: the higher score, then the higher pair count, then BPE's tie rule (the
    // greater key(left), key(right), then the greater ids).
    struct PmiRanksBelow {
        const std::vector<std::string>* keys;
        bool operator()(const PmiEntry& a, const PmiEntry& b) const {
            unsigned __int128 x = (unsigned __int128)(uint64_t)a.count * b.denom;
            unsigned __int128 y = (unsigned __int128)(uint64_t)b.count * a.denom;
            if (x != y) return x < y;
            if (a.count != b.count) return a.count < b.count;
            int order = (*keys)[a.left].compare((*keys)[b.left]);
            if (order == 0) order = (*keys)[a.right].compare((*keys)[b.right]);
            if (order != 0) return order < 0;
            if (a.left != b.left) return a.left < b.left;
            return a.right < b.right;
        }
    };
    static PmiEntry pmi_entry(int64_t count, int64_t left_count, int64_t right_count, int32_t pair,
                              int32_t left, int32_t right) {
        PmiEntry e;
        e.count = count;
        e.denom = (unsigned __int128)(uint64_t)left_count * (uint64_t)right_count;
        e.pair = pair; e.left = left; e.right = right;
        return e;
    }
    static bool pmi_current(const PmiEntry& e, int64_t count, int64_t left_count, int64_t right_count) {
        return e.count == count && e.denom == (unsigned __int128)(uint64_t)left_count * (uint64_t)right_count;
    }
    static void push_pmi(std::vector<PmiEntry>& heap, PmiEntry entry, const std::vector<std::string>& keys) {
        heap.push_back(entry);
        std::push_heap(heap.begin(), heap.end(), PmiRanksBelow{&keys});
    }
    static void pop_pmi(std::vector<PmiEntry>& heap, const std::vector<std::string>& keys) {
        std::pop_heap(heap.begin(), heap.end(), PmiRanksBelow{&keys});
        heap.pop_back();
    }
    static void make_pmi_heap(std::vector<PmiEntry>& heap, const std::vector<std::string>& keys) {
        std::make_heap(heap.begin(), heap.end(), PmiRanksBelow{&keys});
    }
    """
    struct PmiEntry:
        int64_t count
        int32_t pair
        int32_t left
        int32_t right
    PmiEntry pmi_entry(int64_t count, int64_t left_count, int64_t right_count, int32_t pair,
                       int32_t left, int32_t right) noexcept nogil
    bint pmi_current(const PmiEntry& e, int64_t count, int64_t left_count, int64_t right_count) noexcept nogil
    void push_pmi(vector[PmiEntry]& heap, PmiEntry entry, const vector[string]& keys) noexcept nogil
    void pop_pmi(vector[PmiEntry]& heap, const vector[string]& keys) noexcept nogil
    void make_pmi_heap(vector[PmiEntry]& heap, const vector[string]& keys) noexcept nogil

cdef enum:
    # How many candidates ahead to prefetch: they are scattered over the whole position
    # array, and waiting for each one's cache line was half of the merge time on CJK text.
    PREFETCH_AHEAD = 8
    # The symbol of a position that was absorbed into its left neighbour.
    DEAD = -1
    # The link of a position at the start or end of its word.
    NONE = -1


cpdef enum ScaffoldEvent:
    # Scaffold mode's log: four int64 per event, the first one of these kinds.
    MERGED = 0    # (MERGED, left, right, pair count)
    FLAGGED = 1   # (FLAGGED, token, standalone frequency, queue head)
    UNFLAGGED = 2  # (UNFLAGGED, token, standalone frequency, 0)


# Everything a merge reads about one position, together: one cache line fetch, not four.
cdef struct Position:
    int32_t symbol
    int32_t prev
    int32_t next
    # Its word's count where that is below 2**31, else -1 - the word's index in word_count:
    # reading every count from word_count, a random read among a million words, cost the 1 GB
    # bench run's merges about 9 % (bench/README.md, "A word's count in its positions").
    int32_t weight


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

    # Scaffold mode only: per token id, its standalone frequency (its count as a whole symbol
    # in the words; kept for merged tokens, base symbols are never flagged) and its flag; a
    # max-heap of flagged tokens, at most one entry each, re-validated when it reaches the top.
    cdef vector[int64_t] standalone
    cdef vector[unsigned char] flagged
    cdef vector[TokenEntry] token_heap
    cdef int32_t alphabet_size

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
        self.alphabet_size = alphabet_size
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
                self.positions[p].weight = <int32_t> counts[w] if counts[w] <= INT32_MAX else <int32_t> (-1 - w)
        with nogil:
            self._resize_slots(1 << 16)
            self._count_initial_pairs()

    @cython.final
    cdef inline int64_t _weight(self, const Position& at) noexcept nogil:
        """The count of the word that holds `at`."""
        return at.weight if at.weight >= 0 else self.word_count[-1 - at.weight]

    cdef void _count_initial_pairs(self) noexcept nogil:
        cdef int32_t p, pair
        for p in range(<int32_t>self.positions.size()):
            if self.positions[p].next != NONE:
                pair = self._pair(self.positions[p].symbol, self.positions[p + 1].symbol)
                self.pair_count[pair] += self._weight(self.positions[p])
                self.pair_positions[pair].push_back(p)

    # ---- pair key -> dense pair id

    @cython.final
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

    @cython.final
    cdef size_t _find_slot(self, uint64_t key) noexcept nogil:
        """The slot holding key, or the empty slot where it belongs (claimed for key)."""
        cdef size_t mask = self.slots.size() - 1
        cdef size_t i = slot_of(key, self.slot_shift)
        while self.slots[i].key != key and self.slots[i].key != EMPTY_SLOT:
            i = (i + 1) & mask
        self.slots[i].key = key
        return i

    @cython.final
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

    @cython.final
    cdef inline void _add(self, int32_t left, int32_t right, int64_t delta, int32_t position) noexcept nogil:
        cdef int32_t pair = self._pair(left, right)
        self.pair_count[pair] += delta
        if delta > 0:
            self.pair_positions[pair].push_back(position)
            if self.grown_stamp[pair] != self.next_token:
                self.grown_stamp[pair] = self.next_token
                self.grown.push_back(pair)

    @cython.final
    cdef int64_t _merge(self, int32_t pair) noexcept nogil:
        """Rewrite every occurrence of `pair` into the next token, left to right in each word;
        return the merged occurrences' total weight (the new token's standalone frequency).

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
        # A pair's positions were appended in word order unless later merges added some: a
        # pass, where std::sort of a sorted list costs n log n (the first merges' lists are
        # the longest, hundreds of thousands of positions).
        if not is_sorted(candidates.begin(), candidates.end()):
            sort(candidates.begin(), candidates.end())
        cdef int32_t p, q, before, after
        cdef size_t i, n_candidates = candidates.size()
        cdef int64_t weight, merged_weight = 0
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
            weight = self._weight(at[0])
            before = at.prev
            after = self.positions[q].next
            self.pair_count[pair] -= weight
            merged_weight += weight
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
        return merged_weight

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

    # ---- scaffold mode

    cdef int32_t _best_token(self) noexcept nogil:
        """The top flagged token, left in its heap; -1 when none. An entry whose token was
        unflagged is dropped; one whose token has since lost occurrences (frequencies only fall
        after a token's merge) is re-queued at the current frequency."""
        cdef TokenEntry top
        while not self.token_heap.empty():
            top = self.token_heap.front()
            if self.flagged[top.token] and self.standalone[top.token] == top.count:
                return top.token
            pop_token(self.token_heap, self.token_key)
            if self.flagged[top.token]:
                top.count = self.standalone[top.token]
                push_token(self.token_heap, top, self.token_key)
        return -1

    cdef bint _token_wins(self, int32_t token, int32_t pair) noexcept nogil:
        """Whether flagged `token` ranks above `pair` (-1: none): BPE's tie rule with the token
        standing for the pair (token, ""), so at equal keys the pair wins."""
        if pair < 0:
            return True
        if self.standalone[token] != self.pair_count[pair]:
            return self.standalone[token] > self.pair_count[pair]
        return self.token_key[token].compare(self.token_key[self.pair_left[pair]]) > 0

    cdef bint _flag_if_below(self, int32_t part, int64_t head, vector[int64_t]* log) noexcept nogil:
        """Flag `part` if it is learned, normal and strictly below head; whether it was."""
        cdef TokenEntry entry
        if part < self.alphabet_size or self.flagged[part] or self.standalone[part] >= head:
            return False
        self.flagged[part] = True
        entry.count = self.standalone[part]
        entry.token = part
        push_token(self.token_heap, entry, self.token_key)
        log.push_back(FLAGGED)
        log.push_back(part)
        log.push_back(entry.count)
        log.push_back(head)
        return True

    cdef int32_t run_scaffold(self, int32_t normal, int32_t target, vector[int64_t]* log) noexcept nogil:
        """Merge or unflag until `target` learned tokens are normal (or nothing is left),
        starting from `normal`; append the events to log; return the new number of normal ones.

        Each step takes the queue's best candidate: a flagged token is unflagged; a pair is
        merged into a new normal token, its parts lose the merged occurrences (a pair (a, a)
        takes two per occurrence), and each part that is normal and learned and now occurs
        strictly less often than the new queue head is flagged.

        The queue head is the better of the best flagged token and the best pair as _best_pair
        finds it: validated against its current count, with the admission threshold lowered
        when the heap runs dry, so neither a stale entry nor a pair below the threshold stands
        in for it. That pair is also the next step's pair (flags and unflags change no pair
        count), so it is held out of the heap until merged, or pushed back on return.
        """
        cdef int32_t pair = self._best_pair(), token, left, right
        cdef int64_t weight, head
        while normal < target:
            token = self._best_token()
            if pair < 0 and token < 0:
                break
            if token >= 0 and self._token_wins(token, pair):
                pop_token(self.token_heap, self.token_key)
                self.flagged[token] = False
                normal += 1
                log.push_back(UNFLAGGED)
                log.push_back(token)
                log.push_back(self.standalone[token])
                log.push_back(0)
                continue
            left = self.pair_left[pair]
            right = self.pair_right[pair]
            log.push_back(MERGED)
            log.push_back(left)
            log.push_back(right)
            log.push_back(self.pair_count[pair])
            weight = self._merge(pair)
            self.standalone.push_back(weight)
            self.flagged.push_back(False)
            self.standalone[left] -= weight
            self.standalone[right] -= weight
            normal += 1
            pair = self._best_pair()
            token = self._best_token()
            head = self.pair_count[pair] if pair >= 0 else 0
            if token >= 0 and self.standalone[token] > head:
                head = self.standalone[token]
            normal -= self._flag_if_below(left, head, log)
            if right != left:
                normal -= self._flag_if_below(right, head, log)
        if pair >= 0:
            self._push(pair)
        return normal


# PMI mode: counts (and so the total symbol weight) stay below this, so that a score's cross
# product count x count(a) x count(b) fits 128 bits.
PMI_MAX_TOTAL = 1 << 42


cdef class _PmiMergeLoop(_MergeLoop):
    """PMI mode: the merge loop's words, pairs and merges, with its own queue (see the module
    docstring). The base class's heap is unused; its _push, called for the pairs a merge grows,
    only notes them, and they are queued once the parts' counts are updated."""
    # Per token id: its standalone frequency, and the pairs it is in (dead ones included).
    cdef vector[int64_t] symbol_count
    cdef vector[vector[int32_t]] token_pairs
    cdef int32_t indexed
    # Pairs noted by _push during a merge; a stamp per pair so each is queued once per merge.
    cdef vector[int32_t] pending
    cdef vector[int32_t] queued_stamp
    cdef int32_t stamp
    cdef vector[PmiEntry] pmi_heap
    cdef size_t rebuild_at

    def __init__(self, symbols, offsets, counts, list symbol_keys):
        _MergeLoop.__init__(self, symbols, offsets, counts, symbol_keys)
        cdef size_t p
        cdef int64_t total = 0, weight
        self.symbol_count.assign(len(symbol_keys), 0)
        for p in range(self.positions.size()):
            weight = self._weight(self.positions[p])
            if weight >= PMI_MAX_TOTAL or total >= PMI_MAX_TOTAL - weight:
                raise ValueError(f"the words hold {PMI_MAX_TOTAL:,} or more symbols (counts included):"
                                 " too many for exact PMI scores")
            total += weight
            self.symbol_count[self.positions[p].symbol] += weight
        self.token_pairs.resize(len(symbol_keys))
        self.indexed = 0
        self.stamp = 0
        with nogil:
            self._index_new_pairs()
            self._rebuild()

    cdef void _push(self, int32_t pair) noexcept nogil:
        self.pending.push_back(pair)

    cdef void _index_new_pairs(self) noexcept nogil:
        cdef int32_t pair
        self.token_pairs.resize(self.next_token)
        self.queued_stamp.resize(self.pair_left.size(), -1)
        for pair in range(self.indexed, <int32_t>self.pair_left.size()):
            self.token_pairs[self.pair_left[pair]].push_back(pair)
            if self.pair_right[pair] != self.pair_left[pair]:
                self.token_pairs[self.pair_right[pair]].push_back(pair)
        self.indexed = <int32_t>self.pair_left.size()

    cdef void _queue(self, int32_t pair) noexcept nogil:
        if self.pair_count[pair] <= 0 or self.queued_stamp[pair] == self.stamp:
            return
        self.queued_stamp[pair] = self.stamp
        cdef int32_t left = self.pair_left[pair], right = self.pair_right[pair]
        push_pmi(self.pmi_heap, pmi_entry(self.pair_count[pair], self.symbol_count[left],
                                          self.symbol_count[right], pair, left, right), self.token_key)

    cdef void _rebuild(self) noexcept nogil:
        """The heap anew: one current entry per pair with a count."""
        cdef int32_t pair, left, right
        self.pmi_heap.clear()
        for pair in range(<int32_t>self.pair_left.size()):
            if self.pair_count[pair] > 0:
                left, right = self.pair_left[pair], self.pair_right[pair]
                self.pmi_heap.push_back(pmi_entry(self.pair_count[pair], self.symbol_count[left],
                                                  self.symbol_count[right], pair, left, right))
        make_pmi_heap(self.pmi_heap, self.token_key)
        self.rebuild_at = max(<size_t>(1 << 16), 4 * self.pmi_heap.size())

    cdef int32_t _best_pmi(self) noexcept nogil:
        """Pop until an entry matches its pair's current counts; -1 when no pair is left. Every
        change of a pair's score queued it anew, so a stale entry is dropped."""
        cdef PmiEntry top
        while not self.pmi_heap.empty():
            top = self.pmi_heap.front()
            pop_pmi(self.pmi_heap, self.token_key)
            if pmi_current(top, self.pair_count[top.pair], self.symbol_count[top.left],
                           self.symbol_count[top.right]):
                return top.pair
        return -1

    cdef int32_t run_pmi(self, int32_t n_merges, vector[int32_t]* out) noexcept nogil:
        """Do up to n_merges merges, appending (left, right) to out; return how many were done."""
        cdef int32_t done = 0, pair, left, right, other
        cdef int64_t weight
        while done < n_merges:
            pair = self._best_pmi()
            if pair < 0:
                break
            left, right = self.pair_left[pair], self.pair_right[pair]
            out.push_back(left)
            out.push_back(right)
            self.pending.clear()
            weight = self._merge(pair)
            self.symbol_count.push_back(weight)
            self.symbol_count[left] -= weight
            self.symbol_count[right] -= weight
            self._index_new_pairs()
            self.stamp += 1
            for other in self.pending:
                self._queue(other)
            for other in self.token_pairs[left]:
                self._queue(other)
            if right != left:
                for other in self.token_pairs[right]:
                    self._queue(other)
            if self.pmi_heap.size() > self.rebuild_at:
                self._rebuild()
            done += 1
        return done


cdef _check_merge_args(Py_ssize_t base_symbols, Py_ssize_t num_merges, Py_ssize_t progress_every):
    if progress_every < 1:
        raise ValueError("progress_every must be >= 1")
    if num_merges < 0:
        raise ValueError("num_merges must be >= 0")
    if base_symbols + num_merges >= 2**31:
        raise ValueError("token ids are int32: len(symbol_keys) + num_merges must be below 2**31")


cdef list _run_merges(_MergeLoop loop, bint pmi, Py_ssize_t num_merges, progress, Py_ssize_t progress_every):
    """Run `loop` (by count, or with `pmi` by the WordPiece score) in chunks of progress_every
    merges without the GIL, reporting progress after each; the (left, right) pairs in order."""
    cdef vector[int32_t] flat
    cdef int32_t done = 0, chunk, got
    flat.reserve(2 * num_merges)
    while done < num_merges:
        chunk = <int32_t>min(num_merges - done, progress_every if progress is not None else num_merges)
        with nogil:
            got = (<_PmiMergeLoop>loop).run_pmi(chunk, &flat) if pmi else loop.run(chunk, &flat)
        done += got
        if progress is not None:
            progress(done, num_merges)
        if got < chunk:
            break
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(done)]


def train_wordpiece_merges(symbols, offsets, counts, list symbol_keys, Py_ssize_t num_merges,
                           progress=None, Py_ssize_t progress_every=1000):
    """Learn up to `num_merges` WordPiece merges (PMI mode): inputs and result as train_merges,
    but each merge takes the pair with the highest count(ab) / (count(a) count(b)), a token's
    count being how often it stands as a whole symbol of the words (compared exactly); ties go
    to the higher count(ab), then as train_merges. The words may hold at most 2**42 symbols,
    counts included."""
    _check_merge_args(len(symbol_keys), num_merges, progress_every)
    return _run_merges(_PmiMergeLoop(symbols, offsets, counts, symbol_keys), True, num_merges, progress,
                       progress_every)


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
    _check_merge_args(len(symbol_keys), num_merges, progress_every)
    return _run_merges(_MergeLoop(symbols, offsets, counts, symbol_keys), False, num_merges, progress,
                       progress_every)


def train_scaffold_merges(symbols, offsets, counts, list symbol_keys, Py_ssize_t num_normal,
                          progress=None, Py_ssize_t progress_every=1000):
    """Scaffold-BPE: learn tokens until `num_normal` of them are normal (not scaffold).

    Inputs as train_merges. Returns (merges, scaffold, log): the merges (left, right) in order,
    merge i creating id len(symbol_keys) + i; the ids flagged scaffold at the end, ascending;
    and every event in order as an int64 array, four entries per event:
    (MERGED, left, right, count) merged the pair; (FLAGGED, token, frequency, head) flagged the
    token, its standalone frequency strictly below the queue head; (UNFLAGGED, token,
    frequency, 0) unflagged it (ScaffoldEvent names the kinds). Stops early when no pair and no
    flagged token is left. progress(normal, num_normal) as in train_merges.
    """
    if progress_every < 1:
        raise ValueError("progress_every must be >= 1")
    if num_normal < 0:
        raise ValueError("num_normal must be >= 0")
    # Every merge removes a symbol from the words, so ids stay below this.
    if len(symbol_keys) + len(symbols) >= 2**31:
        raise ValueError("token ids are int32: len(symbol_keys) + len(symbols) must be below 2**31")
    cdef _MergeLoop loop = _MergeLoop(symbols, offsets, counts, symbol_keys)
    loop.standalone.assign(len(symbol_keys), 0)
    loop.flagged.assign(len(symbol_keys), False)
    cdef vector[int64_t] log
    cdef int32_t normal = 0, target
    while normal < num_normal:
        target = <int32_t>min(num_normal, normal + progress_every if progress is not None else num_normal)
        with nogil:
            normal = loop.run_scaffold(normal, target, &log)
        if progress is not None:
            progress(normal, num_normal)
        if normal < target:
            break
    merges = [(log[i + 1], log[i + 2]) for i in range(0, log.size(), 4) if log[i] == MERGED]
    scaffold = [token for token in range(loop.flagged.size()) if loop.flagged[token]]
    events = array("q")
    events.frombytes((<char*>log.data())[:log.size() * sizeof(int64_t)])
    return merges, scaffold, events
