"""The Unigram trainer's passes over a corpus's pieces (symbols concatenated, offsets, counts) and
a vocabulary with log probabilities (lattice.pxd): the E-step (expected token counts by
forward-backward), the Viterbi counts that pruning weighs, and each token's alternative
segmentation.

Twin: tokfx.reference.unigram.
"""
import os
from array import array
from concurrent.futures import ThreadPoolExecutor

from cpython.array cimport array as c_array, clone

from libc.math cimport exp, log
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from chunks cimport check_chunks
from heap cimport return_free_memory
from lattice cimport LATTICE_NEG_INF, Best, Edges, forward_backward, viterbi, viterbi_tokens
from walk_trie cimport WalkTrie, walk_trie_build


cdef tuple _packed(tokens):
    """(symbols, offsets) of a PackedTokens (tokfx._packed_tokens), read as they are, checked
    as the tries need them: no empty token, no negative symbol."""
    try:
        symbols, offsets = tokens.symbols, tokens.offsets
    except AttributeError:
        raise TypeError(f"tokens must be a PackedTokens (tokfx._packed_tokens), not {type(tokens).__name__}") from None
    _check_packed(symbols, offsets)
    return symbols, offsets


cdef int _check_packed(const int32_t[::1] symbols, const int64_t[::1] offsets) except -1:
    """What walk_trie_build takes for granted (PackedTokens allows both: n-grams may be negative)."""
    cdef Py_ssize_t k, j
    for k in range(offsets.shape[0] - 1):
        if offsets[k + 1] == offsets[k]:
            raise ValueError(f"token {k} is empty")
        for j in range(offsets[k], offsets[k + 1]):
            if symbols[j] < 0:
                raise ValueError(f"token {k}: symbol {symbols[j]} is not in [0, 2**31)")
    return 0


