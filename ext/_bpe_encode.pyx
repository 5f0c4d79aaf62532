"""Byte-level BPE, the encoder: within each pre-token, start from the ids of its base symbols (its
bytes, or with the cjk alphabet its remapped symbols) and repeatedly apply the lowest-rank merge
present, replacing its occurrences left to right without overlap.

With a demolition table (Scaffold-BPE), each id the merges leave is then replaced by its
demolition: one or more output ids.

Two options make it tiktoken's byte-pair rule (tokfx.formats.tiktoken_ranks), each usable alone:
whole tokens (Hugging Face's ignore_merges), a piece that is itself a token is that token, looked
up only when the piece is not cached; and rank_by_id, a merge ranks by its merged token's id (a
tiktoken rank), so that two splits of one token tie and the leftmost merges first, and merges
apply one at a time (after each, the new pairs compete: with ranks that need not grow along the
merges, as in an untrusted rank file, a new pair can outrank the rest of a round).

Twin: tokfx.reference.bpe_encode (the tests run both on random merge tables and on GPT-2), its
encode_piece_with_demolition for demolition.
"""
cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libcpp.queue cimport priority_queue
from libcpp.vector cimport vector

from id_list cimport id_objects, ids_as_array, ids_as_list, join_runs
from piece_cache cimport (PieceCache, cache_append_ids, cache_found, cache_init, cache_slot, cache_store,
                          cacheable, CacheSlot, hash_piece, mix)
from symbol_map cimport SymbolMap, init_symbol_map, map_symbols, utf8_char
from symbol_trie cimport SymbolTrie, trie_build, trie_child, trie_token

from array import array

cdef enum:
    NO_RANK = 2147483647  # INT32_MAX: no merge for this pair
    # Pieces up to this many symbols use the plain O(n^2) rounds, which beat a heap on the short
    # pieces that dominate real text; longer ones (CJK runs, whitespace runs) use a heap.
    SHORT_PIECE = 64


cdef struct RankSlot:
    uint64_t pair  # pair_key(left, right), or EMPTY_PAIR
    int32_t rank
    int32_t merged


cdef uint64_t EMPTY_PAIR = 0xFFFFFFFFFFFFFFFFULL  # ids are below 2**31, so no pair packs to this


cdef inline uint64_t pair_key(int32_t left, int32_t right) noexcept nogil:
    return (<uint64_t>(<uint32_t>left) << 32) | <uint32_t>right


