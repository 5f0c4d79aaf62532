"""The most frequent n-grams of a corpus's pieces: an initial vocabulary to prune top-down
(PathPiece's initial_vocab="ngram"). Each n-gram is a node of a trie grown from every start
position, its count kept per node.

Twin: tokfx.reference.ngrams.
"""
from array import array

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from cpython.array cimport array as c_array, clone
from libcpp.vector cimport vector

from chunks cimport check_chunks
from heap cimport return_free_memory
from piece_cache cimport mix
from symbol_trie cimport SymbolTrie, trie_build, trie_child, trie_child_or_new, trie_init

cdef extern from *:
    """
    #include <algorithm>
    #include <cstdint>
    #include <vector>
    // Orders candidates (indices into start/length/key) by key, highest first, ties by their
    // symbols flat[start..start+length) compared as Python compares tuples of ints.
    struct GramOrder {
        const std::vector<int64_t>* key;
        const std::vector<int64_t>* start;
        const std::vector<int32_t>* length;
        const int32_t* flat;
        bool operator()(int32_t a, int32_t b) const {
            if ((*key)[a] != (*key)[b]) return (*key)[a] > (*key)[b];
            const int32_t* x = flat + (*start)[a];
            const int32_t* y = flat + (*start)[b];
            return std::lexicographical_compare(x, x + (*length)[a], y, y + (*length)[b]);
        }
    };
    // The first `how_many` of `order` by GramOrder, sorted; the rest dropped.
    static void top_grams(std::vector<int32_t>& order, size_t how_many, const std::vector<int64_t>& key,
                          const std::vector<int64_t>& start, const std::vector<int32_t>& length,
                          const int32_t* flat) {
        GramOrder by{&key, &start, &length, flat};
        if (order.size() > how_many) {
            std::nth_element(order.begin(), order.begin() + how_many, order.end(), by);
            order.resize(how_many);
        }
        std::sort(order.begin(), order.end(), by);
    }
    // Frees a vector's memory now (clear() keeps its capacity).
    template <typename T> static void release(std::vector<T>& v) { std::vector<T>().swap(v); }
    """
    void top_grams(vector[int32_t]& order, size_t how_many, const vector[int64_t]& key,
                   const vector[int64_t]& start, const vector[int32_t]& length, const int32_t* flat) except +
    void release[T](vector[T]& v)

cdef c_array INT32 = array("i")
cdef c_array INT64 = array("q")


cdef tuple _top_substrings(const vector[int64_t]& key, const vector[int64_t]& first,
                           const vector[int32_t]& length, const int32_t[::1] symbols, Py_ssize_t how_many,
                           vector[int32_t]& kept):
    """The `how_many` substrings symbols[first[i]:first[i] + length[i]] of the highest key[i] (a
    negative key: not a candidate), ties by their symbols, as the tuples (-key, symbols) sort:
    packed as tokfx._packed_tokens.PackedTokens holds tokens, (their symbols concatenated
    array('i'), their offsets array('q')), their indices i in `kept`. Selected and sorted in C
    over indices into the candidates themselves (no copy of them), and no Python object per
    substring: tens of thousands of seed tuples were several MB of the trainer's peak (issue 26)."""
    cdef Py_ssize_t i, j, at, total = 0
    kept.clear()
    for i in range(<Py_ssize_t>key.size()):
        if key[i] >= 0:
            kept.push_back(<int32_t>i)
    if how_many <= 0 or kept.empty():
        kept.clear()
    else:
        top_grams(kept, how_many, key, first, length, &symbols[0])
    for i in range(<Py_ssize_t>kept.size()):
        total += length[kept[i]]
    cdef c_array found = clone(INT32, total, False)
    cdef c_array offsets = clone(INT64, kept.size() + 1, False)
    at = 0
    offsets.data.as_longlongs[0] = 0
    for i in range(<Py_ssize_t>kept.size()):
        for j in range(length[kept[i]]):
            found.data.as_ints[at + j] = symbols[first[kept[i]] + j]
        at += length[kept[i]]
        offsets.data.as_longlongs[i + 1] = at
    return found, offsets


