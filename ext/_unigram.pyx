"""The Unigram trainer's passes over a corpus's pieces (symbols concatenated, offsets, counts) and
a vocabulary with log probabilities (lattice.pxd): the E-step (expected token counts by
forward-backward), the Viterbi counts that pruning weighs, and each token's alternative
segmentation.

Twin: tokfx.reference.unigram.
"""
from array import array
from itertools import chain

from libc.math cimport exp
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from chunks cimport check_chunks
from lattice cimport LATTICE_NEG_INF, Best, forward_backward, viterbi, viterbi_tokens
from symbol_trie cimport SymbolTrie, trie_build, trie_child, trie_child_or_new, trie_init, trie_token


cdef int _trie_build_flat(SymbolTrie* trie, const int64_t[::1] flat, const int64_t[::1] lengths,
                          bint reverse) except -1:
    """trie_build over the tokens' symbols concatenated (`flat`, token k `lengths[k]` long):
    the same trie (node ids, token of each node), without a Python object per symbol; its edge
    table starts sized for one node per token and doubles as trie_child_or_new fills it (a
    token trie has at least one node per distinct token, often little more: sizing for a node
    per symbol, as trie_build, made the Unigram seed's tables several times larger)."""
    cdef Py_ssize_t k, j, start = 0, n_tokens = lengths.shape[0]
    cdef int64_t symbol
    cdef int32_t node
    trie_init(trie, n_tokens + 1)
    for k in range(n_tokens):
        if lengths[k] == 0:
            raise ValueError(f"token {k} is empty")
        node = 0
        for j in range(lengths[k]):
            symbol = flat[start + lengths[k] - 1 - j] if reverse else flat[start + j]
            if not 0 <= symbol < 2**31:
                raise ValueError(f"token {k}: symbol {symbol} is not in [0, 2**31)")
            node = trie_child_or_new(trie, node, <int32_t>symbol)
        if trie.token_of_node[node] < 0:
            trie.token_of_node[node] = <int32_t>k
        start += lengths[k]
    return 0


cdef int _tries(tokens, scores, SymbolTrie* trie, SymbolTrie* reversed_trie,
                vector[double]* c_scores) except -1:
    if len(scores) != len(tokens):
        raise ValueError(f"{len(scores)} scores for {len(tokens)} tokens")
    if any(token is None for token in tokens):
        if trie != NULL:
            trie_build(trie, tokens, False)
        trie_build(reversed_trie, tokens, True)
    else:
        lengths = array("q", map(len, tokens))
        try:
            flat = array("q", chain.from_iterable(tokens))
        except OverflowError:
            trie_build(reversed_trie, tokens, True)  # raises trie_build's error
            raise
        if trie != NULL:
            _trie_build_flat(trie, flat, lengths, False)
        _trie_build_flat(reversed_trie, flat, lengths, True)
    c_scores.clear()
    for score in scores:
        c_scores.push_back(score)
    return 0


def e_step(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
           tokens, scores, int max_width):
    """(expected, log_likelihood): expected[t] = sum over pieces of count x the expected number
    of occurrences of token t in the piece's lattice; log_likelihood = sum of count x log Z.
    Tokens by id (symbol sequences), scores their log probabilities."""
    cdef SymbolTrie trie, reversed_trie
    cdef vector[double] c_scores, alpha, beta, expected
    cdef vector[int32_t] walked
    cdef Py_ssize_t k, n, s, w, stride
    cdef const int32_t* piece
    cdef int32_t node, token
    cdef double log_z, likelihood = 0.0, count
    check_chunks(symbols, offsets, counts)
    _tries(tokens, scores, &trie, &reversed_trie, &c_scores)
    expected.assign(len(tokens), 0.0)
    for k in range(counts.shape[0]):
        n = offsets[k + 1] - offsets[k]
        if n == 0:
            continue
        piece = &symbols[offsets[k]]
        log_z = forward_backward(piece, n, &trie, &reversed_trie, c_scores.data(), max_width,
                                 &alpha, &beta, &walked)
        if log_z == LATTICE_NEG_INF:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        count = <double>counts[k]
        likelihood += count * log_z
        # The backward pass's walk of the trie from each start, replayed in the same order.
        stride = max_width if max_width < n else n
        for s in range(n):
            if alpha[s] == LATTICE_NEG_INF:
                continue
            for w in range(1, min(max_width, n - s) + 1):
                token = walked[s * stride + w - 1]
                if token == -2:
                    break
                if token >= 0 and beta[s + w] != LATTICE_NEG_INF:
                    expected[token] += count * exp(alpha[s] + c_scores[token] + beta[s + w] - log_z)
    return array("d", expected), likelihood


def viterbi_counts(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                   tokens, scores, int max_width):
    """(freq, corpus_tokens): freq[t] = sum over pieces of count x the occurrences of token t in
    the piece's Viterbi segmentation; corpus_tokens = sum of count x its length."""
    cdef SymbolTrie reversed_trie
    cdef vector[double] c_scores
    cdef vector[int64_t] freq
    cdef vector[int32_t] path
    cdef Best best
    cdef Py_ssize_t k, n
    cdef int64_t corpus_tokens = 0
    check_chunks(symbols, offsets, counts)
    _tries(tokens, scores, NULL, &reversed_trie, &c_scores)
    freq.assign(len(tokens), 0)
    for k in range(counts.shape[0]):
        n = offsets[k + 1] - offsets[k]
        if n == 0:
            continue
        viterbi(&symbols[offsets[k]], n, &reversed_trie, c_scores.data(), max_width, False, &best)
        path.clear()
        if viterbi_tokens(n, &best, &path) < 0:
            raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
        for token in path:
            freq[token] += counts[k]
        corpus_tokens += counts[k] * <int64_t>path.size()
    return array("q", freq), corpus_tokens


def alternatives(tokens, scores, int max_width):
    """Per token: [] for a single symbol; None when its own Viterbi segmentation is split (a
    path of other tokens scores higher); else the ids of its best segmentation that is not the
    token itself (ties to the token)."""
    cdef SymbolTrie reversed_trie
    cdef vector[double] c_scores
    cdef vector[int32_t] symbols, path
    cdef Best best
    cdef Py_ssize_t n
    _tries(tokens, scores, NULL, &reversed_trie, &c_scores)
    found = []
    for token_id, token in enumerate(tokens):
        n = len(token)
        if n <= 1:
            found.append([])
            continue
        symbols.clear()
        for symbol in token:
            symbols.push_back(symbol)
        viterbi(symbols.data(), n, &reversed_trie, c_scores.data(), max_width, True, &best)
        path.clear()
        if viterbi_tokens(n, &best, &path) < 0:
            found.append([])  # no other path: the token has no alternative
        elif best.score[n - 1] > c_scores[token_id]:
            found.append(None)
        else:
            found.append(list(path))
    return found
