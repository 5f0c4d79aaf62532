"""Segmentation over any vocabulary, and the MI pass of PathPiece vocabulary construction, over
a piece's base symbols (bytes, or with the cjk alphabet its remapped symbols).

- pathpiece-l / pathpiece-r: fewest tokens (forward DP over end positions, widths 1..L tried in
  increasing order); among equal paths the longest last token (L) or a uniform random one by
  reservoir sampling (R), then a backtrack from the end.
- greedy: the longest token that is a prefix of the rest, left to right.
- MI: for each token occurrence of the PathPiece-L segmentation, how many more tokens the best
  segmentation that avoids exactly that occurrence needs (ALGORITHMS.md, PathPiece).
- The most frequent n-grams (an initial vocabulary).
- SaGe ablation loss: for each occurrence of the greedy segmentation, the skip-gram log-likelihood
  of its context lost when the token is re-tokenized without it (ALGORITHMS.md, SaGe).

Membership: a trie of the tokens' symbols (reversed for the DP, which walks back from each end
position and so finds every width ending there in one pass), its edges in one open-addressing
hash table. Twins: tokfx.reference.pathpiece, tokfx.reference.sage (the SaGe loss).
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.math cimport exp, log1p
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.algorithm cimport sort
from libcpp.vector cimport vector

from cjk_remap cimport cjk_symbols
from id_list cimport id_objects, ids_as_list
from piece_cache cimport (CacheSlot, PieceCache, cache_append_ids, cache_init, cache_slot,
                          cache_store, cacheable, hash_piece, mix)

cdef enum:
    LONGEST = 0
    RANDOM = 1
    GREEDY = 2
    UNREACHED = 2147483647  # INT32_MAX: no path (yet)
    # The root's children for symbols below this sit in an array: every walk starts there.
    ROOT_TABLE = 1024

MODES = {"pathpiece-l": LONGEST, "pathpiece-r": RANDOM, "greedy": GREEDY}

cdef uint64_t NO_EDGE = 0xFFFFFFFFFFFFFFFFULL  # node ids and symbols are below 2**31


cdef inline uint64_t next_random(uint64_t* state) noexcept nogil:
    """splitmix64."""
    state[0] += 0x9E3779B97F4A7C15ULL
    return mix(state[0])


cdef inline uint64_t piece_seed(uint64_t seed, const int32_t* symbols, Py_ssize_t n) noexcept nogil:
    """The random state of one piece: from the seed and the piece's symbols only, so a piece
    segments the same wherever it occurs and however the text around it was cut."""
    cdef uint64_t h = mix(seed ^ <uint64_t>n)
    cdef Py_ssize_t i
    for i in range(n):
        h = mix(h ^ <uint32_t>symbols[i])
    return h


cdef struct Edge:
    uint64_t key  # parent node << 32 | symbol, or NO_EDGE
    int32_t child


@cython.final
cdef class SymbolTrie:
    """Tokens' symbol sequences (reversed with `reverse`); node 0 is the root."""
    cdef vector[Edge] _edges
    cdef vector[int32_t] _token_of_node  # the token id spelled by the path to a node, or -1
    cdef size_t _mask
    cdef int32_t _root_children[ROOT_TABLE]  # -1: none

    def __init__(self, tokens, bint reverse):
        """tokens: by id, each a sequence of base symbols, or None to leave that id out
        (top_ngrams starts empty and adds paths with _child_or_new)."""
        cdef int32_t node
        total = sum(len(t) for t in tokens if t is not None)
        slots = 2
        while slots < 2 * total:
            slots *= 2
        self._edges.assign(slots, Edge(NO_EDGE, 0))
        self._mask = slots - 1
        self._token_of_node.push_back(-1)
        cdef int k
        for k in range(ROOT_TABLE):
            self._root_children[k] = -1
        for token_id, token in enumerate(tokens):
            if token is None:
                continue
            if not token:
                raise ValueError(f"token {token_id} is empty")
            node = 0
            for symbol in (reversed(token) if reverse else token):
                if not 0 <= symbol < 2**31:
                    raise ValueError(f"token {token_id}: symbol {symbol} is not in [0, 2**31)")
                node = self._child_or_new(node, symbol)
            if self._token_of_node[node] < 0:  # a repeated token keeps its lowest id
                self._token_of_node[node] = token_id

    cdef int _double_edges(self) except -1:
        cdef vector[Edge] old
        old.swap(self._edges)
        self._edges.assign(2 * old.size(), Edge(NO_EDGE, 0))
        self._mask = self._edges.size() - 1
        cdef size_t i
        for edge in old:
            if edge.key != NO_EDGE:
                i = mix(edge.key) & self._mask
                while self._edges[i].key != NO_EDGE:
                    i = (i + 1) & self._mask
                self._edges[i] = edge
        return 0

    cdef int32_t _child_or_new(self, int32_t node, int32_t symbol) except -1:
        """The child of node along symbol, made (a new node id) if missing."""
        cdef uint64_t key = (<uint64_t>(<uint32_t>node) << 32) | <uint32_t>symbol
        if 2 * self._token_of_node.size() >= self._edges.size():  # at most half full
            self._double_edges()
        cdef size_t i = mix(key) & self._mask
        while self._edges[i].key != NO_EDGE:
            if self._edges[i].key == key:
                return self._edges[i].child
            i = (i + 1) & self._mask
        self._edges[i] = Edge(key, self._token_of_node.size())
        self._token_of_node.push_back(-1)
        if node == 0 and <uint32_t>symbol < ROOT_TABLE:  # negative symbols live in the hash table only
            self._root_children[symbol] = self._edges[i].child
        return self._edges[i].child

    cdef inline int32_t child(self, int32_t node, int32_t symbol) noexcept nogil:
        """The child of node along symbol, or -1."""
        if node == 0 and <uint32_t>symbol < ROOT_TABLE:  # negative symbols live in the hash table only
            return self._root_children[symbol]
        cdef uint64_t key = (<uint64_t>(<uint32_t>node) << 32) | <uint32_t>symbol
        cdef size_t i = mix(key) & self._mask
        cdef const Edge* edges = self._edges.data()
        while edges[i].key != key:
            if edges[i].key == NO_EDGE:
                return -1
            i = (i + 1) & self._mask
        return edges[i].child

    cdef inline int32_t token(self, int32_t node) noexcept nogil:
        return self._token_of_node[node]