cdef c_array _counts_of(const vector[int64_t]& count, const vector[int32_t]& kept):
    """array('q') of count[i] for each i in kept."""
    cdef c_array found = clone(INT64, kept.size(), False)
    cdef Py_ssize_t i
    for i in range(<Py_ssize_t>kept.size()):
        found.data.as_longlongs[i] = count[kept[i]]
    return found


def top_ngrams(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
               Py_ssize_t how_many, int max_width):
    """The `how_many` most frequent n-grams of 2..max_width symbols inside the pieces
    symbols[offsets[k]:offsets[k+1]] (each occurrence counted counts[k] times), most frequent
    first, ties by their symbols: a list of symbol tuples."""
    grams, starts, _ = top_ngram_counts(symbols, offsets, counts, how_many, max_width)
    return [tuple(grams[starts[k]:starts[k + 1]]) for k in range(len(starts) - 1)]


def top_ngram_counts(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                     Py_ssize_t how_many, int max_width):
    """As top_ngrams, packed (_top_substrings: symbols array('i'), offsets array('q')), with
    each n-gram's count (array('q'))."""
    cdef SymbolTrie trie
    # Per trie node: the n-gram's count, where it first starts in symbols, and its length.
    cdef vector[int64_t] node_count, first
    cdef vector[int32_t] length
    cdef vector[int64_t] ranked
    cdef vector[int32_t] kept
    cdef Py_ssize_t k, start, w
    cdef int32_t node, child
    trie_build(&trie, [], False)
    check_chunks(symbols, offsets, counts)
    node_count.push_back(0)
    first.push_back(0)
    length.push_back(0)
    for k in range(counts.shape[0]):
        for start in range(offsets[k], offsets[k + 1]):
            node = 0
            for w in range(1, min(max_width, offsets[k + 1] - start) + 1):
                # Most n-grams were seen before: look up first (at the root, in its array) and
                # insert only a new one (trie_child_or_new inlined on every step measured 15% slower).
                child = trie_child(&trie, node, symbols[start + w - 1])
                if child < 0:
                    child = trie_child_or_new(&trie, node, symbols[start + w - 1])
                    node_count.push_back(0)
                    first.push_back(start)
                    length.push_back(w)
                node_count[child] += counts[k]
                node = child
    for node in range(<int32_t>node_count.size()):
        # (Not a conditional expression: over a vector element, Cython makes it a reference.)
        if length[node] >= 2:
            ranked.push_back(node_count[node])
        else:
            ranked.push_back(-1)
    grams, starts = _top_substrings(ranked, first, length, symbols, how_many, kept)
    return grams, starts, _counts_of(node_count, kept)


# seed_substrings' symbol classes (a symbol's class is classes[symbol]; a class >= 0 is a script).
cdef enum:
    _INVALID = -1  # never in a seed substring (a fallback byte, the unknown symbol)
    _SPACE = -2  # sentencepiece's U+2581: only as a substring's first symbol
    _INHERITED = -3  # takes the script of the symbol before it
SEED_INVALID, SEED_SPACE, SEED_INHERITED = _INVALID, _SPACE, _INHERITED
cdef enum:
    _ANY_SCRIPT = -4  # no script yet (sentencepiece's kAnyType)
    _NO_FOLLOWER = -2
    _END = -1  # the piece ends where another piece follows on its line: a follower of its own
    _LINE_END = -3  # the piece ends its line: another follower (sentencepiece's sentence boundary)


cdef inline bint _still_valid(int32_t cls, Py_ssize_t w, int32_t* script) noexcept nogil:
    """Whether a valid substring stays valid with a symbol of class `cls` at its position
    w - 1, as sentencepiece's IsValidSentencePiece reads a piece left to right (its defaults:
    whitespace only first, one Unicode script); `script` carries the script so far."""
    cdef int32_t s
    if cls == _INVALID:
        return False
    if cls == _SPACE:
        return w == 1
    s = script[0] if cls == _INHERITED else cls
    if s != _ANY_SCRIPT and script[0] != _ANY_SCRIPT and script[0] != s:
        return False
    script[0] = s
    return True


