# cython: language_level=3
"""Skip-gram word2vec with negative sampling over sentences of token ids, single-threaded and
seeded: the embeddings SaGe retrains (tokfx.models.sage.word2vec; pure-Python twin in
tokfx/reference/word2vec.py, equal to the last bit).

The algorithm is gensim's (`Word2Vec(sg=1, negative=...)`, its defaults otherwise): the window
shrinks by a random b in [0, window) around each word, frequent words are downsampled with
`sample`, negatives are drawn from counts^0.75, sigmoid is read from a 1,000-entry table of
[-6, 6] (a dot product outside it skips the update), the learning rate falls linearly from
`alpha` to `min_alpha` over all epochs, and one 48-bit linear congruential generator feeds
every draw *(ours: gensim mixes it with numpy's, per worker thread)*. The context word's row of
`vectors` is trained against the centre word's row of a second matrix (zeros at the start);
`vectors` is the result.

Sentences come with counts; each epoch takes all their occurrences in one random order, the
same every epoch (so that the decaying learning rate does not meet a frequent sentence in one
run), drawn as it goes from a Fenwick tree of the counts not yet taken: memory grows with the
distinct sentences, not with their occurrences.

Dot products sum into 8 partial sums added up in a fixed order (vector_math.h); with no fused
multiply-add (setup.py) that order is the whole arithmetic, and the twin follows it.
"""
from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

import numpy as np

cdef extern from "vector_math.h":
    float dot "tokfx_dot"(const float* a, const float* b, int dim) noexcept nogil
    void axpy "tokfx_axpy"(float g, const float* x, float* y, int dim) noexcept nogil
    void prefetch "tokfx_prefetch"(const float* row, int dim) noexcept nogil

cdef uint64_t LCG_MASK = (<uint64_t>1 << 48) - 1
cdef float MAX_EXP = 6.0
cdef int TABLE_SIZE = 1000


cdef inline uint64_t lcg(uint64_t state) noexcept nogil:
    return (state * <uint64_t>25214903917ULL + 11) & LCG_MASK