cdef struct Paths:
    # Per end position e of a piece: pl = fewest tokens for symbols[0..e], width and token of
    # the chosen last token, sc = how many widths reach pl[e].
    vector[int32_t] pl
    vector[int32_t] width
    vector[int32_t] token
    vector[int32_t] sc


cdef int forward(const int32_t* symbols, Py_ssize_t n, SymbolTrie reversed_trie, int max_width,
                 int mode, uint64_t* state, Paths* paths) except -1:
    cdef Py_ssize_t e, w
    cdef int32_t node, token, cost, best, ties, chosen_width, chosen_token
    paths.pl.resize(n)
    paths.width.resize(n)
    paths.token.resize(n)
    paths.sc.resize(n)
    for e in range(n):
        node = 0
        best = UNREACHED
        ties = 0
        chosen_width = 0
        chosen_token = -1
        for w in range(1, min(max_width, e + 1) + 1):
            node = reversed_trie.child(node, symbols[e - w + 1])
            if node < 0:
                break
            token = reversed_trie.token(node)
            if token < 0 or (w <= e and paths.pl[e - w] == UNREACHED):
                continue
            cost = (paths.pl[e - w] if w <= e else 0) + 1
            if cost < best:
                best, ties, chosen_width, chosen_token = cost, 1, w, token
            elif cost == best:
                ties += 1
                # Longest: the later width is the longer. Random: reservoir sampling keeps
                # each of the tied widths with probability 1/ties.
                if mode == LONGEST or next_random(state) % <uint64_t>ties == 0:
                    chosen_width, chosen_token = w, token
        paths.pl[e], paths.width[e], paths.token[e], paths.sc[e] = best, chosen_width, chosen_token, ties
    if n and paths.pl[n - 1] == UNREACHED:
        raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
    return 0


cdef int backtrack(Py_ssize_t n, Paths* paths, vector[int32_t]* starts, vector[int32_t]* tokens) except -1:
    """The chosen path's token starts and ids, last token first."""
    cdef Py_ssize_t e = n - 1
    starts.clear()
    tokens.clear()
    while e >= 0:
        starts.push_back(e - paths.width[e] + 1)
        tokens.push_back(paths.token[e])
        e -= paths.width[e]
    return 0


cdef Py_ssize_t longest_token(const int32_t* symbols, Py_ssize_t at, Py_ssize_t limit,
                              SymbolTrie trie, int32_t* chosen) except -1:
    """The width of the longest token of at most `limit` symbols at symbols[at:], its id in
    chosen."""
    cdef Py_ssize_t w, taken = 0
    cdef int32_t node = 0, token
    for w in range(1, limit + 1):
        node = trie.child(node, symbols[at + w - 1])
        if node < 0:
            break
        token = trie.token(node)
        if token >= 0:
            taken, chosen[0] = w, token
    if taken == 0:
        raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
    return taken


