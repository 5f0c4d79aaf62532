"""SaGe's ablation loss: for each occurrence of the greedy segmentation of a piece of base
symbols, the skip-gram log-likelihood of its context lost when the token is re-tokenized without
it (docs/algorithms.md, SaGe), summed per token over a corpus.

Twin: tokfx.reference.sage_loss.
"""
from libc.math cimport exp, log1p
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from chunks cimport check_chunks
from greedy cimport greedy, longest_token
from symbol_trie cimport SymbolTrie, trie_build


cdef inline double log_sigmoid(double x) noexcept nogil:
    """log(1 / (1 + e^-x)) without overflow."""
    if x >= 0:
        return -log1p(exp(-x))
    return x - log1p(exp(x))


cdef double pair_sum(const int32_t* sequence, Py_ssize_t length, Py_ssize_t span_start,
                     Py_ssize_t span_end, const double[:, ::1] embeddings, int window) noexcept nogil:
    """Sum of log sigmoid(e_target . e_context) over ordered pairs at distance 1..window, at
    least one of the two in sequence[span_start:span_end] (the rest is context). Summed target
    by target, context left to right, dimensions in order (as the reference)."""
    cdef Py_ssize_t t, c, d
    cdef double total = 0.0, dot
    for t in range(length):
        for c in range(t - window, t + window + 1):
            if c < 0 or c == t or c >= length:
                continue
            if not (span_start <= t < span_end or span_start <= c < span_end):
                continue
            dot = 0.0
            for d in range(embeddings.shape[1]):
                dot += embeddings[sequence[t], d] * embeddings[sequence[c], d]
            total += log_sigmoid(dot)
    return total


cdef Py_ssize_t ablate(const int32_t* symbols, Py_ssize_t n, const SymbolTrie* trie, int max_width,
                       Py_ssize_t start, Py_ssize_t width, const int32_t* on_base,
                       vector[int32_t]* out) except -1:
    """The ablated re-tokenization of the token symbols[start:start+width] into out: the longest
    token strictly shorter than it at start, then greedy tokens until the cursor is on a start
    of the base segmentation (on_base[i] >= 0), tokens ending by n (a base start: the piece's
    end, or its pre-token's). Returns the index of the base token where the cursor rejoined."""
    cdef Py_ssize_t i = start
    cdef int32_t chosen
    out.clear()
    i += longest_token(symbols, start, width - 1, trie, &chosen)
    out.push_back(chosen)
    while on_base[i] < 0:
        i += longest_token(symbols, i, min(max_width, n - i), trie, &chosen)
        out.push_back(chosen)
    return on_base[i]


def sage_losses(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                tokens, const double[:, ::1] embeddings, int max_width=16, int context=2,
                const uint8_t[::1] cuts=None):
    """One SaGe round over pieces symbols[offsets[k]:offsets[k+1]] occurring counts[k] times,
    segmented greedily: (per token id the ablation loss summed over its occurrences of width > 1
    times the counts, as a list; per token id how many such occurrences; the corpus token
    count). loss = sum over base pairs - sum over ablated pairs (pair_sum), both spans with
    `context` base tokens each side taken from the same piece only.

    `cuts` (one flag per symbol, or None): cuts[i] != 0 starts a pre-token at symbol i inside
    its piece. Greedy segmentation and the ablated re-tokenization then stay inside each
    pre-token (a pre-token's end is a base start, so an ablation rejoins by then at the latest);
    the context still spans the whole piece."""
    cdef SymbolTrie trie
    cdef vector[int32_t] ids, starts, on_base, ablated, sequence
    cdef vector[Py_ssize_t] pretoken_end
    cdef vector[double] losses
    cdef vector[int64_t] occurrences
    cdef Py_ssize_t k, n, m, loc, beyond, width, left, right, j, begin, i
    cdef const int32_t* piece
    cdef int64_t total = 0
    cdef double base, without
    trie_build(&trie, tokens, False)
    check_chunks(symbols, offsets, counts)
    if embeddings.shape[0] != len(tokens):
        raise ValueError(f"{embeddings.shape[0]} embeddings for {len(tokens)} tokens")
    if cuts is not None and cuts.shape[0] != symbols.shape[0]:
        raise ValueError(f"{cuts.shape[0]} cut flags for {symbols.shape[0]} symbols")
    losses.assign(len(tokens), 0.0)
    occurrences.assign(len(tokens), 0)
    for k in range(counts.shape[0]):
        n = offsets[k + 1] - offsets[k]
        if n <= 0:
            continue
        piece = &symbols[offsets[k]]
        ids.clear()
        starts.clear()
        pretoken_end.clear()
        # Greedy over each pre-token [begin, i), its token starts shifted to the piece.
        begin = 0
        for i in range(1, n + 1):
            if i < n and (cuts is None or cuts[offsets[k] + i] == 0):
                continue
            m = ids.size()
            greedy(piece + begin, i - begin, &trie, max_width, &ids, &starts)
            for j in range(m, <Py_ssize_t>ids.size()):
                starts[j] += begin
                pretoken_end.push_back(i)
            begin = i
        m = ids.size()
        total += counts[k] * m
        starts.push_back(n)
        on_base.assign(n + 1, -1)
        for j in range(m + 1):
            on_base[starts[j]] = j
        for loc in range(m):
            width = starts[loc + 1] - starts[loc]
            if width < 2:
                continue
            # Ablation sees its pre-token only: the piece as if it ended there.
            beyond = ablate(piece, pretoken_end[loc], &trie, max_width, starts[loc], width, on_base.data(),
                            &ablated)
            left = max(0, loc - context)
            right = min(m, beyond + context)
            # base: ids[left:right]; ablated: ids[left:loc] + ablated + ids[beyond:right]
            base = pair_sum(ids.data() + left, right - left, loc - left, beyond - left, embeddings, context)
            sequence.assign(ids.begin() + left, ids.begin() + loc)
            sequence.insert(sequence.end(), ablated.begin(), ablated.end())
            sequence.insert(sequence.end(), ids.begin() + beyond, ids.begin() + right)
            without = pair_sum(sequence.data(), sequence.size(), loc - left,
                               loc - left + <Py_ssize_t>ablated.size(), embeddings, context)
            losses[ids[loc]] += counts[k] * (base - without)
            occurrences[ids[loc]] += counts[k]
    return list(losses), list(occurrences), total
