"""sentencepiece's float32 Viterbi over a whole text (viterbi32.pxd), cut where every path
crosses, each segment's path cached and reused only where a rounding bound proves it the path the
Viterbi would choose there. Twin: tokfx.reference.unigram.viterbi32_segments.

Cuts. No token spans the position between symbols x and y when no token holds x before its last
symbol or none holds y after its first (before sentencepiece's `▁` when no piece holds it past its
first character; around a fallback byte or the unknown symbol, which only their own one-symbol
tokens hold). Every path ends a token there, and the positions after it see the paths before it
only through the best score there: the segments between cuts are Viterbis of their own, each
started from the running score where the previous one ended.

The bound (why a cached path may be reused from another running score). Run a segment of L
symbols from the running score S. Every candidate compared at a position is a float32 sum
S + a_1 + ... + a_t, added left to right, t <= L, of token scores |a_i| <= A (the largest score in
size). A float32 addition rounds its exact result by a factor (1 + d), |d| <= u = 2^-24; by
induction over t the computed sum is within t * 2u * M of the exact one, M = |S| + L * A (the
exact partial sums are at most M in size; the factor 2 covers the error carried so far while
t * 2u <= 1). By induction over the positions, if the choices before a position are the same from
S as from S0, two candidates there are sums of the same tokens, so S cancels from their exact
difference and their computed difference moves by at most 2 * L * 2u * (M(S) + M(S0)). If the
smallest margin m (chosen candidate minus runner-up, viterbi32's) of the run from S0 exceeds that,
every choice from S is the same, strictly, ties included. Solved for S:

    |S| < m * 2^22 / L - |S0| - 2 * L * A      (the threshold stored with the path)

with m shrunk by 2^-20 for the double arithmetic of the threshold itself. A hit appends the
cached tokens and adds their float32 scores to the running score one by one, as the Viterbi adds
them along that path. A miss, or a hit whose threshold the running score fails, runs the Viterbi
and stores its path with its own threshold when that is higher. A segment of one symbol is its
one-symbol token, with nothing to look up (Chinese with byte fallback: each fallback byte).

The cuts are found first, so that the cache slots of the segments a few ahead are hashed and
fetched from memory while one is segmented.
"""
from libc.math cimport fabs
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from double_array cimport DoubleArray, da_child
from piece_cache cimport (CacheSlot, PieceCache, cache_entry, cache_found, cache_id_count, cache_ids, cache_slot,
                          cache_store, hash_piece)
from viterbi32 cimport Best32, viterbi32

cdef extern from *:
    void prefetch "__builtin_prefetch"(const void* address) noexcept nogil

cdef enum:
    # A segment's cache slot is fetched this many segments ahead, its arena entry one ahead: a
    # hit is then mostly not two waits on memory (the table of English words outgrows L2).
    FETCH_AHEAD = 4
    # Longer segments (runs of CJK characters that the vocabulary holds) rarely repeat.
    MAX_CACHED_SEGMENT = 64
    # The threshold (a double) is stored after a segment's ids, as two more int32s.
    THRESHOLD_INTS = 2
    # Segments.held's bits: some token holds the symbol before its last symbol / after its first.
    HELD_BEFORE_LAST = 1
    HELD_AFTER_FIRST = 2


cdef struct Segments:
    # Per symbol: HELD_BEFORE_LAST | HELD_AFTER_FIRST, one byte so that the scan for the cuts
    # reads one table.
    vector[uint8_t] held
    # Per symbol: its one-symbol token (-1: none) and that token's float32 score, read for a
    # segment of one symbol (each fallback byte or unknown character of Chinese text) instead
    # of a walk of the double array.
    vector[int32_t] alone_token
    vector[float] alone_score
    vector[float] token_score  # per token id: its float32 score
    double max_score  # A: the largest score of a token, in size
    # A token whose runs the one-symbol runs write as one (-1: none), one that only they
    # write (only_in_runs).
    int32_t joined
    Py_ssize_t hits  # segments served from the cache
    vector[Py_ssize_t] cuts  # scratch: 0, the crossings, n
    vector[uint64_t] hashes  # scratch: per segment, its hash_piece


cdef inline int segments_init(Segments* s, tokens, const double* scores, const DoubleArray* array,
                              const float* slot_scores) except -1:
    """s for tokens (by id: symbol sequences, or None), their scores, and the double array of the
    reversed tokens with its slot_scores (viterbi32.slot_scores), which the Viterbi walks."""
    cdef Py_ssize_t k, i, size = 1
    cdef int32_t node
    s.hits = 0
    s.max_score = 0.0
    s.joined = -1
    s.token_score.clear()
    for token in tokens:
        if token is not None and len(token):
            size = max(size, max(token) + 1)
    s.held.assign(size, 0)
    s.alone_token.assign(size, -1)
    s.alone_score.assign(size, 0.0)
    for i in range(size):
        node = da_child(array, 0, <int32_t>i)
        if node >= 0 and array.token[node] >= 0:
            s.alone_token[i] = array.token[node]
            s.alone_score[i] = slot_scores[node]
    for k, token in enumerate(tokens):
        s.token_score.push_back(<float>scores[k])
        if token is None:
            continue
        s.max_score = max(s.max_score, fabs(<float>scores[k]))
        for i in range(len(token)):
            if i + 1 < len(token):
                s.held[token[i]] |= HELD_BEFORE_LAST
            if i:
                s.held[token[i]] |= HELD_AFTER_FIRST
    return 0


