# cython: language_level=3
"""The models of a tokenizer.json other than BPE (WordPiece, WordLevel, Unigram), each over the
UTF-8 bytes of the pre-tokens and their ends in one call, as `tokenizers` runs them
(src/models/): a trie of the entries' bytes (symbol_trie.pxd, one symbol a byte), a bounded
cache of short pre-tokens (piece_cache.pxd). A character is a UTF-8 character, or with
`byte_units` a byte (after a ByteLevel step each byte is one spelled character, and the
entries are looked up by the bytes they spell).

encode returns None where tokenizers fails (a piece needs the unknown token and the model has
none): the caller's Python twin then says why.

Twins: tokfx.formats.huggingface_models.WordPieceModel and UnigramModel (their `tokenize`).
"""
from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

from id_list cimport id_objects, ids_as_array, ids_as_list
from piece_cache cimport (PieceCache, CacheSlot, cache_append_ids, cache_found, cache_init, cache_slot,
                          cache_store, cacheable, hash_piece)
from symbol_trie cimport SymbolTrie, trie_build, trie_child, trie_init, trie_token

cdef enum:
    CACHED_PIECES = 100_000  # as the twin's cache


cdef inline bint at_boundary(const unsigned char* s, int64_t i, int64_t end, bint byte_units) noexcept nogil:
    """Whether byte i (start < i <= end) ends a character."""
    return byte_units or i == end or (s[i] & 0xC0) != 0x80


cdef inline int32_t exact(const SymbolTrie* trie, int32_t node, const unsigned char* s, int64_t start,
                          int64_t end) noexcept nogil:
    """The entry spelled by s[start:end] after node's path, or -1."""
    cdef int64_t i
    for i in range(start, end):
        node = trie_child(trie, node, s[i])
        if node < 0:
            return -1
    return trie_token(trie, node)


cdef class _Core:
    """What the three share: the trie of the entries, the unknown id, the cache, and the loop
    over pre-tokens."""
    cdef SymbolTrie trie
    cdef int32_t unknown
    cdef bint byte_units
    cdef PieceCache cache
    cdef list objects

    def __init__(self, entries, int unknown, bint byte_units):
        """`entries`: by id, each entry's bytes, or None for one that no piece can spell."""
        trie_build(&self.trie, entries, False)
        self.unknown, self.byte_units = unknown, byte_units
        cache_init(&self.cache, CACHED_PIECES)
        self.objects = id_objects(len(entries))

    cdef int tokenize(self, const unsigned char* s, int64_t start, int64_t end,
                      vector[int32_t]* out) except -2 nogil:
        """Append the ids of s[start:end] (a pre-token); -1 where tokenizers fails."""
        return -1

    def encode(self, bytes data not None, const int64_t[::1] ends not None, bint as_array=False):
        """The ids of the pre-tokens data[:e0], data[e0:e1], ...; None where tokenizers fails."""
        cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
        cdef int64_t n = len(data), start = 0, end
        cdef Py_ssize_t c, first
        cdef vector[int32_t] ids
        cdef uint64_t h
        cdef CacheSlot* slot
        if ends.shape[0] and ends[ends.shape[0] - 1] != n or (ends.shape[0] == 0 and n):
            raise ValueError("ends must end at len(data)")
        for c in range(ends.shape[0]):
            end = ends[c]
            if end < start:
                raise ValueError("ends must not decrease")
            if end == start:
                continue
            if cacheable(&self.cache, end - start):
                h = hash_piece(s + start, end - start)
                slot = cache_slot(&self.cache, s + start, end - start, h)
                if cache_found(slot):
                    cache_append_ids(&self.cache, slot, &ids)
                else:
                    first = ids.size()
                    if self.tokenize(s, start, end, &ids) < 0:
                        return None
                    cache_store(&self.cache, s + start, end - start, h, ids.data() + first, ids.size() - first)
            elif self.tokenize(s, start, end, &ids) < 0:
                return None
            start = end
        return ids_as_array(ids) if as_array else ids_as_list(ids, self.objects)


    cdef int append_or_unknown(self, int32_t found, vector[int32_t]* out) noexcept nogil:
        if found < 0:
            if self.unknown < 0:
                return -1
            found = self.unknown
        out.push_back(found)
        return 0


cdef class WordLevelCore(_Core):
    """WordLevel: the word is an entry, or the unknown id."""

    cdef int tokenize(self, const unsigned char* s, int64_t start, int64_t end,
                      vector[int32_t]* out) except -2 nogil:
        return self.append_or_unknown(exact(&self.trie, 0, s, start, end), out)


cdef class WordPieceCore(_Core):
    """WordPiece: a word of more than `limit` characters is the unknown id; else the longest
    entry that starts it, then from where it ended the longest that is an entry after the
    prefix, and so on; a rest that no entry starts makes the word the unknown id, whole.
    `prefix` None: no continuing piece is an entry (a prefix that no entry's bytes spell)."""
    cdef int32_t prefix_node  # the trie node of the prefix; -1: no continuing piece matches
    cdef int64_t limit

    def __init__(self, entries, int unknown, bint byte_units, prefix, int64_t limit):
        super().__init__(entries, unknown, byte_units)
        self.limit = limit
        self.prefix_node = -1 if prefix is None else 0
        for byte in (prefix or b""):
            self.prefix_node = trie_child(&self.trie, self.prefix_node, byte)
            if self.prefix_node < 0:
                break

    cdef int tokenize(self, const unsigned char* s, int64_t start, int64_t end,
                      vector[int32_t]* out) except -2 nogil:
        cdef int64_t i, chars = 0, at = start, longest_end
        cdef int32_t node, longest
        for i in range(start, end):
            chars += at_boundary(s, i + 1, end, self.byte_units)
        if chars > self.limit:
            return self.append_or_unknown(-1, out)
        cdef size_t first = out.size()
        while at < end:
            node = 0 if at == start else self.prefix_node
            longest, longest_end = -1, at
            i = at
            while node >= 0 and i < end:
                node = trie_child(&self.trie, node, s[i])
                i += 1
                if node >= 0 and at_boundary(s, i, end, self.byte_units) and trie_token(&self.trie, node) >= 0:
                    longest, longest_end = trie_token(&self.trie, node), i
            if longest < 0:
                out.resize(first)
                return self.append_or_unknown(-1, out)
            out.push_back(longest)
            at = longest_end
        return 0


