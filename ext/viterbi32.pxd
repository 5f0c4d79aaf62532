"""The likelihood segmenter's Viterbi in float32 (sentencepiece's Unigram arithmetic, over a whole
text: tokfx._path_segment), over the double array of the reversed tokens with each slot's score
beside it: -inf for a slot that spells no token, as for a position with no path, so the inner
loop has no branch but the walk's own end. The same choices as lattice.pxd's viterbi with
float32 (the later, longer, width wins ties; a path score is the float32 sum of float32
scores from `start`). It also reports the smallest margin of its choices (best candidate minus
runner-up at each position), which viterbi32_segments.pxd needs to prove a cached path right.
Twin: tokfx.reference.unigram.viterbi(float32=True, margins=...).
"""
from libc.stdint cimport int32_t
from libcpp.vector cimport vector

from double_array cimport DoubleArray, da_child

cdef extern from *:
    """
    #include <cstdint>
    #include <cstring>
    #include <limits>
    static const float VITERBI32_NEG_INF = -std::numeric_limits<float>::infinity();

    // (*top, *width, *slot) = (score, w, node) if score >= *top, by masks rather than a
    // branch: which candidate wins follows the text, so a branch would mispredict often.
    static inline void viterbi32_take(float score, int32_t w, int32_t node, float* top, int32_t* width,
                                      int32_t* slot) {
        uint32_t mask = -(uint32_t)(score >= *top), s, t;
        std::memcpy(&s, &score, 4);
        std::memcpy(&t, top, 4);
        t = (s & mask) | (t & ~mask);
        std::memcpy(top, &t, 4);
        *width = (int32_t)(((uint32_t)w & mask) | ((uint32_t)*width & ~mask));
        *slot = (int32_t)(((uint32_t)node & mask) | ((uint32_t)*slot & ~mask));
    }
    """
    const float VITERBI32_NEG_INF
    void viterbi32_take(float score, int32_t w, int32_t node, float* top, int32_t* width, int32_t* slot) noexcept nogil


cdef struct Best32:
    vector[float] score  # score[e + 1]: the best path score of symbols[0..e]; score[0] the start
    vector[int32_t] width  # of the chosen last token ending at e (0: no path)
    vector[int32_t] slot  # its slot in the double array


cdef inline int slot_scores(const DoubleArray* da, const double* scores, vector[float]* out) except -1:
    """Per slot of da: its token's score as a float32, -inf where it spells no token."""
    cdef size_t k
    out.assign(da.token.size(), VITERBI32_NEG_INF)
    for k in range(da.token.size()):
        if da.token[k] >= 0:
            out[0][k] = <float>scores[da.token[k]]
    return 0


cdef inline int viterbi32(const int32_t* symbols, Py_ssize_t n, const DoubleArray* reversed_array,
                          const float* scores, int max_width, float start, Best32* best,
                          vector[int32_t]* tokens, double* margin) except -2 nogil:
    """Appends the best path's token ids to tokens, first token first; -1 if symbols[:n] has no
    path (n > 0). best.score[n] is then the path's score, and *margin the smallest difference
    between the chosen candidate and the best other one at any position that had two finite
    candidates (0 at a tie; +inf where no position had two)."""
    cdef Py_ssize_t e, w, limit, first = tokens.size(), k
    cdef int32_t node, width, slot
    cdef float top, second, candidate, lower
    margin[0] = -VITERBI32_NEG_INF
    best.score.resize(n + 1)
    best.width.resize(n)
    best.slot.resize(n)
    cdef float* path = best.score.data()
    path[0] = start
    for e in range(n):
        node = 0
        top = VITERBI32_NEG_INF
        width = 0
        slot = -1
        second = VITERBI32_NEG_INF
        limit = max_width if max_width < e + 1 else e + 1
        for w in range(1, limit + 1):
            node = da_child(reversed_array, node, symbols[e - w + 1])
            if node < 0:
                break
            candidate = path[e + 1 - w] + scores[node]
            lower = candidate if candidate < top else top  # the runner-up is the greater of the losers
            second = lower if lower > second else second
            viterbi32_take(candidate, <int32_t>w, node, &top, &width, &slot)
        if second != VITERBI32_NEG_INF and <double>top - <double>second < margin[0]:
            margin[0] = <double>top - <double>second
        path[e + 1] = top
        best.width[e] = width if top != VITERBI32_NEG_INF else 0
        best.slot[e] = slot
    if n and best.width[n - 1] == 0:
        return -1
    e = n - 1
    while e >= 0:
        tokens.push_back(reversed_array.token[best.slot[e]])
        e -= best.width[e]
    k = tokens.size() - 1
    while first < k:
        tokens[0][first], tokens[0][k] = tokens[0][k], tokens[0][first]
        first += 1
        k -= 1
    return 0