cdef inline bint only_in_runs(const Segments* s, int32_t token) noexcept:
    """`token` only comes out of one-symbol runs, which can then write its runs as one
    (Segments.joined, id_list.join_runs' result): it is the one-symbol token of a symbol that no
    other token holds (sentencepiece's unknown piece), so that symbol always has a cut on either
    side, and no other token has its id."""
    cdef size_t x
    for x in range(s.alone_token.size()):
        if s.alone_token[x] == token and s.held[x] == 0:
            return True
    return False


cdef inline uint8_t held(const Segments* s, int32_t x) noexcept nogil:
    """Segments.held of symbol x; a symbol outside the tokens' range is held everywhere (no cut
    around it: the Viterbi then says there is no path)."""
    return s.held[x] if <size_t>x < s.held.size() else HELD_BEFORE_LAST | HELD_AFTER_FIRST


cdef inline double segment_threshold(double margin, Py_ssize_t length, double max_score,
                                     float start) noexcept nogil:
    """The running scores S, |S| below it, from which a segment of `length` symbols, run from
    `start` with smallest margin `margin`, makes the same choices (the module's bound)."""
    return margin * (1.0 - 1.0 / 1048576.0) * 4194304.0 / length - fabs(start) - 2.0 * length * max_score


cdef inline bint _cached_size(const PieceCache* cache, Py_ssize_t n) noexcept nogil:
    return cache.capacity > 0 and 1 < n <= MAX_CACHED_SEGMENT


cdef inline Py_ssize_t _one_symbol_run(const int32_t* symbols, const Py_ssize_t* cuts, Py_ssize_t k,
                                       Py_ssize_t segments, const Segments* s, float* running,
                                       vector[int32_t]* tokens) except -2:
    """Segments k, k + 1, ... of one symbol each (Chinese: one per fallback byte or unknown
    character), each its one-symbol token, the Viterbi's only candidate: appends them and their
    scores, each run of s.joined as one; returns the first segment after the run, or -1 for a
    symbol with no one-symbol token (no path). The run is measured first so that the tokens are
    written through a pointer and the running score stays in a register (a push_back and a
    store per token were most of the time of Chinese with byte fallback); its symbols are
    consecutive, symbols[cuts[k]:cuts[end]]."""
    cdef float score = running[0]
    cdef int32_t symbol, token, joined = s.joined
    cdef size_t size = s.alone_token.size()
    cdef Py_ssize_t end = k, start = k, first = tokens.size(), written = 0
    while end < segments and cuts[end + 1] - cuts[end] == 1:
        end += 1
    # The token before (an earlier piece's, or segment's) is s.joined: a run of it goes on.
    cdef bint after = first > 0 and tokens[0][first - 1] == joined
    tokens.resize(first + end - start)
    cdef int32_t* out = tokens.data() + first
    cdef const int32_t* run = symbols + cuts[start]
    cdef const int32_t* alone_token = s.alone_token.data()
    cdef const float* alone_score = s.alone_score.data()
    while k < end:
        symbol = run[k - start]
        if <size_t>symbol >= size:
            return -1
        token = alone_token[symbol]
        if token < 0:
            return -1
        out[written] = token  # stored always, kept unless it goes on a run of s.joined: no branch
        written += ((token == joined) & after) ^ 1
        after = token == joined
        score = score + alone_score[symbol]
        k += 1
    if written != end - start:  # a second resize only when something was joined (English: short runs)
        tokens.resize(first + written)
    running[0] = score
    return k