cdef class UnigramCore(_Core):
    """Unigram (encode_optimized): the Viterbi path of highest score in float64 (ties to the
    path found first), a character that starts no one-character entry a node of the unknown id
    scoring `unknown_score`; runs of nodes of the unknown id fused into one text; each text an
    entry's id, else with `byte_ids` (by byte value, the ids of its <0xXX> entries, or None
    where one is missing: after a ByteLevel, those of the UTF-8 bytes of the byte's spelling,
    which is what the model sees) the ids of its bytes when all are there, else the unknown id."""
    cdef vector[double] scores
    cdef double unknown_score
    cdef bint fallback
    cdef int64_t fallback_start[257]  # byte b's ids: fallback_ids[start[b]:start[b + 1]]
    cdef bint fallback_missing[256]
    cdef vector[int32_t] fallback_ids
    # Per end position of the pre-token (reused): the best score, where its last node begins
    # (-1: none yet) and its id.
    cdef vector[double] best
    cdef vector[int64_t] begins
    cdef vector[int32_t] node_ids
    cdef vector[int64_t] spans  # the texts of the path, end to start: (start, end) pairs

    def __init__(self, entries, int unknown, bint byte_units, scores, double unknown_score, byte_ids):
        super().__init__(entries, unknown, byte_units)
        if len(scores) != len(entries):
            raise ValueError("scores: one per entry")
        for score in scores:
            self.scores.push_back(score)
        self.unknown_score = unknown_score
        self.fallback = byte_ids is not None
        if self.fallback and len(byte_ids) != 256:
            raise ValueError("byte_ids: one per byte value")
        for b in range(256):
            ids = byte_ids[b] if self.fallback else None
            self.fallback_start[b] = self.fallback_ids.size()
            self.fallback_missing[b] = ids is None
            for i in (ids or ()):
                self.fallback_ids.push_back(i)
        self.fallback_start[256] = self.fallback_ids.size()

    cdef int tokenize(self, const unsigned char* s, int64_t start, int64_t end,
                      vector[int32_t]* out) except -2 nogil:
        cdef int64_t n = end - start, at, i, char_end, run_start, k
        cdef int32_t node, found, j
        cdef double reached, score
        cdef bint single
        self.best.assign(n + 1, 0.0)
        self.begins.assign(n + 1, -1)
        self.node_ids.assign(n + 1, 0)
        at = 0
        while at < n:  # `at` is always at a character's start
            reached, single, node, i = self.best[at], False, 0, at
            char_end = -1
            while i < n:
                node = trie_child(&self.trie, node, s[start + i])
                i += 1
                if node < 0:
                    break
                if not at_boundary(s, start + i, end, self.byte_units):
                    continue
                if char_end < 0:
                    char_end = i
                found = trie_token(&self.trie, node)
                if found < 0:
                    continue
                single = single or i == char_end
                score = self.scores[found] + reached
                if self.begins[i] < 0 or score > self.best[i]:
                    self.best[i], self.begins[i], self.node_ids[i] = score, at, found
            if char_end < 0:  # the walk stopped inside the first character
                char_end = at + 1
                while not at_boundary(s, start + char_end, end, self.byte_units):
                    char_end += 1
            if not single:
                if self.unknown < 0:
                    return -1
                score = self.unknown_score + reached
                if self.begins[char_end] < 0 or score > self.best[char_end]:
                    self.best[char_end], self.begins[char_end], self.node_ids[char_end] = score, at, self.unknown
            at = char_end
        # Back from the end: the texts of the path, runs of unknown nodes fused.
        self.spans.clear()
        i, run_start = n, -1
        while i > 0:
            at = self.begins[i]
            if self.node_ids[i] == self.unknown:
                if run_start < 0:
                    run_start = i
            else:
                if run_start >= 0:
                    self.spans.push_back(i)
                    self.spans.push_back(run_start)
                    run_start = -1
                self.spans.push_back(at)
                self.spans.push_back(i)
            i = at
        if run_start >= 0:
            self.spans.push_back(0)
            self.spans.push_back(run_start)
        k = self.spans.size() - 2
        while k >= 0:
            at, i = start + self.spans[k], start + self.spans[k + 1]
            found = exact(&self.trie, 0, s, at, i)
            if found >= 0:
                out.push_back(found)
            elif self.byte_fallback(s, at, i, out) < 0:
                if self.unknown < 0:
                    return -1
                out.push_back(self.unknown)
            k -= 2
        return 0

    cdef inline int byte_fallback(self, const unsigned char* s, int64_t at, int64_t end,
                                  vector[int32_t]* out) noexcept nogil:
        """Append the <0xXX> ids of s[at:end]; -1 (nothing appended) unless all are there."""
        cdef int64_t i, k
        if not self.fallback:
            return -1
        for i in range(at, end):
            if self.fallback_missing[s[i]]:
                return -1
        for i in range(at, end):
            for k in range(self.fallback_start[s[i]], self.fallback_start[s[i] + 1]):
                out.push_back(self.fallback_ids[k])
        return 0