@cython.final
cdef class BPEEncoder:
    """Merges by rank, with a bounded cache piece bytes -> ids (cleared whole when full).

    Not thread-safe: the cache and scratch buffers are shared by all calls, which is also why
    the GIL is held throughout.
    """
    # Open-addressing table (linear probing, at most half full): pair -> (rank, merged id).
    cdef vector[RankSlot] _rank_slots
    cdef int32_t _single_ids[256]  # the ids of a one-byte piece
    # The id of every base symbol, and how a piece's bytes become symbols (for the byte
    # alphabet: each byte is its symbol, and _mapped is false).
    cdef vector[int32_t] _symbol_ids
    cdef bint _mapped
    cdef SymbolMap _map
    cdef object _char_ids  # the buffer _map.char_ids points into
    cdef PieceCache _cache
    cdef vector[int32_t] _symbols
    cdef vector[int32_t] _pair_ranks
    cdef vector[int32_t] _pair_merged
    cdef vector[unsigned char] _fresh  # per symbol: made by this round's merges
    cdef vector[int32_t] _next
    cdef vector[int32_t] _prev
    cdef vector[int32_t] _out
    cdef list _id_objects  # id_list.id_objects, built on the first list returned (_out_as_list)
    cdef int32_t _max_id  # the highest id the encoder can return
    # The demolition table: id t becomes _demolition_ids[_demolition_start[t]:...[t + 1]].
    cdef bint _demolish
    cdef vector[int64_t] _demolition_start
    cdef vector[int32_t] _demolition_ids
    cdef vector[int32_t] _demolished
    cdef bint _one_at_a_time  # rank_by_id: one merge per round, the leftmost of the lowest rank
    # whole_tokens: {piece key: id} of the tokens a piece is emitted as whole, or None.
    cdef dict _whole_tokens
    cdef int32_t _joined  # join_runs_of's token, or -1
    # Per id: it is the left or right part of some merge. An id that is neither never merges,
    # so a long piece is merged run by run between such ids (a CJK text's fallback bytes or
    # unknown characters), each run on its own: merges in one run do not touch another.
    cdef vector[unsigned char] _merges_in
    cdef vector[int32_t] _whole_piece
    cdef vector[int32_t] _merged
    # A chars alphabet without whole tokens or demolition (sentencepiece's BPE): a piece is read
    # character by character straight into ids, and each run of ids that merge is merged as it
    # closes (_encode_by_runs); _char_tokens[code point] is the id of a covered character, -1.
    cdef bint _by_runs
    cdef vector[int32_t] _char_tokens
    cdef int32_t _unknown_id  # the unknown symbol's id, or -1 (byte fallback)

    def __init__(self, merges, symbol_ids, cache_size=1 << 18, cjk_prefix_ids=None, char_ids=None,
                 demolition=None, unknown_symbol=None, rank_by_id=False, whole_tokens=None):
        """merges: (left id, right id, merged id) in rank order, or an array('i') of them flat,
        three ids per merge (as a Tokenizer holds them: no Python tuple per merge).

        symbol_ids: the token id of each base symbol of the alphabet (tokfx.alphabet): 256
        bytes; with cjk_prefix_ids (its remap) 512 + len(groups) symbols; with char_ids (a chars
        alphabet: code point -> symbol, -1 if not covered) its characters after those; with
        unknown_symbol (0: a chars alphabet without byte fallback) that symbol, then the characters.

        demolition: optional (starts, ids), int64 and int32 buffers: for every id t the merges
        and symbol_ids use, the output holds ids[starts[t]:starts[t + 1]] in its place (never
        empty; one id for a base symbol). Pieces are cached after demolition, so a cached piece
        costs the same with it or without.

        rank_by_id: a merge's rank is its merged id, not its place in `merges`, and merges apply
        one at a time (tiktoken's rule). whole_tokens: {key: id}, a piece whose key is there is
        that id, unmerged; the key is the piece's bytes for the byte alphabet, else its base
        symbols as int32 bytes (array('i', symbols).tobytes())."""
        cdef RankSlot* slot
        cdef unsigned char one
        cdef int32_t symbol
        symbol_ids = list(symbol_ids)
        byte_level = 256 if cjk_prefix_ids is None else 512 + sum(p >= 0 for p in cjk_prefix_ids)
        if unknown_symbol is not None:
            byte_level = 1
        if len(symbol_ids) != byte_level and not (char_ids is not None and len(symbol_ids) > byte_level):
            raise ValueError(f"symbol_ids must hold {byte_level} ids"
                             f"{' and the characters' if char_ids is not None else ''}, got {len(symbol_ids)}")
        self._char_ids = None if char_ids is None else array("i", char_ids)
        init_symbol_map(&self._map, cjk_prefix_ids, self._char_ids, len(symbol_ids), unknown_symbol)
        self._mapped = self._map.remap or self._map.char_ids != NULL or self._map.unknown >= 0
        max_id = -1
        for token_id in symbol_ids:
            self._symbol_ids.push_back(_checked_id(token_id))
            max_id = max(max_id, token_id)
        for b in range(256):
            one = b
            map_symbols(&self._map, &one, 1, &symbol)  # one byte is one symbol
            self._single_ids[b] = self._symbol_ids[symbol]
        if isinstance(merges, array) and merges.typecode == "i":
            if len(merges) % 3:
                raise ValueError(f"flat merges hold three ids per merge, got {len(merges)} ids")
            count = len(merges) // 3
            merges = zip(*[iter(merges)] * 3)  # one tuple at a time
        else:
            merges = list(merges)
            count = len(merges)
        slots = 2
        while slots < 2 * count:
            slots *= 2
        self._rank_slots.assign(slots, RankSlot(EMPTY_PAIR, NO_RANK, 0))
        self._merges_in.assign(max(symbol_ids, default=0) + 1, False)
        self._one_at_a_time = rank_by_id
        for rank, (left, right, merged) in enumerate(merges):
            for token_id in (left, right, merged):
                max_id = max(max_id, _checked_id(token_id))
            if rank_by_id:
                if merged == NO_RANK:
                    raise ValueError(f"with rank_by_id a merged id must be below {NO_RANK}, the rank of no merge")
                rank = merged
            if max(left, right) >= <Py_ssize_t>self._merges_in.size():
                self._merges_in.resize(max(left, right) + 1, False)
            self._merges_in[left] = self._merges_in[right] = True
            slot = self._rank_slot(pair_key(left, right))
            if slot.pair == EMPTY_PAIR:  # else the pair is listed twice and keeps its first rank
                slot[0] = RankSlot(pair_key(left, right), rank, merged)
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        cache_init(&self._cache, cache_size)
        self._demolish = demolition is not None
        if self._demolish:
            starts, ids = demolition
            self._set_demolition(starts, ids, max_id)
        if whole_tokens is not None:
            self._whole_tokens = dict(whole_tokens)
            for token_id in self._whole_tokens.values():
                max_id = max(max_id, _checked_id(token_id))
        self._max_id = max_id
        self._joined = -1
        self._by_runs = (self._map.char_ids != NULL and not self._map.remap and not self._demolish
                         and self._whole_tokens is None)
        if self._by_runs:
            self._char_tokens.assign(self._map.char_limit, -1)
            for code_point in range(self._map.char_limit):
                if self._map.char_ids[code_point] >= 0:
                    self._char_tokens[code_point] = self._symbol_ids[self._map.char_ids[code_point]]
        self._unknown_id = self._symbol_ids[self._map.unknown] if self._map.unknown >= 0 else -1

    def join_runs_of(self, int32_t token_id):
        """From now on encode_pieces and encode_piece write each run of token_id as one
        (tokfx.segmenters.unknown_runs)."""
        self._joined = _checked_id(token_id)

    cdef int _set_demolition(self, const int64_t[::1] starts, const int32_t[::1] ids, int32_t max_id) except -1:
        cdef Py_ssize_t t, n = starts.shape[0] - 1
        if n <= max_id:
            raise ValueError(f"demolition covers ids 0..{n - 1}, the merges use {max_id}")
        if starts[0] != 0 or starts[n] != ids.shape[0]:
            raise ValueError("demolition starts must run from 0 to the number of ids")
        for t in range(n):
            if starts[t + 1] <= starts[t]:
                raise ValueError(f"the demolition of {t} is empty")
        for t in range(ids.shape[0]):
            _checked_id(ids[t])
        for symbol in range(<Py_ssize_t>self._symbol_ids.size()):
            t = self._symbol_ids[symbol]
            if starts[t + 1] - starts[t] != 1:
                raise ValueError(f"demolition of base symbol {symbol} (id {t}) is not one id")
        self._demolition_start.assign(&starts[0], &starts[0] + n + 1)
        self._demolition_ids.assign(&ids[0], &ids[0] + ids.shape[0])
        return 0

    def encode_piece(self, bytes piece):
        """The ids of one pre-token."""
        self._out.clear()
        self._encode_into_out(<const unsigned char*>PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece))
        if self._joined >= 0:
            join_runs(&self._out, self._joined)
        return self._out_as_list()

    def encode_pieces(self, bytes data, const int64_t[::1] ends, bint as_array=False):
        """The concatenated ids of the pieces data[ends[k-1]:ends[k]] (ends exclusive, ascending,
        the last equal to len(data)): a list, or with `as_array` an array('i')."""
        cdef const unsigned char* text = <const unsigned char*>PyBytes_AS_STRING(data)
        cdef int64_t size = PyBytes_GET_SIZE(data)
        cdef int64_t start = 0, end
        cdef Py_ssize_t k
        self._out.clear()
        for k in range(ends.shape[0]):
            end = ends[k]
            if end < start or end > size:
                raise ValueError(f"ends[{k}] = {end} is not in [{start}, {size}]")
            self._encode_into_out(text + start, end - start)
            start = end
        if start != size:
            raise ValueError(f"the last end is {start}, not len(data) = {size}")
        if self._joined >= 0:
            join_runs(&self._out, self._joined)
        return ids_as_array(self._out) if as_array else self._out_as_list()

    cdef int _encode_into_out(self, const unsigned char* piece, Py_ssize_t size) except -1:
        cdef Py_ssize_t i
        cdef uint64_t h = 0
        cdef CacheSlot* slot
        cdef int32_t single
        if size <= 1:
            if size == 1:
                single = self._single_ids[piece[0]]
                if self._demolish:
                    single = self._demolition_ids[self._demolition_start[single]]
                self._out.push_back(single)
            return 0
        cdef bint cached = cacheable(&self._cache, size)
        if cached:
            h = hash_piece(piece, size)
            slot = cache_slot(&self._cache, piece, size, h)
            if cache_found(slot):
                return cache_append_ids(&self._cache, slot, &self._out)
        cdef size_t start = self._out.size()
        if self._by_runs:
            self._encode_by_runs(piece, size)
            if cached:
                cache_store(&self._cache, piece, size, h, self._out.data() + start, self._out.size() - start)
            return 0
        self._symbols.clear()
        cdef PyObject* whole = NULL
        if self._mapped:
            self._symbols.resize(size)  # map_symbols writes at most one symbol per byte
            self._symbols.resize(map_symbols(&self._map, piece, size, self._symbols.data()))
            if self._whole_tokens is not None:
                whole = PyDict_GetItem(self._whole_tokens, PyBytes_FromStringAndSize(
                    <const char*>self._symbols.data(), 4 * self._symbols.size()))
            for i in range(<Py_ssize_t>self._symbols.size()):
                self._symbols[i] = self._symbol_ids[self._symbols[i]]
        else:
            if self._whole_tokens is not None:
                whole = PyDict_GetItem(self._whole_tokens, PyBytes_FromStringAndSize(<const char*>piece, size))
            for i in range(size):
                self._symbols.push_back(self._single_ids[piece[i]])
        if whole != NULL:
            self._symbols.assign(1, <int32_t><object>whole)
        else:
            self._merge_runs()
        if self._demolish:
            self._demolish_symbols()
        for i in range(<Py_ssize_t>self._symbols.size()):
            self._out.push_back(self._symbols[i])
        if cached:
            cache_store(&self._cache, piece, size, h, self._symbols.data(), self._symbols.size())
        return 0

    cdef int _merge_runs(self) except -1:
        """_symbols merged, a long piece run by run between ids that no merge takes (_merges_in)."""
        cdef Py_ssize_t n = self._symbols.size(), i
        if n <= SHORT_PIECE:
            return self._merge_in_rounds()
        self._whole_piece.swap(self._symbols)
        self._symbols.clear()
        self._merged.clear()
        for i in range(n):
            self._take(self._whole_piece[i], &self._merged)
        self._close_run(&self._merged)
        self._symbols.swap(self._merged)
        return 0

    cdef int _encode_by_runs(self, const unsigned char* piece, Py_ssize_t size) except -1:
        """Append the ids of a piece of a chars alphabet to _out (_by_runs): each character's id
        (a covered one's from _char_tokens; the unknown id; or its bytes' ids), the runs of ids
        that merge (in _symbols as they grow) merged when an id that no merge takes closes them.
        One pass with no array of symbols: a Chinese line under sentencepiece's whitespace split
        is one long piece, nearly all of it fallback bytes or unknown characters between which
        nothing merges (bench/README.md)."""
        cdef Py_ssize_t i = 0, length, k
        cdef int32_t code_point = 0, token
        cdef const int32_t* char_tokens = self._char_tokens.data()
        cdef Py_ssize_t char_limit = self._char_tokens.size()
        cdef size_t start = self._out.size()
        self._symbols.clear()
        while i < size:
            length = utf8_char(piece + i, size - i, &code_point)
            if length and code_point < char_limit and char_tokens[code_point] >= 0:
                token = char_tokens[code_point]
            elif self._unknown_id >= 0:
                token = self._unknown_id
                if length == 0:  # not UTF-8: one unknown symbol per byte, as map_symbols
                    length = 1
                if (token == self._joined and self._symbols.empty() and self._out.size() > start
                        and self._out.back() == token):
                    # join_runs_of here rather than in a pass over the ids (most of a Chinese
                    # text is unknown to a model trained on English), within the piece: the
                    # cache keeps the piece's own ids.
                    i += length
                    continue
            else:
                if length == 0:  # not UTF-8: one byte at a time
                    length = 1
                for k in range(length):
                    self._take(self._single_ids[piece[i + k]], &self._out)
                i += length
                continue
            self._take(token, &self._out)
            i += length
        return self._close_run(&self._out)

    cdef inline int _take(self, int32_t token, vector[int32_t]* out) except -1:
        """Add token to the run in _symbols if some merge takes it; else close the run into out
        and append the token (no merge can cross it, so the runs on either side merge apart)."""
        if <size_t>token < self._merges_in.size() and self._merges_in[token]:
            self._symbols.push_back(token)
            return 0
        if not self._symbols.empty():
            self._close_run(out)
        out.push_back(token)
        return 0

    cdef int _close_run(self, vector[int32_t]* out) except -1:
        """Merge the run in _symbols (in rounds, or with a heap when long), append it to out and
        empty it."""
        cdef Py_ssize_t n = self._symbols.size()
        if n == 0:
            return 0
        if n == 1:
            out.push_back(self._symbols[0])
        else:
            if n <= SHORT_PIECE:
                self._merge_in_rounds()
            else:
                self._merge_with_heap()
            out.insert(out.end(), self._symbols.begin(), self._symbols.end())
        self._symbols.clear()
        return 0

    cdef int _demolish_symbols(self) except -1:
        """Replace each of _symbols by its demolition."""
        cdef int32_t symbol
        cdef int64_t j
        self._demolished.clear()
        for symbol in self._symbols:
            for j in range(self._demolition_start[symbol], self._demolition_start[symbol + 1]):
                self._demolished.push_back(self._demolition_ids[j])
        self._symbols.swap(self._demolished)
        return 0

    cdef inline RankSlot* _rank_slot(self, uint64_t key) noexcept:
        """The slot of the pair key, or the empty slot where it belongs."""
        cdef size_t mask = self._rank_slots.size() - 1
        cdef size_t i = mix(key) & mask
        cdef RankSlot* slots = self._rank_slots.data()
        while slots[i].pair != key and slots[i].pair != EMPTY_PAIR:
            i = (i + 1) & mask
        return &slots[i]

    cdef inline int32_t _rank_of(self, int32_t left, int32_t right, int32_t* merged) noexcept:
        cdef RankSlot* slot = self._rank_slot(pair_key(left, right))
        merged[0] = slot.merged
        return slot.rank

    cdef int _merge_in_rounds(self) except -1:
        """Each round finds the lowest rank among adjacent pairs and rewrites the symbols once
        (merging every occurrence, or with rank_by_id the leftmost); only the pairs next to a
        merged symbol are looked up again."""
        cdef Py_ssize_t n = self._symbols.size(), i, write
        cdef int32_t best = NO_RANK, taken
        cdef int32_t* symbols = self._symbols.data()
        self._pair_ranks.resize(n)
        self._pair_merged.resize(n)
        self._fresh.resize(n)
        cdef int32_t* ranks = self._pair_ranks.data()
        cdef int32_t* merged = self._pair_merged.data()
        cdef unsigned char* fresh = self._fresh.data()
        for i in range(n - 1):
            ranks[i] = self._rank_of(symbols[i], symbols[i + 1], &merged[i])
            best = min(best, ranks[i])
        while best != NO_RANK:
            write = 0
            i = 0
            taken = best
            while i < n:
                if i < n - 1 and ranks[i] == taken:
                    symbols[write] = merged[i]
                    fresh[write] = True
                    if self._one_at_a_time:
                        taken = -1  # no rank: the rest of the round is copied
                    i += 2
                else:
                    symbols[write] = symbols[i]
                    ranks[write] = ranks[i]
                    merged[write] = merged[i]
                    fresh[write] = False
                    i += 1
                write += 1
            n = write
            best = NO_RANK
            for i in range(n - 1):
                if fresh[i] or fresh[i + 1]:
                    ranks[i] = self._rank_of(symbols[i], symbols[i + 1], &merged[i])
                best = min(best, ranks[i])
        self._symbols.resize(n)
        return 0

    cdef int _merge_with_heap(self) except -1:
        """O(n log n): a linked list of symbols and a min-heap of (rank, position) of their pairs.

        All heap entries of the lowest rank are taken as one batch (with rank_by_id only the
        leftmost) and applied in position order, which is exactly one round of _merge_in_rounds;
        entries made stale by earlier merges are
        recognised because the pair at their position no longer has their rank.
        """
        cdef Py_ssize_t n = self._symbols.size(), i
        cdef int32_t* symbols = self._symbols.data()
        self._pair_ranks.resize(n)
        self._pair_merged.resize(n)
        self._next.resize(n)
        self._prev.resize(n)
        cdef int32_t* ranks = self._pair_ranks.data()
        cdef int32_t* merged = self._pair_merged.data()
        cdef int32_t* nxt = self._next.data()
        cdef int32_t* prv = self._prev.data()
        # ~(rank << 32 | position): std::priority_queue is a max-heap.
        cdef priority_queue[uint64_t] heap
        cdef vector[int32_t] batch
        cdef uint64_t rank
        cdef int32_t position, gone
        for i in range(n):
            nxt[i] = i + 1 if i + 1 < n else -1
            prv[i] = i - 1
            ranks[i] = NO_RANK
        for i in range(n - 1):
            self._push_pair(heap, i)
        while not heap.empty():
            rank = (~heap.top()) >> 32
            batch.clear()
            while not heap.empty() and (~heap.top()) >> 32 == rank:
                batch.push_back(<int32_t>((~heap.top()) & 0xffffffff))
                heap.pop()
                if self._one_at_a_time:
                    break
            for position in batch:
                if symbols[position] < 0 or ranks[position] != <int32_t>rank:
                    continue
                gone = nxt[position]
                symbols[position] = merged[position]
                symbols[gone] = -1  # ids are >= 0: -1 marks a symbol merged into its left one
                nxt[position] = nxt[gone]
                if nxt[gone] != -1:
                    prv[nxt[gone]] = position
                self._push_pair(heap, position)
                if prv[position] != -1:
                    self._push_pair(heap, prv[position])
        i = 0
        position = 0
        while position != -1:
            symbols[i] = symbols[position]
            i += 1
            position = nxt[position]
        self._symbols.resize(i)
        return 0

    cdef inline int _push_pair(self, priority_queue[uint64_t]& heap, int32_t position) except -1:
        """Record the rank of the pair starting at position and queue it if it can merge."""
        cdef int32_t following = self._next[position]
        if following == -1:
            self._pair_ranks[position] = NO_RANK
            return 0
        cdef int32_t rank = self._rank_of(self._symbols[position], self._symbols[following],
                                          &self._pair_merged[position])
        self._pair_ranks[position] = rank
        if rank != NO_RANK:
            heap.push(~((<uint64_t>rank << 32) | <uint32_t>position))
        return 0

    cdef list _out_as_list(self):
        # Built here, not in __init__: a pipeline worker encodes to arrays (encode_to_array) and
        # never needs the Python int of every id (2 MB for GPT-2).
        if self._id_objects is None:
            self._id_objects = id_objects(self._max_id)
        return ids_as_list(self._out, self._id_objects)