cdef inline int _one_segment(const int32_t* symbols, Py_ssize_t n, const DoubleArray* array,
                             const float* slot_scores, int max_width, float* running, Segments* s,
                             PieceCache* cache, uint64_t h, Best32* best, vector[int32_t]* tokens) except -2:
    """A segment of n > 1 symbols (h: its hash_piece, or 0), from the cache where its threshold
    allows, else by the Viterbi, then cached."""
    cdef const unsigned char* key = <const unsigned char*>symbols
    cdef Py_ssize_t size = n * sizeof(int32_t), first = tokens.size(), k, count
    cdef CacheSlot* slot = NULL
    cdef double threshold, stored = 0.0, margin
    cdef float start, score
    cdef int32_t* ids
    cdef bint cached = _cached_size(cache, n)
    if cached:
        if h == 0:  # not hashed ahead (or a hash of 0: hashed again, the same)
            h = hash_piece(key, size)
        slot = cache_slot(cache, key, size, h)
        if cache_found(slot):
            count = <Py_ssize_t>cache_id_count(cache, slot) - THRESHOLD_INTS
            memcpy(&stored, cache_ids(cache, slot) + count * sizeof(int32_t), sizeof(double))
            if fabs(running[0]) < stored:
                tokens.resize(first + count)
                ids = tokens.data() + first
                memcpy(ids, cache_ids(cache, slot), count * sizeof(int32_t))
                score = running[0]  # in a register, not stored per token
                for k in range(count):
                    score = score + s.token_score[ids[k]]
                running[0] = score
                s.hits += 1
                return 0
    start = running[0]
    if viterbi32(symbols, n, array, slot_scores, max_width, start, best, tokens, &margin) < 0:
        return -1
    running[0] = best.score[n]
    if cached:
        threshold = segment_threshold(margin, n, s.max_score, start)
        if threshold > stored:  # stored: 0 when there was none
            tokens.resize(tokens.size() + THRESHOLD_INTS)
            memcpy(tokens.data() + tokens.size() - THRESHOLD_INTS, &threshold, sizeof(double))
            cache_store(cache, key, size, h, tokens.data() + first, tokens.size() - first)
            tokens.resize(tokens.size() - THRESHOLD_INTS)
    return 0


cdef inline void _fetch_slot(Segments* s, const int32_t* symbols, PieceCache* cache, Py_ssize_t k) noexcept:
    """Hashes segment k and asks for its first cache slot (0: not hashed)."""
    cdef Py_ssize_t a = s.cuts[k], n = s.cuts[k + 1] - s.cuts[k]
    s.hashes[k] = 0
    if _cached_size(cache, n):
        s.hashes[k] = hash_piece(<const unsigned char*>(symbols + a), n * sizeof(int32_t))
        prefetch(&cache.slots[s.hashes[k] & (cache.slots.size() - 1)])


cdef inline void _fetch_arena(Segments* s, PieceCache* cache, Py_ssize_t k) noexcept:
    """Asks for the arena entry of segment k's first cache slot (fetched ahead), if it holds one."""
    cdef const CacheSlot* slot
    if _cached_size(cache, s.cuts[k + 1] - s.cuts[k]):
        slot = &cache.slots[s.hashes[k] & (cache.slots.size() - 1)]
        if s.hashes[k] != 0 and cache_found(slot):
            prefetch(cache_entry(cache, slot))


cdef inline int viterbi32_segments(const int32_t* symbols, Py_ssize_t n, const DoubleArray* array,
                                   const float* slot_scores, int max_width, float* running, Segments* s,
                                   PieceCache* cache, Best32* best, vector[int32_t]* tokens) except -2:
    """viterbi32 over symbols[:n] from *running, segment by segment: appends the best path's
    tokens and sets *running to its score; -1 if there is no path."""
    cdef Py_ssize_t p, k, segments = 0
    cdef Py_ssize_t fetched = 0  # the segments below it are hashed and their slots asked for
    cdef uint8_t before, after
    if s.cuts.size() < <size_t>n + 1:
        s.cuts.resize(n + 1)
        s.hashes.resize(n)
    cdef Py_ssize_t* cuts = s.cuts.data()
    cuts[0] = 0
    if n:
        before = held(s, symbols[0])
    for p in range(1, n):
        # Written always, kept only at a cut: no branch on where words end.
        after = held(s, symbols[p])
        cuts[segments + 1] = p
        # A cut unless some token holds x before its last symbol and some holds y after its
        # first: in bits, as `or` compiled to a branch (Chinese with the unknown piece mixes both).
        segments += ((before & HELD_BEFORE_LAST) & ((after & HELD_AFTER_FIRST) >> 1)) ^ 1
        before = after
    segments += n > 0
    cuts[segments] = n
    k = 0
    while k < segments:
        if cuts[k + 1] - cuts[k] == 1:  # many in a row in Chinese: nothing to look up, nor ahead
            k = _one_symbol_run(symbols, cuts, k, segments, s, running, tokens)
            if k < 0:
                return -1
            continue
        if fetched < k:  # past a one-symbol run, whose segments have nothing to fetch
            fetched = k
        while fetched < segments and fetched <= k + FETCH_AHEAD:  # each segment's slot once
            _fetch_slot(s, symbols, cache, fetched)
            fetched += 1
        if k + 1 < segments:
            _fetch_arena(s, cache, k + 1)
        if _one_segment(symbols + cuts[k], cuts[k + 1] - cuts[k], array, slot_scores, max_width, running, s, cache,
                        s.hashes[k], best, tokens) < 0:
            return -1
        k += 1
    return 0