cdef int greedy(const int32_t* symbols, Py_ssize_t n, SymbolTrie trie, int max_width,
                vector[int32_t]* out, vector[int32_t]* starts=NULL) except -1:
    """Appends the ids of the greedy tokens to out (and their starts to starts, if given)."""
    cdef Py_ssize_t s = 0, taken
    cdef int32_t chosen
    while s < n:
        taken = longest_token(symbols, s, min(max_width, n - s), trie, &chosen)
        out.push_back(chosen)
        if starts != NULL:
            starts.push_back(s)
        s += taken
    return 0


cdef int backward(const int32_t* symbols, Py_ssize_t n, SymbolTrie trie, int max_width,
                  vector[int32_t]* bpl) except -1:
    """bpl[i] = fewest tokens for symbols[i..n-1]; bpl[n] = 0."""
    cdef Py_ssize_t i, w
    cdef int32_t node, best
    bpl.resize(n + 1)
    bpl[0][n] = 0
    for i in range(n - 1, -1, -1):
        node = 0
        best = UNREACHED
        for w in range(1, min(max_width, n - i) + 1):
            node = trie.child(node, symbols[i + w - 1])
            if node < 0:
                break
            if trie.token(node) >= 0 and bpl[0][i + w] != UNREACHED:
                best = min(best, bpl[0][i + w] + 1)
        bpl[0][i] = best
    return 0


cdef int32_t occurrence_mi(const int32_t* symbols, Py_ssize_t n, SymbolTrie trie, int max_width,
                           Paths* paths, const int32_t* bpl, Py_ssize_t s, Py_ssize_t e) noexcept:
    """MI of the occurrence symbols[s..e] on the chosen path: the fewest tokens of a
    segmentation avoiding exactly it, minus the optimum; UNREACHED when there is none."""
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
            node = trie.child(node, symbols[j])
            if node < 0:
                break
        if node < 0:
            continue
        before = paths.pl[s2 - 1] if s2 > 0 else 0
        e2 = e
        while True:
            if trie.token(node) >= 0 and (s2 != s or e2 != e) and before != UNREACHED \
                    and bpl[e2 + 1] != UNREACHED:
                best = min(best, before + 1 + bpl[e2 + 1])
            e2 += 1
            if e2 >= n or e2 - s2 + 1 > max_width:
                break
            node = trie.child(node, symbols[e2])
            if node < 0:
                break
    return UNREACHED if best == UNREACHED else best - optimum