def _checked_id(token_id):
    if not 0 <= token_id < 2**31:
        raise ValueError(f"token id {token_id} is not in [0, 2**31)")
    return token_id


def every_split_merges(tokens, merged_in_order, max_merges=None):
    """Every split of each token of merged_in_order into two tokens, as (left id, right id,
    merged id), in that order, leftmost split first; None tokens are never parts, and of two
    tokens with the same symbols the lower id is the part (tokfx.segmenters.bpe says why). A
    ValueError past `max_merges` (a token of n symbols can split n - 1 ways: tokens `a`, `aa`,
    `aaa`, ... of an untrusted file would make merges quadratic in their length).

    Each token is walked once through a trie of the tokens and once, backwards, through a
    trie of the reversed tokens: linear in its length (slicing out every prefix and suffix is
    quadratic, seconds for one 4,000-symbol token). Twin: tokfx.reference.bpe_encode."""
    cdef SymbolTrie prefixes, suffixes
    cdef vector[int32_t] symbols, right_at
    cdef int32_t node, left
    cdef Py_ssize_t k, n
    trie_build(&prefixes, tokens, False)
    trie_build(&suffixes, tokens, True)
    merges = []
    for merged in merged_in_order:
        symbols.clear()
        for symbol in tokens[merged]:
            symbols.push_back(symbol)
        n = symbols.size()
        right_at.assign(n, -1)  # right_at[k]: the token spelled by symbols[k:], or -1
        node = 0
        for k in range(n - 1, 0, -1):
            node = trie_child(&suffixes, node, symbols[k])
            if node < 0:
                break
            right_at[k] = trie_token(&suffixes, node)
        node = 0
        for k in range(1, n):
            node = trie_child(&prefixes, node, symbols[k - 1])
            if node < 0:
                break
            left = trie_token(&prefixes, node)
            if left >= 0 and right_at[k] >= 0:
                merges.append((left, right_at[k], merged))
        if max_merges is not None and len(merges) > max_merges:
            raise ValueError(f"the tokens split into more than {max_merges:,} pairs of tokens (merges)")
    return merges