cdef inline uint64_t splitmix64(uint64_t* state) noexcept nogil:
    """The occurrence order's generator (64-bit draws: a corpus has more than 2^32 of them)."""
    state[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline int64_t take(int64_t* tree, int64_t n, int64_t top, uint64_t r) noexcept nogil:
    """The sentence holding occurrence r (0-based) of those left in the Fenwick tree `tree`
    (1-based, n sentences, `top` the highest power of two <= n), taken out of it."""
    cdef int64_t position = 0, step = top, i
    while step:
        if position + step <= n and <uint64_t>tree[position + step] <= r:
            position += step
            r -= <uint64_t>tree[position]
        step >>= 1
    i = position + 1
    while i <= n:
        tree[i] -= 1
        i += i & -i
    return position


cdef inline int draw(const uint32_t* cumulative, int n, const int32_t* bucket_start, int shift,
                     uint64_t state) noexcept nogil:
    """The first index whose cumulative weight exceeds the draw, searched from the first index
    past the start of the draw's bucket (a bisection over all would stall on its branches)."""
    cdef uint32_t x = <uint32_t>((state >> 16) % cumulative[n - 1])
    cdef int i = bucket_start[x >> shift]
    while cumulative[i] <= x:
        i += 1
    return i


def sigmoid_table():
    """float32 sigmoid at TABLE_SIZE points spread over [-MAX_EXP, MAX_EXP) (gensim's table)."""
    e = np.exp((np.arange(TABLE_SIZE) / TABLE_SIZE * 2 - 1) * MAX_EXP)
    return (e / (e + 1)).astype(np.float32)


def train_skipgram(const int32_t[::1] ids, const int64_t[::1] starts, const int64_t[::1] counts,
                   float[:, ::1] vectors, int window, int negative, double alpha, double min_alpha,
                   int epochs, double sample, uint64_t seed):
    """Train `vectors` (one row per token id, initialised by the caller) in place over the
    sentences ids[starts[s]:starts[s + 1]], each occurring counts[s] times, `epochs` times over."""
    cdef int n_tokens = vectors.shape[0], dim = vectors.shape[1]
    cdef int64_t n_sentences = starts.shape[0] - 1
    cdef int64_t i, k, s, total = 0, done = 0, longest = 0, occurrences = 0, top = 1
    cdef int64_t[::1] token_count = np.zeros(n_tokens, dtype=np.int64)
    if window < 1 or negative < 0 or epochs < 0:
        raise ValueError(f"window must be at least 1 and negative, epochs not negative:"
                         f" {window}, {negative}, {epochs}")
    if counts.shape[0] != n_sentences:
        raise ValueError(f"{counts.shape[0]} counts for {n_sentences} sentences")
    for s in range(n_sentences):
        if counts[s] < 0:
            raise ValueError(f"negative count {counts[s]} of sentence {s}")
        occurrences += counts[s]
        longest = max(longest, starts[s + 1] - starts[s])
        for i in range(starts[s], starts[s + 1]):
            if ids[i] < 0 or ids[i] >= n_tokens:
                raise ValueError(f"token id {ids[i]} outside the {n_tokens} rows of vectors")
            token_count[ids[i]] += counts[s]
    for k in range(n_tokens):
        total += token_count[k]
    if total == 0 or dim == 0:
        return
    # Downsampling (gensim's formula): keep a word when its threshold >= a 32-bit draw.
    cdef double threshold_count = sample * total, p
    cdef uint32_t[::1] keep = np.zeros(n_tokens, dtype=np.uint32)
    # Negatives: the tokens that occur, by id, weighted count^0.75 over a 2^31 - 1 domain.
    used = np.flatnonzero(np.asarray(token_count))
    weights = np.asarray(token_count)[used].astype(np.float64) ** 0.75
    cdef uint32_t[::1] cumulative = np.round(np.cumsum(weights) / weights.sum() * (2 ** 31 - 1)).astype(np.uint32)
    cdef int32_t[::1] negative_ids = used.astype(np.int32)
    cdef int n_used = used.shape[0]
    # Buckets of the draw's range [0, 2^31 - 1): at least 4 per token, so that a search from a
    # bucket's start takes a step or two.
    cdef int shift = 31 - min(22, max(0, int(4 * n_used - 1).bit_length()))
    cdef int32_t[::1] bucket_start = np.searchsorted(
        np.asarray(cumulative), np.arange(0, 2 ** 31, 2 ** shift, dtype=np.int64), side="right").astype(np.int32)
    for k in range(n_tokens):
        if token_count[k] == 0:
            continue
        if sample > 0:
            p = (sqrt(token_count[k] / threshold_count) + 1) * (threshold_count / token_count[k])
        else:
            p = 1.0
        keep[k] = 4294967295U if p >= 1.0 else <uint32_t>(p * 4294967296.0)
    cdef float[::1] table = sigmoid_table()
    cdef float[:, ::1] targets = np.zeros((n_tokens, dim), dtype=np.float32)
    cdef float* work = <float*>malloc(dim * sizeof(float))
    cdef int32_t* kept = <int32_t*>malloc(max(longest, 1) * sizeof(int32_t))
    cdef int32_t* draws = <int32_t*>malloc((negative + 1) * sizeof(int32_t))
    cdef uint64_t state = seed & LCG_MASK, order_state
    cdef int64_t[::1] tree = np.zeros(n_sentences + 1, dtype=np.int64)
    while top * 2 <= n_sentences:
        top *= 2
    cdef int epoch, n, a, c, d, target, reduced
    cdef float rate, label, f, g, scale = TABLE_SIZE / (2 * MAX_EXP)
    cdef float* context_row
    cdef float* target_row
    if work == NULL or kept == NULL or draws == NULL:
        free(work)
        free(kept)
        free(draws)
        raise MemoryError()
    try:
        with nogil:
            for epoch in range(epochs):
                done = 0
                # The Fenwick tree of the counts, and the order's generator, afresh each epoch.
                for i in range(1, n_sentences + 1):
                    tree[i] = counts[i - 1]
                for i in range(1, n_sentences + 1):
                    if i + (i & -i) <= n_sentences:
                        tree[i + (i & -i)] += tree[i]
                order_state = seed
                for k in range(occurrences):
                    s = take(&tree[0], n_sentences, top, splitmix64(&order_state) % <uint64_t>(occurrences - k))
                    rate = <float>max(min_alpha, alpha - (alpha - min_alpha) *
                                      ((<double>epoch * total + done) / (<double>epochs * total)))
                    done += starts[s + 1] - starts[s]
                    n = 0
                    for i in range(starts[s], starts[s + 1]):
                        if keep[ids[i]] < <uint32_t>(state >> 16):
                            state = lcg(state)
                            continue
                        state = lcg(state)
                        kept[n] = ids[i]
                        n += 1
                    for a in range(n):
                        reduced = <int>((state >> 16) % <uint64_t>window)
                        state = lcg(state)
                        for c in range(max(0, a - window + reduced), min(n, a + window + 1 - reduced)):
                            if c == a:
                                continue
                            context_row = &vectors[kept[c], 0]
                            # The draws come first so that their rows are fetched while the
                            # centre word is trained; they do not depend on the arithmetic.
                            draws[0] = kept[a]
                            for d in range(1, negative + 1):
                                draws[d] = negative_ids[draw(&cumulative[0], n_used, &bucket_start[0], shift, state)]
                                state = lcg(state)
                                prefetch(&targets[draws[d], 0], dim)
                            memset(work, 0, dim * sizeof(float))
                            for d in range(negative + 1):
                                target = draws[d]
                                if d > 0 and target == kept[a]:
                                    continue
                                label = 1 if d == 0 else 0
                                target_row = &targets[target, 0]
                                f = dot(context_row, target_row, dim)
                                if f <= -MAX_EXP or f >= MAX_EXP:
                                    continue
                                # min(): f just below MAX_EXP can round up to the table's end.
                                g = (label - table[min(<int>((f + MAX_EXP) * scale), TABLE_SIZE - 1)]) * rate
                                axpy(g, target_row, work, dim)
                                axpy(g, context_row, target_row, dim)
                            axpy(1, work, context_row, dim)
    finally:
        free(work)
        free(kept)
        free(draws)