cdef inline void _follow(vector[int32_t]& follower, vector[char]& branching, int32_t node, int32_t x) noexcept:
    """Note that `x` follows the substring of `node`: branching once a second one differs."""
    if follower[node] == _NO_FOLLOWER:
        follower[node] = x
    elif follower[node] != x:
        branching[node] = 1


def seed_substrings(const int32_t[::1] symbols, const int64_t[::1] offsets, const int64_t[::1] counts,
                    Py_ssize_t how_many, int max_width, const int32_t[::1] classes,
                    const int64_t[::1] line_ends=None):
    """sentencepiece's seed candidates over the pieces symbols[offsets[k]:offsets[k+1]] (each
    occurrence counted counts[k] times): the substrings of 2..max_width symbols that
    IsValidSentencePiece accepts (by `classes`) and that its suffix array yields, i.e. that are
    followed by two different symbols, the end of a piece counting as one symbol of its own;
    the `how_many` of the highest count x length, ties by symbols: packed as top_ngram_counts
    gives them (symbols, offsets, counts). With `line_ends`, line_ends[k] of piece k's occurrences end a line, and a line's
    end is another follower than a piece's end inside its line (sentencepiece's suffix array
    runs over lines: a piece inside one is followed by its space, the last by the line's end);
    without, none does."""
    # The substrings of one width at a time: a table of this width's (`table`, keyed by the
    # node of the width before and the next symbol), and per node of the width before (prev_)
    # and of this one (cur_), its count, where it first starts, its first follower and whether
    # a second one differed. Once a width is done the one before is complete, its branching
    # substrings kept as candidates (cand_) and its nodes dropped: two widths' nodes at a time,
    # not every width's (on 600,000 characters of Chinese 450,000 nodes instead of 800,000).
    # Nor is a node made for a substring that occurs once (count 1: one follower, and every
    # substring it starts occurs once too), most of a CJK text's: a first pass per width counts
    # each (node, symbol) into `seen`, a hashed table of counters saturating at 2, and the
    # second makes a node only where its counter reached 2. A collision only makes the node of
    # a substring that occurs once, as before this pass: the seed is the same either way.
    cdef SymbolTrie table
    cdef vector[int64_t] prev_count, cur_count, prev_first, cur_first
    cdef vector[int32_t] prev_follower, cur_follower
    cdef vector[char] prev_branching, cur_branching
    cdef vector[int64_t] cand_key, cand_first, cand_count
    cdef vector[int32_t] cand_length
    cdef vector[int32_t] at_node, at_script
    cdef vector[int32_t] kept
    cdef Py_ssize_t k, start, w
    cdef int32_t node, child, x, script
    cdef Py_ssize_t i
    # Per piece: whether some occurrences end inside their line, and whether some end it.
    cdef vector[char] ends_inside, ends_line
    cdef vector[uint8_t] seen
    cdef uint64_t seen_mask = 1024
    check_chunks(symbols, offsets, counts)
    if line_ends is not None and line_ends.shape[0] != counts.shape[0]:
        raise ValueError(f"{line_ends.shape[0]} line end counts for {counts.shape[0]} pieces")
    ends_line.assign(counts.shape[0], 0)
    ends_inside.assign(counts.shape[0], 1)
    if line_ends is not None:
        for k in range(counts.shape[0]):
            ends_line[k] = line_ends[k] > 0
            ends_inside[k] = line_ends[k] < counts[k]
    for i in range(symbols.shape[0]):
        if not 0 <= symbols[i] < classes.shape[0]:
            raise ValueError(f"symbol {symbols[i]} has no class (of {classes.shape[0]})")
    # The root, the one node of width 0.
    prev_count.assign(1, 0)
    prev_first.assign(1, 0)
    prev_follower.assign(1, _NO_FOLLOWER)
    prev_branching.assign(1, 0)
    # One pass per width w: each start position moves from its substring of w - 1 symbols
    # (`at`, -1 once done) to that of w, while the shorter one occurs at least twice: one that
    # occurs once has one follower, and so has every substring it starts (count <= 1), so none
    # of them is branching, and their nodes are never made (most of a CJK text's substrings).
    while seen_mask < 2 * <uint64_t>symbols.shape[0] and seen_mask < (1 << 22):
        seen_mask *= 2
    seen_mask -= 1
    at_node.assign(symbols.shape[0], 0)
    at_script.assign(symbols.shape[0], _ANY_SCRIPT)
    for w in range(1, max_width + 2):
        trie_init(&table, 1)
        cur_count.assign(1, 0)  # node 0 of a table is its root: no substring of this width
        cur_first.assign(1, 0)
        cur_follower.assign(1, _NO_FOLLOWER)
        cur_branching.assign(1, 0)
        if w > 1:
            seen.assign(seen_mask + 1, 0)
            for k in range(counts.shape[0]):
                for start in range(offsets[k], min(offsets[k + 1], offsets[k + 1] - w + 1)):
                    node = at_node[start]
                    if node < 0 or prev_count[node] < 2 or w > max_width:
                        continue
                    x = symbols[start + w - 1]
                    script = at_script[start]
                    if _still_valid(classes[x], w, &script):
                        i = mix(<uint64_t>node << 32 | <uint32_t>x) & seen_mask
                        seen[i] = <uint8_t>min(2, seen[i] + counts[k])
        for k in range(counts.shape[0]):
            for start in range(offsets[k], offsets[k + 1]):
                node = at_node[start]
                if node < 0 or w > 1 and prev_count[node] < 2:
                    at_node[start] = -1
                    continue
                if start + w - 1 < offsets[k + 1]:
                    x = symbols[start + w - 1]
                    if w > 1:
                        _follow(prev_follower, prev_branching, node, x)
                else:
                    x = _END
                    if w > 1:
                        if ends_inside[k]:
                            _follow(prev_follower, prev_branching, node, _END)
                        if ends_line[k]:
                            _follow(prev_follower, prev_branching, node, _LINE_END)
                script = at_script[start]
                if w > max_width or x == _END or not _still_valid(classes[x], w, &script):
                    at_node[start] = -1
                    continue
                at_script[start] = script
                child = trie_child(&table, node, x)
                if child < 0 and w > 1 and seen[mix(<uint64_t>node << 32 | <uint32_t>x) & seen_mask] < 2:
                    at_node[start] = -1  # occurs once
                    continue
                if child < 0:
                    child = trie_child_or_new(&table, node, x)
                    cur_count.push_back(0)
                    cur_first.push_back(start)
                    cur_follower.push_back(_NO_FOLLOWER)
                    cur_branching.push_back(0)
                cur_count[child] += counts[k]
                at_node[start] = child
        if w - 1 >= 2:
            for node in range(1, <int32_t>prev_count.size()):
                if prev_branching[node]:
                    cand_key.push_back(prev_count[node] * (w - 1))
                    cand_first.push_back(prev_first[node])
                    cand_length.push_back(w - 1)
                    cand_count.push_back(prev_count[node])
        prev_count.swap(cur_count)
        prev_first.swap(cur_first)
        prev_follower.swap(cur_follower)
        prev_branching.swap(cur_branching)
    # The passes' memory goes before the substrings are copied out, so that the two do not add up.
    release(at_node)
    release(at_script)
    release(seen)
    release(prev_count)
    release(prev_first)
    release(prev_follower)
    release(prev_branching)
    release(cur_count)
    release(cur_first)
    release(cur_follower)
    release(cur_branching)
    release(table.edges)
    release(table.token_of_node)
    return_free_memory()
    grams, starts = _top_substrings(cand_key, cand_first, cand_length, symbols, how_many, kept)
    return grams, starts, _counts_of(cand_count, kept)
