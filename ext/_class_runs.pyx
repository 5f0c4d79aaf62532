# cython: language_level=3
"""A user pattern of the GPT shape (tokfx.pre_tokenizers.class_runs), matched natively over UTF-8.

At each piece start the alternatives are tried in order; within one, the items in turn, a greedy
run from its longest down to its least count (a possessive one only at its longest, a lazy one
from its least up), a group's literals in order then (if optional) none, a repeated group's
next iteration (each alternative of its sub-program in turn) before what follows it (lazy: after;
possessive: its greedy end only): the backtracking `regex` does, so the first alternative that
matches ends the piece where `regex.findall` ends it. What follows an iteration is passed down
as an `Iteration` (a continuation on the C stack), so the sub-program's items are matched by the
same `match` as the pattern's; so are a lookahead's (from where it stands, with nothing after
it) and a lookbehind's (from each start up to its width back, what follows an EXACT_END that
accepts only the lookbehind's position). Steps are counted: past a budget linear in the text (a
pattern that backtracks badly, `\\p{L}*\\p{L}*!`), past MAX_OPEN_FRAMES of open iterations (the
C stack) or where no alternative matches (the pattern does not cover the text), `piece_ends`
returns None and the caller runs `regex`, which finds the same pieces or gives the error, under
its time bound; `spans` searches on past such a character, as `regex.finditer` does. Input must
be UTF-8 (the callers encode a str); other bytes give unspecified pieces but are never read out
of bounds.

Twin: tokfx.pre_tokenizers.class_runs.twin_ends; the tests compare both with `regex.findall`.
"""
import itertools

from cpython.bytes cimport PyBytes_AS_STRING
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

from id_list cimport int64s_as_array
from utf8_units cimport unit_end, unit_start

cdef enum Kind:  # tokfx.pre_tokenizers.class_runs's item kinds
    RUN, AHEAD, END, GROUP, ASSERT, REPEAT, BEHIND, LOOKAHEAD, LOOKBEHIND

cdef enum Mode:  # its GREEDY, POSSESSIVE, LAZY
    GREEDY, POSSESSIVE, LAZY

cdef enum Assertion:  # its START, WORD_BOUNDARY, NOT_WORD_BOUNDARY, TEXT_END
    START, WORD_BOUNDARY, NOT_WORD_BOUNDARY, TEXT_END

cdef enum:
    CODE_POINTS = 0x110000
    STEPS_PER_BYTE = 64  # the budget: generous for the GPT shapes, which take a few per byte
    STEPS_PER_CALL = 4096
    # C stack frames that open iterations of groups may hold (an iteration holds about one an
    # item of its alternative, and two more; measured, some 135 bytes a frame: 4096 take about
    # 550 KB, well inside a thread's stack). Past it, as past the budget, the call runs in
    # `regex` (a piece of a thousand iterations and more).
    MAX_OPEN_FRAMES = 4096

cdef enum Outcome:
    FAILED = -1
    OVER_BUDGET = -2

cdef enum:
    EXACT_END = -1  # an Iteration's k: what follows a lookbehind's sub-program (its end must be there)


cdef struct Item:
    int kind
    int arg
    int64_t least
    int64_t most
    int mode


cdef struct Run:  # state of one match attempt
    const unsigned char* s
    int64_t n
    int64_t budget
    int64_t open_frames


cdef struct Iteration:  # what follows an iteration of a REPEAT item: the item's next one or the rest
    int k  # the REPEAT item, or EXACT_END: a lookbehind's way, which must end at `count`
    int last  # the end of the sequence it stands in
    int64_t count  # the iterations done once this one ends
    const Iteration* up  # what follows that sequence (NULL: the piece ends)


def first_characters(program, alternative) -> int:
    """The code points a match of the alternative may start with, as an int bitmap: those of its
    items up to the first that must consume one (a lookahead or `$` consumes none)."""
    cdef int kind, arg, least
    first = 0
    for kind, arg, least, _, _ in alternative:
        if kind == RUN:
            first |= int.from_bytes(program.classes[arg], "little")
        elif kind == GROUP:
            for literal in program.groups[arg]:
                first |= int.from_bytes(program.classes[literal[0]], "little")
        elif kind == REPEAT:
            for items in program.subs[arg]:
                first |= first_characters(program, items)
        else:
            continue
        if least > 0:
            break
    return first


