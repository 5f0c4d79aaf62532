"""The MI pass of PathPiece vocabulary construction: for each token occurrence of the chosen
shortest segmentation of a chunk of base symbols (ties to the longest last token, as
PathPiece-L, or at random, as PathPiece-R with the same seed), how many more tokens the best
segmentation that avoids exactly that occurrence needs (docs/algorithms.md, PathPiece), summed
per token over a corpus.

Twin: tokfx.reference.pathpiece_mi.
"""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from chunks cimport check_chunks
from shortest_path cimport LONGEST, RANDOM, UNREACHED, Paths, backtrack, backward, forward, piece_seed
from symbol_trie cimport SymbolTrie, trie_build, trie_child, trie_token

TIE_RULES = {"longest": LONGEST, "random": RANDOM}


cdef int tie_rule(str tie_break, seed) except -1:
    """forward's rule for a tie_break name; the seed checked as pathpiece-r checks it."""
    if tie_break not in TIE_RULES:
        raise ValueError(f"unknown tie_break {tie_break!r}; known: {', '.join(TIE_RULES)}")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return TIE_RULES[tie_break]


cdef int32_t occurrence_mi(const int32_t* symbols, Py_ssize_t n, const SymbolTrie* trie, int max_width,
                           Paths* paths, const int32_t* bpl, Py_ssize_t s, Py_ssize_t e) noexcept:
    """MI of the occurrence symbols[s..e] on the chosen path: the fewest tokens of a
    segmentation avoiding exactly it, minus the optimum; UNREACHED when there is none. It
    depends on the occurrence only, not on which shortest path it was chosen on (pl, bpl and sc
    are the same under either tie rule)."""
    cdef int32_t optimum = paths.pl[n - 1], best = UNREACHED, node, before
    cdef Py_ssize_t j, s2, e2
    if paths.sc[e] > 1:
        return 0  # another token ends at e on an optimal path
    for j in range(s, e):  # a token boundary after j, inside the occurrence
        if paths.pl[j] != UNREACHED and bpl[j + 1] != UNREACHED:
            best = min(best, paths.pl[j] + bpl[j + 1])
    # A token strictly covering the occurrence, starting at s2 <= s (s2 = 0 included) and
    # ending at e2 >= e, at most max_width wide.
    for s2 in range(s, max(e - max_width + 1, 0) - 1, -1):
        node = 0
        for j in range(s2, e + 1):
            node = trie_child(trie, node, symbols[j])
            if node < 0:
                break
        if node < 0:
            continue
        before = paths.pl[s2 - 1] if s2 > 0 else 0
        e2 = e
        while True:
            if trie_token(trie, node) >= 0 and (s2 != s or e2 != e) and before != UNREACHED \
                    and bpl[e2 + 1] != UNREACHED:
                best = min(best, before + 1 + bpl[e2 + 1])
            e2 += 1
            if e2 >= n or e2 - s2 + 1 > max_width:
                break
            node = trie_child(trie, node, symbols[e2])
            if node < 0:
                break
    return UNREACHED if best == UNREACHED else best - optimum


def chunk_mi(const int32_t[::1] symbols, tokens, int max_width=16, str tie_break="longest", seed=0):
    """[(start, end exclusive, token id, MI or None)] along the chosen shortest segmentation of
    one chunk (None: no segmentation avoids that occurrence). tie_break "longest": the
    PathPiece-L one; "random": the PathPiece-R one with this seed (from the seed and the chunk's
    symbols, as tokfx._path_segment draws)."""
    cdef SymbolTrie reversed_trie, trie
    cdef Paths paths
    cdef vector[int32_t] bpl, starts, ids
    cdef Py_ssize_t n = symbols.shape[0], k, e
    cdef uint64_t state = 0
    cdef int32_t mi
    cdef int rule = tie_rule(tie_break, seed)
    cdef uint64_t seed64 = seed
    trie_build(&reversed_trie, tokens, True)
    trie_build(&trie, tokens, False)
    if n == 0:
        return []
    if rule == RANDOM:
        state = piece_seed(seed64, &symbols[0], n)
    forward(&symbols[0], n, &reversed_trie, max_width, rule, &state, &paths)
    backward(&symbols[0], n, &trie, max_width, &bpl)
    backtrack(n, &paths, &starts, &ids)
    out = []
    e = n - 1
    for k in range(<Py_ssize_t>starts.size()):
        mi = occurrence_mi(&symbols[0], n, &trie, max_width, &paths, bpl.data(), starts[k], e)
        out.append((starts[k], e + 1, ids[k], None if mi == UNREACHED else mi))
        e = starts[k] - 1
    return out[::-1]


def mi_pass(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
            tokens, int max_width=16, str tie_break="longest", seed=0):
    """One round of PathPiece vocabulary construction over chunks symbols[offsets[k]:offsets[k+1]]
    occurring counts[k] times: (per token id the summed MI of its occurrences on the chosen
    shortest segmentations, times the counts, as a list; the corpus token count). tie_break and
    seed choose the segmentation as in chunk_mi: a chunk's random path depends on its symbols
    and the seed only, so all counts[k] occurrences of a chunk share one path.

    An occurrence that no segmentation can avoid (a base symbol nothing else covers) adds 0:
    base symbols are never dropped.
    """
    cdef SymbolTrie reversed_trie, trie
    cdef Paths paths
    cdef vector[int32_t] bpl, starts, ids
    cdef vector[int64_t] sums
    cdef Py_ssize_t k, n, j, e
    cdef const int32_t* chunk
    cdef uint64_t state = 0
    cdef int32_t mi
    cdef int64_t total = 0
    cdef int rule = tie_rule(tie_break, seed)
    cdef uint64_t seed64 = seed
    trie_build(&reversed_trie, tokens, True)
    trie_build(&trie, tokens, False)
    check_chunks(symbols, offsets, counts)
    sums.assign(len(tokens), 0)
    for k in range(counts.shape[0]):
        n = offsets[k + 1] - offsets[k]
        if n <= 0:
            continue
        chunk = &symbols[offsets[k]]
        if rule == RANDOM:
            state = piece_seed(seed64, chunk, n)
        forward(chunk, n, &reversed_trie, max_width, rule, &state, &paths)
        backward(chunk, n, &trie, max_width, &bpl)
        backtrack(n, &paths, &starts, &ids)
        total += counts[k] * paths.pl[n - 1]
        e = n - 1
        for j in range(<Py_ssize_t>starts.size()):
            mi = occurrence_mi(chunk, n, &trie, max_width, &paths, bpl.data(), starts[j], e)
            if mi != UNREACHED:
                sums[ids[j]] += counts[k] * mi
            e = starts[j] - 1
    return list(sums), total