@cython.final
cdef class PathSegmenter:
    """Segments pieces with pathpiece-l, pathpiece-r or greedy over a vocabulary, with a bounded
    cache piece bytes -> ids (a piece segments the same wherever it occurs, pathpiece-r too).

    Not thread-safe: the cache and scratch buffers are shared by all calls.
    """
    cdef SymbolTrie _trie
    cdef int _mode
    cdef int _max_width
    cdef uint64_t _seed
    cdef bint _remap
    cdef int32_t _prefix_ids[4]
    cdef Paths _paths
    cdef vector[int32_t] _symbols
    cdef vector[int32_t] _starts
    cdef vector[int32_t] _tokens
    cdef vector[int32_t] _out
    cdef PieceCache _cache
    cdef list _id_objects  # id_list.id_objects

    def __init__(self, tokens, mode, int max_width=16, seed=0, cjk_prefix_ids=None,
                 cache_size=1 << 18):
        """tokens: by id, each a sequence of base symbols, or None for an id that segmentation
        never produces (a special token). Tokens wider than max_width symbols are never used."""
        if mode not in MODES:
            raise ValueError(f"unknown segmenter {mode!r}; known: {', '.join(sorted(MODES))}")
        if max_width < 1:
            raise ValueError(f"max_width must be at least 1, got {max_width}")
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        cache_init(&self._cache, cache_size)
        self._mode = MODES[mode]
        self._max_width = max_width
        self._seed = seed
        self._trie = SymbolTrie(tokens, self._mode != GREEDY)
        self._id_objects = id_objects(len(tokens) - 1)
        self._remap = cjk_prefix_ids is not None
        if self._remap:
            prefixes = list(cjk_prefix_ids)
            if len(prefixes) != 4:
                raise ValueError(f"cjk_prefix_ids must hold 4 entries, got {len(prefixes)}")
            for k in range(4):
                self._prefix_ids[k] = prefixes[k]

    cdef int _segment_into_out(self, const int32_t* symbols, Py_ssize_t n) except -1:
        cdef uint64_t state
        cdef Py_ssize_t k
        if self._mode == GREEDY:
            return greedy(symbols, n, self._trie, self._max_width, &self._out)
        state = piece_seed(self._seed, symbols, n) if self._mode == RANDOM else 0
        forward(symbols, n, self._trie, self._max_width, self._mode, &state, &self._paths)
        backtrack(n, &self._paths, &self._starts, &self._tokens)
        for k in range(<Py_ssize_t>self._tokens.size() - 1, -1, -1):
            self._out.push_back(self._tokens[k])
        return 0

    def segment(self, const int32_t[::1] symbols):
        """The token ids of one piece given as base symbols."""
        self._out.clear()
        if symbols.shape[0]:
            self._segment_into_out(&symbols[0], symbols.shape[0])
        return ids_as_list(self._out, self._id_objects)

    def encode_pieces(self, bytes data, const int64_t[::1] ends):
        """The concatenated ids of the pieces data[ends[k-1]:ends[k]] (ends exclusive, ascending,
        the last equal to len(data)); as BPEEncoder.encode_pieces."""
        cdef const unsigned char* text = <const unsigned char*>PyBytes_AS_STRING(data)
        cdef int64_t size = PyBytes_GET_SIZE(data)
        cdef int64_t start = 0, end, i
        cdef Py_ssize_t k, n, first_id
        cdef uint64_t h = 0
        cdef CacheSlot* slot
        cdef bint cached
        self._out.clear()
        for k in range(ends.shape[0]):
            end = ends[k]
            if end < start or end > size:
                raise ValueError(f"ends[{k}] = {end} is not in [{start}, {size}]")
            cached = cacheable(&self._cache, end - start)
            if cached:
                h = hash_piece(text + start, end - start)
                slot = cache_slot(&self._cache, text + start, end - start, h)
                if slot.piece_size != 0:
                    cache_append_ids(&self._cache, slot, &self._out)
                    start = end
                    continue
            first_id = self._out.size()
            self._symbols.resize(end - start)
            if self._remap:
                n = cjk_symbols(text + start, end - start, self._prefix_ids, self._symbols.data())
            else:
                n = end - start
                for i in range(n):
                    self._symbols[i] = text[start + i]
            if n:
                self._segment_into_out(self._symbols.data(), n)
            if cached:
                cache_store(&self._cache, text + start, end - start, h, self._out.data() + first_id,
                            self._out.size() - first_id)
            start = end
        if start != size:
            raise ValueError(f"the last end is {start}, not len(data) = {size}")
        return ids_as_list(self._out, self._id_objects)


cdef int check_chunks(const int32_t[::1] symbols, const int64_t[::1] offsets,
                      const int64_t[::1] counts) except -1:
    """offsets: one more than counts, from 0, ascending, ending at len(symbols)."""
    cdef Py_ssize_t k
    if offsets.shape[0] != counts.shape[0] + 1:
        raise ValueError(f"{offsets.shape[0]} offsets for {counts.shape[0]} chunks")
    if offsets[0] != 0 or offsets[offsets.shape[0] - 1] != symbols.shape[0]:
        raise ValueError(f"offsets must run from 0 to len(symbols) = {symbols.shape[0]}")
    for k in range(counts.shape[0]):
        if offsets[k + 1] < offsets[k]:
            raise ValueError(f"offsets[{k + 1}] = {offsets[k + 1]} is below offsets[{k}] = {offsets[k]}")
    return 0


def chunk_mi(const int32_t[::1] symbols, tokens, int max_width=16):
    """[(start, end exclusive, token id, MI or None)] along the PathPiece-L segmentation of one
    chunk (None: no segmentation avoids that occurrence)."""
    cdef SymbolTrie reversed_trie = SymbolTrie(tokens, True), trie = SymbolTrie(tokens, False)
    cdef Paths paths
    cdef vector[int32_t] bpl, starts, ids
    cdef Py_ssize_t n = symbols.shape[0], k, e
    cdef uint64_t state = 0
    cdef int32_t mi
    if n == 0:
        return []
    forward(&symbols[0], n, reversed_trie, max_width, LONGEST, &state, &paths)
    backward(&symbols[0], n, trie, max_width, &bpl)
    backtrack(n, &paths, &starts, &ids)
    out = []
    e = n - 1
    for k in range(<Py_ssize_t>starts.size()):
        mi = occurrence_mi(&symbols[0], n, trie, max_width, &paths, bpl.data(), starts[k], e)
        out.append((starts[k], e + 1, ids[k], None if mi == UNREACHED else mi))
        e = starts[k] - 1
    return out[::-1]