cdef class ClassRunsMatcher:
    """The native form of a tokfx.pre_tokenizers.class_runs.ClassRuns."""
    cdef readonly object program
    cdef list _bitmaps  # owns the memory `classes` points into
    cdef vector[const uint8_t*] classes
    cdef vector[Item] items
    cdef vector[int] alternative_starts  # alternative a is items[starts[a]:starts[a + 1]]
    cdef vector[int] sub_starts  # sub-program s is alternatives sub_starts[s]:sub_starts[s + 1]
    cdef vector[int64_t] literal_starts  # literal l is literal_classes[starts[l]:starts[l + 1]]
    cdef vector[int] literal_classes
    cdef vector[int] group_starts  # group g is literals group_starts[g]:group_starts[g + 1]
    cdef vector[int] first_classes  # alternative a may start only with a member of this class

    def __init__(self, program):
        cdef bytes bitmap
        self.program = program
        self._bitmaps = list(program.classes)
        for bitmap in self._bitmaps:
            if len(bitmap) != CODE_POINTS // 8:
                raise ValueError("a class bitmap must cover every code point")
            self.classes.push_back(<const uint8_t*> PyBytes_AS_STRING(bitmap))
        # The pattern's alternatives first, then each sub-program's.
        for alternative in itertools.chain(program.alternatives, *program.subs):
            self.alternative_starts.push_back(self.items.size())
            for kind, arg, least, most, mode in alternative:
                self.items.push_back(Item(kind, arg, least, most, mode))
        self.alternative_starts.push_back(self.items.size())
        a = len(program.alternatives)
        for sub in program.subs:
            self.sub_starts.push_back(a)
            a += len(sub)
        self.sub_starts.push_back(a)
        for group in program.groups:
            self.group_starts.push_back(self.literal_starts.size())
            for literal in group:
                self.literal_starts.push_back(self.literal_classes.size())
                for index in literal:
                    self.literal_classes.push_back(index)
        self.group_starts.push_back(self.literal_starts.size())
        self.literal_starts.push_back(self.literal_classes.size())
        for alternative in program.alternatives:
            bitmap = first_characters(program, alternative).to_bytes(CODE_POINTS // 8, "little")
            self._bitmaps.append(bitmap)
            self.first_classes.push_back(self.classes.size())
            self.classes.push_back(<const uint8_t*> PyBytes_AS_STRING(bitmap))

    def __reduce__(self):
        # Rebuilt from the program in the receiving process (the class pointers are this one's).
        return ClassRunsMatcher, (self.program,)

    cdef inline bint member(self, int index, uint32_t code) noexcept nogil:
        return code < CODE_POINTS and (self.classes[index][code >> 3] >> (code & 7)) & 1

    cdef int64_t literal_end(self, Run* run, int64_t literal, int64_t pos) noexcept nogil:
        """Where the literal matched at pos ends, or FAILED."""
        cdef int64_t k
        cdef uint32_t code
        for k in range(self.literal_starts[literal], self.literal_starts[literal + 1]):
            if pos >= run.n:
                return FAILED
            pos = unit_end(run.s, pos, run.n, False, &code)
            if not self.member(self.literal_classes[k], code):
                return FAILED
        return pos

    cdef int64_t literal_start(self, Run* run, int64_t literal, int64_t pos) noexcept nogil:
        """Where the literal would start to end at pos (as many characters back), or FAILED."""
        cdef int64_t k
        for k in range(self.literal_starts[literal], self.literal_starts[literal + 1]):
            if pos == 0:
                return FAILED
            pos = unit_start(run.s, pos, 0)
        return pos

    cdef bint word_boundary(self, Run* run, int word, int64_t pos) noexcept nogil:
        """Whether a word character stands on one side of pos only."""
        cdef uint32_t code
        cdef bint before = False, after = False
        if pos > 0:
            unit_end(run.s, unit_start(run.s, pos, 0), run.n, False, &code)
            before = self.member(word, code)
        if pos < run.n:
            unit_end(run.s, pos, run.n, False, &code)
            after = self.member(word, code)
        return before != after

    cdef int64_t match(self, Run* run, int k, int last, int64_t pos, const Iteration* up) noexcept nogil:
        """Where items[k:last] then `up` (what follows them) matched from pos end (the first way
        regex finds), FAILED or OVER_BUDGET."""
        cdef Item item
        cdef int64_t end, literal, count, at
        cdef uint32_t code
        cdef bint found
        run.budget -= 1
        if run.budget < 0:
            return OVER_BUDGET
        if k == last:
            if up == NULL:
                return pos
            if up.k == EXACT_END:
                return pos if pos == up.count else FAILED
            return self.repeat(run, up.k, up.last, pos, up.up, up.count)
        item = self.items[k]
        if item.kind == END:
            if pos == run.n or (pos == run.n - 1 and run.s[pos] == b"\n"):
                return self.match(run, k + 1, last, pos, up)
            return FAILED
        if item.kind == AHEAD or item.kind == BEHIND:
            found = False
            for literal in range(self.group_starts[item.arg], self.group_starts[item.arg + 1]):
                if item.kind == AHEAD:
                    found = self.literal_end(run, literal, pos) >= 0
                else:
                    at = self.literal_start(run, literal, pos)
                    found = at >= 0 and self.literal_end(run, literal, at) == pos
                if found:
                    break
            if found == <bint> item.least:  # least: 1 for a negative lookaround
                return FAILED
            return self.match(run, k + 1, last, pos, up)
        if item.kind == LOOKAHEAD or item.kind == LOOKBEHIND:
            end = self.lookaround(run, item, pos)
            if end == OVER_BUDGET:
                return end
            if (end >= 0) == <bint> item.least:
                return FAILED
            return self.match(run, k + 1, last, pos, up)
        if item.kind == ASSERT:
            if item.least == START:
                found = pos == 0
            elif item.least == TEXT_END:
                found = pos == run.n
            else:
                found = self.word_boundary(run, item.arg, pos) == (item.least == WORD_BOUNDARY)
            return self.match(run, k + 1, last, pos, up) if found else FAILED
        if item.kind == GROUP:
            for literal in range(self.group_starts[item.arg], self.group_starts[item.arg + 1]):
                end = self.literal_end(run, literal, pos)
                if end >= 0:
                    end = self.match(run, k + 1, last, end, up)
                    if end != FAILED:
                        return end
            return self.match(run, k + 1, last, pos, up) if item.least == 0 else FAILED
        if item.kind == REPEAT:
            if item.mode != POSSESSIVE:
                return self.repeat(run, k, last, pos, up, 0)
            # Possessive: the greedy way's end (the item alone, nothing after it), never given back.
            end = self.repeat(run, k, k + 1, pos, NULL, 0)
            return self.match(run, k + 1, last, end, up) if end >= 0 else end
        if item.mode == LAZY:
            return self.lazy_run(run, k, last, pos, up)
        # RUN: its longest, then (unless possessive) one character fewer at a time, stepping
        # back over UTF-8 (a continuation byte is 10xxxxxx).
        at, count = pos, 0
        while count < item.most and at < run.n:
            end = unit_end(run.s, at, run.n, False, &code)
            if not self.member(item.arg, code):
                break
            at = end
            count += 1
        if count < item.least:
            return FAILED
        while True:
            end = self.match(run, k + 1, last, at, up)
            if end != FAILED or item.mode == POSSESSIVE or count == item.least:
                return end
            count -= 1
            at = unit_start(run.s, at, pos)

    cdef int64_t repeat(self, Run* run, int k, int last, int64_t pos, const Iteration* up,
                        int64_t count) noexcept nogil:
        """match() of a REPEAT item items[k] after `count` iterations: another iteration (each
        alternative of its sub-program in turn, followed by the item's next iteration) then what
        follows the item, or (lazy) the other way round. Every iteration takes a character (the
        compiler refuses an alternative that can match nothing), so this ends."""
        cdef Item item = self.items[k]
        cdef Iteration next_iteration = Iteration(k, last, count + 1, up)
        cdef int64_t end = FAILED, frames
        cdef int a
        if item.mode == LAZY and count >= item.least:
            end = self.match(run, k + 1, last, pos, up)
            if end != FAILED:
                return end
        if count < item.most:
            for a in range(self.sub_starts[item.arg], self.sub_starts[item.arg + 1]):
                frames = self.alternative_starts[a + 1] - self.alternative_starts[a] + 2
                run.open_frames += frames
                if run.open_frames > MAX_OPEN_FRAMES:
                    run.budget = -1
                    return OVER_BUDGET
                end = self.match(run, self.alternative_starts[a], self.alternative_starts[a + 1], pos,
                                 &next_iteration)
                run.open_frames -= frames
                if end != FAILED:
                    break
            if end != FAILED:
                return end
        if item.mode != LAZY and count >= item.least:
            return self.match(run, k + 1, last, pos, up)
        return FAILED

    cdef int64_t lookaround(self, Run* run, Item item, int64_t pos) noexcept nogil:
        """Where the first way of a LOOKAHEAD's or LOOKBEHIND's sub-program found from pos ends
        (a lookbehind's: pos, from a start up to item.most characters back), FAILED or OVER_BUDGET."""
        cdef Iteration exact = Iteration(EXACT_END, 0, pos, NULL)
        cdef const Iteration* then = &exact
        if item.kind == LOOKAHEAD:
            then = NULL
        cdef int64_t start = pos, back = 0, end
        cdef int a
        while True:
            for a in range(self.sub_starts[item.arg], self.sub_starts[item.arg + 1]):
                end = self.match(run, self.alternative_starts[a], self.alternative_starts[a + 1], start, then)
                if end != FAILED:
                    return end
            if item.kind == LOOKAHEAD or back == item.most or start == 0:
                return FAILED
            start = unit_start(run.s, start, 0)
            back += 1

    cdef int64_t lazy_run(self, Run* run, int k, int last, int64_t pos, const Iteration* up) noexcept nogil:
        """match() of a lazy run items[k]: its least count, then one character more at a time."""
        cdef Item item = self.items[k]
        cdef int64_t count = 0, end
        cdef uint32_t code
        while True:
            if count >= item.least:
                end = self.match(run, k + 1, last, pos, up)
                if end != FAILED or count == item.most:
                    return end
            if pos >= run.n:
                return FAILED
            end = unit_end(run.s, pos, run.n, False, &code)
            if not self.member(item.arg, code):
                return FAILED
            pos = end
            count += 1

    cdef int64_t piece_end(self, Run* run, int64_t pos) noexcept nogil:
        """The end of the piece at pos: FAILED where no alternative matches, or OVER_BUDGET."""
        cdef int a
        cdef int64_t end
        cdef uint32_t code
        unit_end(run.s, pos, run.n, False, &code)
        for a in range(self.first_classes.size()):  # the pattern's alternatives
            if not self.member(self.first_classes[a], code):
                continue  # a cheap test first: most alternatives fail at their first character
            end = self.match(run, self.alternative_starts[a], self.alternative_starts[a + 1], pos, NULL)
            if end != FAILED:
                return end  # never pos: no alternative matches nothing (the compiler refuses one)
        return FAILED

    def spans(self, bytes data not None):
        """(start, end) in characters of every match `regex.finditer` finds in UTF-8 `data` (the
        text between matches skipped, as a search skips it), or None past the step budget."""
        cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
        cdef int64_t n = len(data), p = 0, end, chars = 0
        cdef Py_ssize_t k = 0, i
        cdef uint32_t code
        cdef vector[int64_t] offsets
        cdef Run run
        run.s, run.n, run.budget, run.open_frames = s, n, STEPS_PER_CALL + STEPS_PER_BYTE * n, 0
        with nogil:
            while p < n:
                end = self.piece_end(&run, p)
                if end == OVER_BUDGET:
                    break
                if end == FAILED:  # no match starts here: search on from the next character
                    p = unit_end(s, p, n, False, &code)
                    continue
                offsets.push_back(p)
                offsets.push_back(end)
                p = end
            # Byte offsets (increasing) to character offsets, in one walk over the text.
            p = 0
            while k < <Py_ssize_t> offsets.size():
                while p < offsets[k]:
                    p = unit_end(s, p, n, False, &code)
                    chars += 1
                offsets[k] = chars
                k += 1
        if run.budget < 0:
            return None
        return [(offsets[i], offsets[i + 1]) for i in range(0, offsets.size(), 2)]

    def piece_ends(self, bytes data not None, const int64_t[::1] chunk_ends=None):
        """Exclusive end byte offsets of the pieces `regex.findall` gives over UTF-8 `data` (with
        `chunk_ends`, of each chunk data[:e0], data[e0:e1], ... alone, as
        tokfx._pretokenize.piece_ends), or None (module docstring: run `regex` instead)."""
        cdef const unsigned char* s = <const unsigned char*> PyBytes_AS_STRING(data)
        cdef int64_t n = len(data), start = 0, end, p, piece
        cdef Py_ssize_t c, chunks
        cdef vector[int64_t] ends
        cdef Run run
        cdef bint ok = True, whole = chunk_ends is None
        run.budget, run.open_frames = STEPS_PER_CALL + STEPS_PER_BYTE * n, 0
        if whole:
            chunks = 1
        else:
            chunks = chunk_ends.shape[0]
            if (chunks == 0 and n != 0) or (chunks and chunk_ends[chunks - 1] != n):
                raise ValueError("chunk_ends must end at len(data)")
            for c in range(1, chunks):
                if chunk_ends[c] < chunk_ends[c - 1]:
                    raise ValueError("chunk_ends must not decrease")
        with nogil:
            for c in range(chunks):
                end = n if whole else chunk_ends[c]
                # The chunk alone: lookahead and `$` stop at its end.
                run.s, run.n = s + start, end - start
                p = 0
                while p < run.n:
                    piece = self.piece_end(&run, p)
                    if piece < 0:
                        ok = False
                        break
                    p = piece
                    ends.push_back(start + p)
                if not ok:
                    break
                start = end
        return int64s_as_array(ends) if ok else None