cdef inline double _digamma(double x) noexcept nogil:
    """sentencepiece's Digamma (unigram_model_trainer.cc): the recurrence up to 7, then the
    asymptotic series. Twin: tokfx.reference.unigram.digamma, equal to the last bit (the same
    operations in the same order, libm's log as math.log)."""
    cdef double result = 0.0, xx, xx2, xx4
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + \
        (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4


def digamma(double x):
    return _digamma(x)


def digammas(const double[::1] values):
    """[digamma(v) for v in values], as array('d')."""
    cdef c_array out = clone(array("d"), values.shape[0], False)
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        out.data.as_doubles[i] = _digamma(values[i])
    return out


# The passes over the corpus cut it into PASS_RANGES ranges of pieces of about equal symbols
# (piece_ranges), run the ranges on threads (each pass releases the GIL) and add the ranges'
# sums up in range order. The ranges depend on the corpus alone, so the float sums, and the
# trained vocabulary, are the same whatever the number of threads.
PASS_RANGES = 8


def piece_ranges(const int64_t[::1] offsets, int ranges=PASS_RANGES):
    """[(first, last piece + 1)] of `ranges` ranges: range r starts at the first piece whose
    offset is at least r / ranges of the symbols (ranges may be empty)."""
    cdef Py_ssize_t pieces = offsets.shape[0] - 1, k = 0, r
    cdef int64_t total = offsets[pieces]
    bounds = []
    for r in range(ranges):
        while k < pieces and offsets[k] * ranges < r * total:
            k += 1
        bounds.append(k)
    bounds.append(pieces)
    return list(zip(bounds[:-1], bounds[1:]))


def pass_threads():
    """The threads a pass runs on: the CPUs this process may use, at most PASS_RANGES."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, PASS_RANGES))


def _in_order(job, items):
    """job(item) for each item, on pass_threads() threads; the results in the items' order, each
    as soon as it and those before it are done (so few ranges' sums are held at once)."""
    threads = pass_threads()
    if threads == 1:
        yield from map(job, items)
        return
    with ThreadPoolExecutor(threads) as pool:
        yield from pool.map(job, items)


def _summed_in_order(job, ranges, Py_ssize_t size, typecode):
    """job(range) -> (array(typecode) of `size` values, a number) for each range, on threads;
    the arrays added element by element and the numbers added, in range order (from 0)."""
    cdef c_array total = clone(array(typecode), size, True)
    cdef c_array part
    cdef Py_ssize_t t
    cdef bint floats = typecode == "d"
    number = 0.0 if floats else 0
    for part, part_number in _in_order(job, ranges):
        if floats:
            for t in range(size):
                total.data.as_doubles[t] += part.data.as_doubles[t]
        else:
            for t in range(size):
                total.data.as_longlongs[t] += part.data.as_longlongs[t]
        number += part_number
    return total, number


cdef class _Lattices:
    """A vocabulary's trie and scores, built once for a pass and read by its threads: the
    tokens' trie for forward-backward (`forward`), else the reversed tokens' for Viterbi. Tokens
    by id, a PackedTokens (a repeated token keeps its lowest id)."""
    cdef WalkTrie trie  # of the tokens, or with `forward` False of the reversed tokens
    cdef vector[double] scores
    cdef int max_width
    # The tokens' packed arrays, held (not copied): prune_keys walks each token's own symbols.
    cdef object symbols, offsets

    def __cinit__(self, tokens, scores, int max_width, bint forward):
        if len(scores) != len(tokens):
            raise ValueError(f"{len(scores)} scores for {len(tokens)} tokens")
        self.max_width = max_width
        for score in scores:
            self.scores.push_back(score)
        self.symbols, self.offsets = _packed(tokens)
        cdef const int32_t[::1] symbols = self.symbols
        cdef const int64_t[::1] offsets = self.offsets
        with nogil:
            walk_trie_build(&self.trie, &symbols[0] if symbols.shape[0] else NULL, &offsets[0],
                            offsets.shape[0] - 1, not forward)

    def expected(self, const int32_t[::1] symbols, const int64_t[::1] offsets,
                 const int64_t[::1] counts, Py_ssize_t first, Py_ssize_t last):
        """(expected, log_likelihood) of pieces first..last-1, as e_step."""
        cdef c_array expected = clone(array("d"), self.scores.size(), True)
        cdef double likelihood = 0.0
        cdef int failed
        with nogil:
            failed = self._expect(&symbols[0] if symbols.shape[0] else NULL, &offsets[0], &counts[0],
                                  first, last, expected.data.as_doubles, &likelihood)
        if failed:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        return expected, likelihood

    cdef int _expect(self, const int32_t* symbols, const int64_t* offsets, const int64_t* counts,
                     Py_ssize_t first, Py_ssize_t last, double* expected,
                     double* likelihood) except -1 nogil:
        """1 if a piece has no segmentation."""
        cdef vector[double] alpha, beta
        cdef Edges edges
        cdef Py_ssize_t k, n, s, j, w
        cdef const int32_t* piece
        cdef int32_t token
        cdef double log_z, count
        cdef const double* scores = self.scores.data()
        for k in range(first, last):
            n = offsets[k + 1] - offsets[k]
            if n == 0:
                continue
            piece = symbols + offsets[k]
            log_z = forward_backward(piece, n, &self.trie, scores, self.max_width, &alpha, &beta, &edges)
            if log_z == LATTICE_NEG_INF:
                return 1
            count = <double>counts[k]
            likelihood[0] += count * log_z
            # forward_backward's edges, by start then width, as the twin's loops.
            for s in range(n):
                if alpha[s] == LATTICE_NEG_INF:
                    continue
                for j in range(edges.by_start_row[s], edges.by_start_row[s + 1]):
                    w = edges.by_start[j].at
                    token = edges.by_start[j].token
                    if beta[s + w] != LATTICE_NEG_INF:
                        expected[token] += count * exp(alpha[s] + scores[token] + beta[s + w] - log_z)
        return 0

    def prune_keys(self, const int64_t[::1] freq, int64_t pieces, Py_ssize_t first, Py_ssize_t last):
        """prune_keys() of tokens first..last-1: (kinds array('b'), values array('d'))."""
        cdef const int32_t[::1] symbols = self.symbols
        cdef const int64_t[::1] offsets = self.offsets
        cdef c_array kinds = clone(array("b"), last - first, False)
        cdef c_array values = clone(array("d"), last - first, False)
        with nogil:
            self._prune_keys(&symbols[0] if symbols.shape[0] else NULL, &offsets[0],
                             &freq[0] if freq.shape[0] else NULL, freq.shape[0], pieces, first, last,
                             kinds.data.as_schars, values.data.as_doubles)
        return kinds, values

    cdef int _prune_keys(self, const int32_t* symbols, const int64_t* offsets, const int64_t* freq,
                         Py_ssize_t n_tokens, int64_t pieces, Py_ssize_t first, Py_ssize_t last,
                         signed char* kinds, double* values) except -1 nogil:
        """Each token's alternative (_alternatives), then its key as sentencepiece's
        PruneSentencePieces weighs it: kind 0 (unused by the Viterbi segmentations, or split
        by its own) with its score; kind 1 with its loss; kind 2 (no alternative) with 0."""
        cdef vector[int32_t] alt_kinds, paths
        cdef Py_ssize_t k, j, at = 0, n
        cdef int64_t total = 0, f
        cdef double log_total, share, log_prob, log_total_alt, log_prob_alt
        for k in range(n_tokens):
            total += freq[k]
        log_total = log(<double>total) if total > 0 else 0.0
        self._alternatives(symbols, offsets, first, last, &alt_kinds, &paths)
        for k in range(last - first):
            f = freq[first + k]
            if alt_kinds[k] == 2:
                n = paths[at]
            if f == 0 or alt_kinds[k] == 1:
                kinds[k], values[k] = 0, self.scores[first + k]
            elif alt_kinds[k] == 0:
                kinds[k], values[k] = 2, 0.0
            else:
                share = <double>f / <double>pieces
                log_prob = log(<double>f) - log_total
                # Without the token its occurrences go to its alternative's tokens.
                log_total_alt = log(<double>(total + f * (n - 1)))
                log_prob_alt = 0.0
                for j in range(n):
                    log_prob_alt += log(<double>(freq[paths[at + 1 + j]] + f)) - log_total_alt
                kinds[k], values[k] = 1, share * (log_prob - log_prob_alt)
            if alt_kinds[k] == 2:
                at += 1 + n
        return 0

    cdef int _alternatives(self, const int32_t* symbols, const int64_t* offsets, Py_ssize_t first,
                           Py_ssize_t last, vector[int32_t]* kinds, vector[int32_t]* paths) except -1 nogil:
        """Per token first..last-1, its kind (0: a single symbol or no other path, 1: split by
        its own Viterbi segmentation, 2: the best other path, appended to `paths` as its length
        then its ids; ties to the token)."""
        cdef vector[int32_t] path
        cdef Best best
        cdef Py_ssize_t k, j, n
        for k in range(first, last):
            n = offsets[k + 1] - offsets[k]
            if n > 1:
                viterbi(symbols + offsets[k], n, &self.trie, self.scores.data(), self.max_width, True,
                        &best)
                path.clear()
            if n <= 1 or viterbi_tokens(n, &best, &path) < 0:
                kinds.push_back(0)  # a single symbol, or no other path: no alternative
            elif best.score[n - 1] > self.scores[k]:
                kinds.push_back(1)
            else:
                kinds.push_back(2)
                paths.push_back(<int32_t>path.size())
                for j in range(<Py_ssize_t>path.size()):
                    paths.push_back(path[j])
        return 0

    def viterbi_counts(self, const int32_t[::1] symbols, const int64_t[::1] offsets,
                       const int64_t[::1] counts, Py_ssize_t first, Py_ssize_t last):
        """(freq, corpus_tokens) of pieces first..last-1, as viterbi_counts."""
        cdef c_array freq = clone(array("q"), self.scores.size(), True)
        cdef int64_t corpus_tokens = 0
        cdef int failed
        with nogil:
            failed = self._viterbi_counts(&symbols[0] if symbols.shape[0] else NULL, &offsets[0],
                                          &counts[0], first, last, freq.data.as_longlongs, &corpus_tokens)
        if failed:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        return freq, corpus_tokens

    cdef int _viterbi_counts(self, const int32_t* symbols, const int64_t* offsets, const int64_t* counts,
                             Py_ssize_t first, Py_ssize_t last, long long* freq,
                             int64_t* corpus_tokens) except -1 nogil:
        """1 if a piece has no segmentation."""
        cdef vector[int32_t] path
        cdef Best best
        cdef Py_ssize_t k, n
        cdef int32_t token
        for k in range(first, last):
            n = offsets[k + 1] - offsets[k]
            if n == 0:
                continue
            viterbi(symbols + offsets[k], n, &self.trie, self.scores.data(), self.max_width,
                    False, &best)
            path.clear()
            if viterbi_tokens(n, &best, &path) < 0:
                return 1
            for token in path:
                freq[token] += counts[k]
            corpus_tokens[0] += counts[k] * <int64_t>path.size()
        return 0


def e_step(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
           tokens, scores, int max_width):
    """(expected, log_likelihood): expected[t] = sum over pieces of count x the expected number
    of occurrences of token t in the piece's lattice; log_likelihood = sum of count x log Z.
    Tokens by id (symbol sequences), scores their log probabilities. Summed per piece range,
    then the ranges in order (PASS_RANGES)."""
    check_chunks(symbols, offsets, counts)
    cdef _Lattices lattices = _Lattices(tokens, scores, max_width, True)
    found = _summed_in_order(lambda r: lattices.expected(symbols, offsets, counts, *r),
                             piece_ranges(offsets), len(tokens), "d")
    lattices = None  # its trie freed, and given back before the M-step's Python objects are made
    return_free_memory()
    return found


def viterbi_counts(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                   tokens, scores, int max_width):
    """(freq, corpus_tokens): freq[t] = sum over pieces of count x the occurrences of token t in
    the piece's Viterbi segmentation; corpus_tokens = sum of count x its length."""
    check_chunks(symbols, offsets, counts)
    cdef _Lattices lattices = _Lattices(tokens, scores, max_width, False)
    found = _summed_in_order(lambda r: lattices.viterbi_counts(symbols, offsets, counts, *r),
                             piece_ranges(offsets), len(tokens), "q")
    lattices = None  # as e_step
    return_free_memory()
    return found


def prune_keys(tokens, scores, const int64_t[::1] freq, int64_t pieces, int max_width):
    """Per token, (kinds array('b'), values array('d')), what the prune orders by (lowest first):
    kind 0, the token is unused by the Viterbi segmentations (freq 0) or its own Viterbi
    segmentation is split (a path of other tokens scores higher), value its score; kind 1, the
    value is the likelihood lost when its occurrences go to its best segmentation that is not
    itself (ties to the token), freq / pieces x (log p(token) - sum of log p(alternative's
    tokens) with the token gone), as sentencepiece's PruneSentencePieces; kind 2, a single
    symbol or a token with no alternative, value 0. Tokens by id (a PackedTokens); `freq`:
    Viterbi counts (viterbi_counts); `pieces`: the summed pre-token counts. Ranges of tokens run on threads."""
    cdef _Lattices lattices = _Lattices(tokens, scores, max_width, False)
    cdef Py_ssize_t n = len(tokens), r
    if freq.shape[0] != n:
        raise ValueError(f"{freq.shape[0]} Viterbi counts for {n} tokens")
    kinds, values = array("b"), array("d")
    bounds = [n * r // PASS_RANGES for r in range(PASS_RANGES + 1)]
    for part_kinds, part_values in _in_order(lambda r: lattices.prune_keys(freq, pieces, *r),
                                             zip(bounds, bounds[1:])):
        kinds += part_kinds
        values += part_values
    return kinds, values
