"""Segmentation over any vocabulary, merges or not, of a piece's base symbols (bytes, or with the
cjk alphabet its remapped symbols):

- pathpiece-l / pathpiece-r: fewest tokens (shortest_path.pxd: forward DP over end positions,
  widths 1..L tried in increasing order); among equal paths the longest last token (L) or a
  uniform random one by reservoir sampling (R), then a backtrack from the end.
- greedy: the longest token that is a prefix of the rest, left to right (greedy.pxd).
- likelihood: the most likely path under the tokens' log probabilities (Viterbi, the longest
  last token winning ties, over a double array of the reversed tokens: lattice.pxd's in float64,
  viterbi32.pxd's in float32, cut where every path crosses and cached where the float32
  rounding provably cannot change the path: viterbi32_segments.pxd).

Twin: tokfx.reference.path_segment.
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from greedy cimport greedy
from id_list cimport id_objects, ids_as_array, ids_as_list, join_runs
from lattice cimport Best, viterbi, viterbi_tokens
from piece_cache cimport (CacheSlot, PieceCache, cache_append_ids, cache_found, cache_init, cache_slot,
                          cache_store, cacheable, hash_piece)
from shortest_path cimport LONGEST, RANDOM, Paths, backtrack, forward, piece_seed
from symbol_map cimport SymbolMap, init_symbol_map, map_symbols
from double_array cimport DoubleArray, da_build
from symbol_trie cimport SymbolTrie, trie_build
from viterbi32 cimport Best32, slot_scores
from viterbi32_segments cimport Segments, only_in_runs, segments_init, viterbi32_segments

from array import array

cdef enum:
    GREEDY = 2  # the third and fourth modes beside forward's tie rules LONGEST and RANDOM
    LIKELIHOOD = 3

MODES = {"pathpiece-l": LONGEST, "pathpiece-r": RANDOM, "greedy": GREEDY, "likelihood": LIKELIHOOD}


@cython.final
cdef class PathSegmenter:
    """Segments pieces with pathpiece-l, pathpiece-r, greedy or likelihood over a vocabulary, with a bounded
    cache piece bytes -> ids (a piece segments the same wherever it occurs, pathpiece-r too); in
    float32 likelihood the same cache holds segments' symbols -> ids and threshold instead
    (viterbi32_segments.pxd).

    Not thread-safe: the cache and scratch buffers are shared by all calls.
    """
    cdef int _mode
    cdef int _max_width
    cdef uint64_t _seed
    cdef SymbolMap _map  # how a piece's bytes become base symbols
    cdef object _char_ids  # the buffer _map.char_ids points into
    cdef Paths _paths
    cdef vector[int32_t] _symbols
    cdef vector[int32_t] _starts
    cdef vector[int32_t] _tokens
    cdef vector[int32_t] _out
    cdef PieceCache _cache
    cdef list _id_objects  # id_list.id_objects, made on the first list of ids (a trainer builds
                           # a tokenizer it only saves: 1.25 MB at 32,000 tokens, issue 26)
    cdef vector[double] _scores  # likelihood: the log probability of each token id
    cdef bint _float32  # likelihood: path scores summed in float32 (sentencepiece's arithmetic)
    # float32: the path score so far, carried from piece to piece within one encode_pieces call,
    # as sentencepiece's Viterbi runs over the whole text (float32 rounding depends on it, so
    # pieces are not cached by their bytes then; viterbi32_segments caches what it can prove).
    cdef double _running
    cdef Best _best
    cdef int32_t _joined  # join_runs_of's token, or -1 (also when viterbi32_segments joins its runs)
    cdef int32_t _joined_in_runs  # join_runs_of's token when viterbi32_segments joins its runs, or -1
    cdef Py_ssize_t _num_tokens
    # Of the reversed tokens, but for greedy. Last: its 4 KB root table between the header and
    # the fields written per token (_out, _paths) made pathpiece-l 3-4% slower, likely by 4K
    # aliasing of those stores with the root table's loads for common symbols.
    cdef SymbolTrie _trie
    cdef DoubleArray _array  # likelihood: _trie as a double array, which its Viterbi walks
    cdef vector[float] _slot_scores  # float32: per slot of _array, viterbi32.slot_scores
    cdef Best32 _best32
    cdef Segments _segments  # float32: where paths cross, and what a cached segment may reuse

    def __init__(self, tokens, mode, int max_width=16, seed=0, cjk_prefix_ids=None, char_ids=None,
                 num_symbols=256, cache_size=1 << 18, scores=None, int float_bits=64, unknown_symbol=None):
        """tokens: by id, each a sequence of base symbols, or None for an id that segmentation
        never produces (a special token). Tokens wider than max_width symbols are never used.
        scores (likelihood only): by id, each token's log probability (None for a None token).
        cjk_prefix_ids, char_ids, unknown_symbol: the alphabet's remap, characters and unknown
        symbol (tokfx.alphabet), whose num_symbols base symbols the tokens spell. float_bits (likelihood): 64, or 32 to add
        path scores in float32 as sentencepiece does."""
        if float_bits not in (32, 64):
            raise ValueError(f"float_bits must be 32 or 64, got {float_bits}")
        self._float32 = float_bits == 32
        if mode not in MODES:
            raise ValueError(f"unknown segmenter {mode!r}; known: {', '.join(sorted(MODES))}")
        if max_width < 1:
            raise ValueError(f"max_width must be at least 1, got {max_width}")
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        if (mode == "likelihood") != (scores is not None):
            raise ValueError("scores are given with the likelihood segmenter, and only with it")
        if scores is not None:
            if len(scores) != len(tokens):
                raise ValueError(f"{len(scores)} scores for {len(tokens)} tokens")
            for token, score in zip(tokens, scores):
                if token is not None and score is None:
                    raise ValueError("every token but a None one needs a score")
                self._scores.push_back(0.0 if score is None else score)
        cache_init(&self._cache, cache_size)
        self._mode = MODES[mode]
        self._max_width = max_width
        self._seed = seed
        trie_build(&self._trie, tokens, self._mode != GREEDY)
        if self._mode == LIKELIHOOD:
            da_build(&self._array, &self._trie)
            if self._float32:
                slot_scores(&self._array, self._scores.data(), &self._slot_scores)
                segments_init(&self._segments, tokens, self._scores.data(), &self._array, self._slot_scores.data())
        self._num_tokens = len(tokens)
        self._char_ids = None if char_ids is None else array("i", char_ids)
        init_symbol_map(&self._map, cjk_prefix_ids, self._char_ids, num_symbols, unknown_symbol)
        self._joined = self._joined_in_runs = -1

    def join_runs_of(self, int32_t token_id):
        """From now on encode_pieces writes each run of token_id as one (tokfx.segmenters.unknown_runs)."""
        if not 0 <= token_id < self._num_tokens:
            raise ValueError(f"token id {token_id} is not a token")
        self._joined, self._joined_in_runs = token_id, -1
        if self._mode == LIKELIHOOD and self._float32 and only_in_runs(&self._segments, token_id):
            self._joined, self._joined_in_runs = -1, token_id  # no pass over the ids: they come out joined

    cdef int _segment_into_out(self, const int32_t* symbols, Py_ssize_t n) except -1:
        cdef uint64_t state
        cdef Py_ssize_t k
        cdef float running
        if self._mode == GREEDY:
            return greedy(symbols, n, &self._trie, self._max_width, &self._out)
        if self._mode == LIKELIHOOD and self._float32:
            running = <float>self._running
            if viterbi32_segments(symbols, n, &self._array, self._slot_scores.data(), self._max_width, &running,
                                  &self._segments, &self._cache, &self._best32, &self._out) < 0:
                raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
            self._running = running
            return 0
        if self._mode == LIKELIHOOD:
            viterbi(symbols, n, &self._array, self._scores.data(), self._max_width, False, &self._best)
            if viterbi_tokens(n, &self._best, &self._out) < 0:
                raise ValueError("no segmentation: the vocabulary lacks a base symbol of this piece")
            return 0
        state = piece_seed(self._seed, symbols, n) if self._mode == RANDOM else 0
        forward(symbols, n, &self._trie, self._max_width, self._mode, &state, &self._paths)
        backtrack(n, &self._paths, &self._starts, &self._tokens)
        for k in range(<Py_ssize_t>self._tokens.size() - 1, -1, -1):
            self._out.push_back(self._tokens[k])
        return 0

    cdef list _ids(self):
        if self._id_objects is None:
            self._id_objects = id_objects(self._num_tokens - 1)
        return self._id_objects

    def segment(self, const int32_t[::1] symbols):
        """The token ids of one piece given as base symbols."""
        self._out.clear()
        self._running = 0.0
        self._segments.joined = -1
        if symbols.shape[0]:
            self._segment_into_out(&symbols[0], symbols.shape[0])
        return ids_as_list(self._out, self._ids())

    def encode_pieces(self, bytes data, const int64_t[::1] ends, bint as_array=False,
                      double score_from=0.0):
        """The concatenated ids of the pieces data[ends[k-1]:ends[k]] (ends exclusive, ascending,
        the last equal to len(data)): a list, or with `as_array` an array('i'); as
        BPEEncoder.encode_pieces. float32: the path scores start from `score_from` (the running
        score of the text before, special tokens included: after_special), and `last_score`
        is the running score after them."""
        cdef const unsigned char* text = <const unsigned char*>PyBytes_AS_STRING(data)
        cdef int64_t size = PyBytes_GET_SIZE(data)
        cdef int64_t start = 0, end, i
        cdef Py_ssize_t k, n, first_id
        cdef uint64_t h = 0
        cdef CacheSlot* slot
        cdef bint cached
        self._out.clear()
        self._running = score_from
        self._segments.joined = self._joined_in_runs
        for k in range(ends.shape[0]):
            end = ends[k]
            if end < start or end > size:
                raise ValueError(f"ends[{k}] = {end} is not in [{start}, {size}]")
            cached = not self._float32 and cacheable(&self._cache, end - start)
            if cached:
                h = hash_piece(text + start, end - start)
                slot = cache_slot(&self._cache, text + start, end - start, h)
                if cache_found(slot):
                    cache_append_ids(&self._cache, slot, &self._out)
                    start = end
                    continue
            first_id = self._out.size()
            self._symbols.resize(end - start)
            n = map_symbols(&self._map, text + start, end - start, self._symbols.data())
            if n:
                self._segment_into_out(self._symbols.data(), n)
            if cached:
                cache_store(&self._cache, text + start, end - start, h, self._out.data() + first_id,
                            self._out.size() - first_id)
            start = end
        if start != size:
            raise ValueError(f"the last end is {start}, not len(data) = {size}")
        if self._joined >= 0:
            join_runs(&self._out, self._joined)
        return ids_as_array(self._out) if as_array else ids_as_list(self._out, self._ids())

    @property
    def cached_segments(self):
        """float32: how many segments were served from the cache so far (viterbi32_segments.pxd)."""
        return self._segments.hits

    @property
    def last_score(self):
        """float32: the running path score after the last encode_pieces call."""
        return self._running

    def after_special(self, double running, Py_ssize_t size):
        """float32: the running path score after a special token of `size` UTF-8 bytes, as
        sentencepiece's Encode adds a user-defined symbol in the Viterbi over the whole text:
        size x 0.1 - 0.1 (a float32 product, then double), held as a float32. Its source reads
        size x max_score - 0.1, max_score the highest normal piece's score; measured against
        sentencepiece 0.2.3, that choice differed on 24 of 8,000 fuzzed texts and 0.1 on none of
        60,000 (docs/alphabets.md)."""
        return <float>((<double>(<float>size * <float>0.1) - 0.1) + running)