def mi_pass(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
            tokens, int max_width=16):
    """One round of PathPiece vocabulary construction over chunks symbols[offsets[k]:offsets[k+1]]
    occurring counts[k] times: (per token id the summed MI of its occurrences on the
    PathPiece-L segmentations, times the counts, as a list; the corpus token count).

    An occurrence that no segmentation can avoid (a base symbol nothing else covers) adds 0:
    base symbols are never dropped.
    """
    cdef SymbolTrie reversed_trie = SymbolTrie(tokens, True), trie = SymbolTrie(tokens, False)
    cdef Paths paths
    cdef vector[int32_t] bpl, starts, ids
    cdef vector[int64_t] sums
    cdef Py_ssize_t k, n, j, e
    cdef const int32_t* chunk
    cdef uint64_t state = 0
    cdef int32_t mi
    cdef int64_t total = 0
    check_chunks(symbols, offsets, counts)
    sums.assign(len(tokens), 0)
    for k in range(counts.shape[0]):
        n = offsets[k + 1] - offsets[k]
        if n <= 0:
            continue
        chunk = &symbols[offsets[k]]
        forward(chunk, n, reversed_trie, max_width, LONGEST, &state, &paths)
        backward(chunk, n, trie, max_width, &bpl)
        backtrack(n, &paths, &starts, &ids)
        total += counts[k] * paths.pl[n - 1]
        e = n - 1
        for j in range(<Py_ssize_t>starts.size()):
            mi = occurrence_mi(chunk, n, trie, max_width, &paths, bpl.data(), starts[j], e)
            if mi != UNREACHED:
                sums[ids[j]] += counts[k] * mi
            e = starts[j] - 1
    return list(sums), total


def top_ngrams(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
               Py_ssize_t how_many, int max_width):
    """The `how_many` most frequent n-grams of 2..max_width symbols inside the pieces
    symbols[offsets[k]:offsets[k+1]] (each occurrence counted counts[k] times), most frequent
    first, ties by their symbols: a list of symbol tuples."""
    cdef SymbolTrie trie = SymbolTrie([], False)
    # Per trie node: the n-gram's count, its parent node, last symbol and length.
    cdef vector[int64_t] node_count
    cdef vector[int32_t] parent, last_symbol, length
    cdef vector[int64_t] ranked
    cdef Py_ssize_t k, start, w
    cdef int32_t node, child
    cdef int64_t threshold
    check_chunks(symbols, offsets, counts)
    node_count.push_back(0)
    parent.push_back(-1)
    last_symbol.push_back(-1)
    length.push_back(0)
    for k in range(counts.shape[0]):
        for start in range(offsets[k], offsets[k + 1]):
            node = 0
            for w in range(1, min(max_width, offsets[k + 1] - start) + 1):
                child = trie._child_or_new(node, symbols[start + w - 1])
                if child == <int32_t>node_count.size():
                    node_count.push_back(0)
                    parent.push_back(node)
                    last_symbol.push_back(symbols[start + w - 1])
                    length.push_back(w)
                node_count[child] += counts[k]
                node = child
    for node in range(<int32_t>node_count.size()):
        if length[node] >= 2:
            ranked.push_back(node_count[node])
    if how_many <= 0 or ranked.empty():
        return []
    sort(ranked.begin(), ranked.end())
    threshold = ranked[max(0, <Py_ssize_t>ranked.size() - how_many)]
    found = []
    for node in range(<int32_t>node_count.size()):
        if length[node] >= 2 and node_count[node] >= threshold:
            gram = []
            child = node
            while child > 0:
                gram.append(last_symbol[child])
                child = parent[child]
            found.append((-node_count[node], tuple(reversed(gram))))
    found.sort()
    return [gram for _, gram in found[:how_many]]


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


cdef Py_ssize_t ablate(const int32_t* symbols, Py_ssize_t n, SymbolTrie trie, int max_width,
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
    cdef SymbolTrie trie = SymbolTrie(tokens, False)
    cdef vector[int32_t] ids, starts, on_base, ablated, sequence
    cdef vector[Py_ssize_t] pretoken_end
    cdef vector[double] losses
    cdef vector[int64_t] occurrences
    cdef Py_ssize_t k, n, m, loc, beyond, width, left, right, j, begin, i
    cdef const int32_t* piece
    cdef int64_t total = 0
    cdef double base, without
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
            greedy(piece + begin, i - begin, trie, max_width, &ids, &starts)
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
            beyond = ablate(piece, pretoken_end[loc], trie, max_width, starts[loc], width, on_base.data(),
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
