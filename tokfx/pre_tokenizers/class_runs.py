"""A user pattern of the GPT shape compiled into alternatives of class runs, for the native
matcher tokfx._class_runs (which runs it at native speed where `regex` would run it at a few MB/s).

The shape: alternatives (`|`) of items, each item one of
- a one-character atom (a `[...]` class, `\\p{..}`, `\\P{..}`, `\\s`, `\\d`, `\\w` and their negations,
  `.`, an escaped or plain literal) with an optional quantifier (`?`, `*`, `+`, `{m}`, `{m,}`,
  `{m,n}`, `{,n}`), greedy, possessive or lazy;
- a group `(?:...)`, `(...)`, a named one `(?P<name>...)`, `(?<name>...)` (capturing: the
  pieces are whole matches) or one with flags `(?i:...)`, `(?s-i:...)` (of `i` and `s`), whose
  alternatives are sequences of items (runs, literals, groups, assertions, up to MAX_DEPTH deep),
  with a quantifier as a run's (`(?:\\p{L}\\p{M}*)+`, `(?:,\\d{3})*`, `(?:[^\\S\\n]*\\n)+?`): a
  REPEAT item, or, when its alternatives are literals once or optional (`(?i:'s|'t|'re)`), a
  GROUP item (one step a literal);
- an atomic group `(?>...)`: a REPEAT item once, possessive (its first way, never given back),
  itself repeated when quantified (`(?>\\p{L}+'?)+`);
- a lookahead `(?!...)`, `(?=...)` or lookbehind `(?<!...)`, `(?<=...)`: of literal alternatives
  (`(?!\\S)`, `(?= \\S)`, `(?<=\\d)`, `(?<!'s|'t)`), an AHEAD or BEHIND item; else of any
  alternatives (`(?=\\s*\\S)`, `(?=(?:\\d{3})+(?!\\d))`, `(?<=\\p{L}\\p{M}?)`), which may match
  nothing, a LOOKAHEAD or LOOKBEHIND item over a sub-program. A lookbehind's must span at most
  MAX_BEHIND characters (none unbounded) and hold no possessive run, atomic group or lookaround:
  `regex` matches a lookbehind backwards, and only then does whether it matches not depend on
  the direction (its characters are tried from each start up to MAX_BEHIND back, forwards, for a
  way that ends where the lookbehind stands);
- `$` (the end of the text, or before a final newline, as `regex` reads it without MULTILINE);
- an assertion `\\b`, `\\B` (a word boundary: `\\w` on one side only, `\\w` asked of `regex`),
  `^`, `\\A` (the start of the text, as `regex` reads `^` without MULTILINE) or `\\Z`, `\\z` (the
  very end of the text, as `regex` reads both).
The pattern may start with flags `(?i)`, `(?s)`, `(?is)` (they hold for all of it). Every
alternative, of the pattern or of a group, must take a character (so no iteration of a group is
empty: nothing to guard, where `regex` has rules for an empty iteration); a lookaround's may
match nothing. Anything else (other flags, flags later in the pattern, an alternative that can
match nothing, an unbounded lookbehind, backrefs, recursion...) is not this shape:
`compile_class_runs` returns None and the pattern runs in `regex`, as before.

Each atom is a set of code points asked of `regex` itself (the atom alone, inside `(?i:...)`,
`(?s:...)` where those flags hold): the Unicode tables are regex's whatever its version, so the compiled
form cannot disagree with it on which characters a class holds. Matching is a backtracking
search that tries the alternatives in order, each greedy run from its longest and each greedy
group's next iteration before what follows it (lazy: the other way round), as `regex` does; `twin_ends` is its pure-Python twin, and the tests compare both with `regex.findall`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex

from tokfx.normalizers.code_point_sets import code_point_bitmap

# Item kinds (the native matcher's enum).
RUN, AHEAD, END, GROUP, ASSERT, REPEAT, BEHIND, LOOKAHEAD, LOOKBEHIND = range(9)
GREEDY, POSSESSIVE, LAZY = range(3)  # how a run or a repeated group takes its characters
START, WORD_BOUNDARY, NOT_WORD_BOUNDARY, TEXT_END = range(4)  # what an ASSERT item asserts
# `\Z` is the very end in `regex` (not before a final newline, as `$` also is).
_ASSERTIONS = {"^": START, "\\A": START, "\\b": WORD_BOUNDARY, "\\B": NOT_WORD_BOUNDARY, "\\Z": TEXT_END,
               "\\z": TEXT_END}
UNBOUNDED = 2**62
MAX_DEPTH = 16  # groups inside groups: deeper is left to regex (the compiler recurses per level)
MAX_CLASSES = 64  # distinct atoms: each costs a pass of `regex` over every code point on load
MAX_ALTERNATIVES = 64  # each costs the native matcher a first-character bitmap (139 KB)
# Characters a lookbehind of a sub-program may span: it is tried from each start that far back.
MAX_BEHIND = 32
_FLAGS = frozenset("is")  # inline flags whose meaning is only which characters an atom holds
_ESCAPED_CLASSES = frozenset("sSdDwW")
_CONTROL_ESCAPES = frozenset("afnrtv")
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_SPECIAL = frozenset(".^$*+?{}[]()|\\")
_QUANTIFIER = regex.compile(r"(?:([?*+])|\{(\d*)(,?)(\d*)\})([+?]?)")
# A group that takes flags (`(?i:`, `(?s-i:`), a named group, and flags for the whole pattern.
_FLAGS_GROUP = regex.compile(r"\(\?([a-z]*)(?:-([a-z]+))?:")
_NAMED_GROUP = regex.compile(r"\(\?P?<\w+>")
_GLOBAL_FLAGS = regex.compile(r"\(\?([a-z]+)\)")


Item = tuple[int, int, int, int, int]


class NotClassRuns(Exception):
    """The pattern is not of the shape (module docstring)."""


@dataclass(frozen=True)
class ClassRuns:
    """A compiled pattern: `classes` are bitmaps over code points (tokfx.normalizers.code_point_sets);
    an item is (kind, argument, least, most, mode): RUN (class index, repeats, GREEDY, POSSESSIVE
    or LAZY), AHEAD and BEHIND (group index, least=1 for a negative lookaround), END, GROUP
    (group index, least 0 or 1), ASSERT (the class index of `\\w` for a word boundary, least=START,
    WORD_BOUNDARY, NOT_WORD_BOUNDARY or TEXT_END), REPEAT (sub-program index, iterations, mode),
    LOOKAHEAD (sub-program index, least=1 if negative), LOOKBEHIND (the same, most=the most
    characters its sub-program spans);
    a group is its literal alternatives, each a tuple of class indices; a sub-program is
    alternatives of items, as the pattern's own."""
    pattern: str
    classes: tuple[bytes, ...]
    alternatives: tuple[tuple[Item, ...], ...]
    groups: tuple[tuple[tuple[int, ...], ...], ...]
    subs: tuple[tuple[tuple[Item, ...], ...], ...]


def regex_version(pattern: str) -> int:
    """`regex`'s flag for a user pattern: VERSION1 where it writes a class intersection
    (`[\\p{L}&&[^\\p{Han}]]`, Kimi K2's pattern), which tiktoken's engine (Rust's regex syntax)
    and Oniguruma (tokenizers) read as one; `regex`'s default VERSION0 reads `&&` as two `&`s."""
    return regex.V1 if "&&" in pattern else 0


@lru_cache(maxsize=256)
def _class_bitmap(atom: str, flags: str, version: int) -> bytes:
    return code_point_bitmap(regex.compile(f"(?{flags}:{atom})" if flags else atom, version))


def _class_end(pattern: str, i: int) -> int:
    """The end of the `[...]` class at pattern[i]."""
    j = i + 1
    if pattern.startswith("^", j):
        j += 1
    if pattern.startswith("]", j):  # a `]` first is a member
        j += 1
    depth = 0
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
        elif c == "[":
            # A nested set (`[\\p{L}&&[^\\p{Han}]]`) in a pattern read with VERSION1 (in VERSION0
            # `[` is a member): its end found here, its members asked of `regex` with the whole
            # class. A POSIX class, or a nested set opening with `]`, is not parsed here.
            if not regex_version(pattern) or pattern.startswith(":", j + 1):
                raise NotClassRuns
            j += 2 if pattern.startswith("^", j + 1) else 1
            if pattern.startswith("]", j):
                raise NotClassRuns
            depth += 1
        elif c == "]":
            if depth == 0:
                return j + 1
            depth -= 1
            j += 1
        else:
            j += 1
    raise NotClassRuns


def _braced_end(pattern: str, i: int) -> int:
    end = pattern.find("}", i)
    if end < 0:
        raise NotClassRuns
    return end + 1


def _atom_end(pattern: str, i: int) -> int:
    """The end of the one-character atom at pattern[i]; NotClassRuns if none starts there."""
    c = pattern[i]
    if c == "[":
        return _class_end(pattern, i)
    if c == ".":
        return i + 1
    if c != "\\":
        if c in _SPECIAL:
            raise NotClassRuns
        return i + 1
    if i + 1 >= len(pattern):
        raise NotClassRuns
    e = pattern[i + 1]
    if e in "pP":
        return _braced_end(pattern, i + 2) if pattern.startswith("{", i + 2) else i + 3
    if e == "N" and pattern.startswith("{", i + 2):
        return _braced_end(pattern, i + 2)
    if e in _HEX_ESCAPES:
        return i + 2 + _HEX_ESCAPES[e]
    if e in _ESCAPED_CLASSES or e in _CONTROL_ESCAPES or not e.isalnum():
        return i + 2
    raise NotClassRuns  # \b, \A, \Z, \X, \R, a backreference...


class _Compiler:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.classes: dict[tuple[str, str], int] = {}
        self.groups: list[tuple[tuple[int, ...], ...]] = []
        self.subs: list[tuple[tuple[Item, ...], ...]] = []

    def class_index(self, atom: str, flags: str = "") -> int:
        key = (atom, flags)
        if key not in self.classes:
            if len(self.classes) == MAX_CLASSES:
                raise NotClassRuns
            self.classes[key] = len(self.classes)
        return self.classes[key]

    def atom(self, i: int, flags: str = "") -> tuple[int, int]:
        """(class index, end) of the atom at i."""
        end = _atom_end(self.pattern, i)
        return self.class_index(self.pattern[i:end], flags), end

    def group(self, i: int, flags: str, depth: int, may_be_empty: bool = False) -> tuple[tuple[tuple[Item, ...], ...], int]:
        """(alternatives, end) of the group whose contents start at i, up to its closing parenthesis."""
        if depth == MAX_DEPTH:
            raise NotClassRuns
        alternatives, i = self.alternatives(i, flags, depth + 1, may_be_empty)
        if i == len(self.pattern):
            raise NotClassRuns
        return alternatives, i + 1

    def literal_group(self, alternatives: tuple[tuple[Item, ...], ...]) -> int | None:
        """The index of the alternatives as a literal group (each item one character, once), or None."""
        if not all(kind == RUN and least == most == 1 for items in alternatives for kind, _, least, most, _ in items):
            return None
        self.groups.append(tuple(tuple(arg for _, arg, _, _, _ in items) for items in alternatives))
        return len(self.groups) - 1

    def sub(self, alternatives: tuple[tuple[Item, ...], ...]) -> int:
        self.subs.append(alternatives)
        return len(self.subs) - 1

    def behind_width(self, alternatives: tuple[tuple[Item, ...], ...]) -> int:
        """The most characters the lookbehind's alternatives span; NotClassRuns where they may
        span more than MAX_BEHIND or hold what `regex`, matching backwards, may match otherwise
        (module docstring)."""
        widest = 0
        for items in alternatives:
            width = 0
            for kind, arg, _, most, mode in items:
                if kind in (AHEAD, BEHIND, LOOKAHEAD, LOOKBEHIND) or (kind in (RUN, REPEAT) and mode == POSSESSIVE):
                    raise NotClassRuns
                if kind == RUN:
                    width += most
                elif kind == GROUP:
                    width += max(map(len, self.groups[arg]))
                elif kind == REPEAT:
                    width += most * self.behind_width(self.subs[arg])
                if width > MAX_BEHIND:
                    raise NotClassRuns
            widest = max(widest, width)
        return widest

    def quantifier(self, i: int) -> tuple[int, int, int, int]:
        """(least, most, mode, end) of the quantifier at i (1, 1, GREEDY, i if none)."""
        found = _QUANTIFIER.match(self.pattern, i)
        if found is None:
            return 1, 1, GREEDY, i
        symbol, low, comma, high, mode = found.groups()
        if symbol:
            least, most = {"?": (0, 1), "*": (0, UNBOUNDED), "+": (1, UNBOUNDED)}[symbol]
        elif not (low or high):
            raise NotClassRuns  # `{}`, `{,}`: literal braces to regex
        else:
            least = int(low or 0)
            most = (int(high) if high else UNBOUNDED) if comma else least
        if least > most:
            raise NotClassRuns
        return least, most, {"": GREEDY, "+": POSSESSIVE, "?": LAZY}[mode], found.end()

    def group_opening(self, i: int, flags: str) -> tuple[int, str] | None:
        """(where its contents start, the flags inside) of the group (not a lookaround) opening at
        i: `(?:`, `(`, a named group or a group with flags; None if none opens there."""
        pattern = self.pattern
        if pattern.startswith("(?:", i):
            return i + 3, flags
        if pattern.startswith("(", i) and not pattern.startswith("(?", i):
            return i + 1, flags
        if named := _NAMED_GROUP.match(pattern, i):  # (after the lookbehinds, which start alike)
            return named.end(), flags
        if (scoped := _FLAGS_GROUP.match(pattern, i)) is None:
            return None
        on, off = scoped.group(1), scoped.group(2) or ""
        if not set(on + off) <= _FLAGS:
            raise NotClassRuns  # flags that change more than an atom's characters
        return scoped.end(), "".join(sorted(set(flags + on) - set(off)))

    def alternative(self, i: int, flags: str, depth: int, may_be_empty: bool = False) -> tuple[tuple[Item, ...], int]:
        """The items from i to the next `|` or `)` of this level (or the end), and where they stop."""
        items = []
        pattern = self.pattern
        while i < len(pattern) and pattern[i] not in "|)":
            if pattern.startswith("$", i):
                items.append((END, 0, 0, 0, 0))
                i += 1
            elif (assertion := _ASSERTIONS.get(pattern[i:i + 2] if pattern[i] == "\\" else pattern[i])) is not None:
                word = self.class_index(r"\w") if assertion in (WORD_BOUNDARY, NOT_WORD_BOUNDARY) else 0
                items.append((ASSERT, word, assertion, 0, 0))
                i += 1 if pattern[i] == "^" else 2
            elif pattern.startswith(("(?!", "(?=", "(?<!", "(?<="), i):
                behind = pattern[i + 2] == "<"
                negative = int(pattern[i + 2 + behind] == "!")
                # A lookaround's alternatives may match nothing: it is tried once, never iterated.
                alternatives, end = self.group(i + (4 if behind else 3), flags, depth, may_be_empty=True)
                index = self.literal_group(alternatives)
                if index is not None:
                    items.append((BEHIND if behind else AHEAD, index, negative, 0, 0))
                elif behind:
                    items.append((LOOKBEHIND, self.sub(alternatives), negative, self.behind_width(alternatives), 0))
                else:
                    items.append((LOOKAHEAD, self.sub(alternatives), negative, 0, 0))
                i = end
            elif pattern.startswith("(?>", i):
                # Atomic: its first way only, as a possessive group once; quantified, iterations of that.
                alternatives, i = self.group(i + 3, flags, depth)
                atomic = (REPEAT, self.sub(alternatives), 1, 1, POSSESSIVE)
                least, most, mode, i = self.quantifier(i)
                items.append(atomic if (least, most, mode) == (1, 1, GREEDY) else
                             (REPEAT, self.sub(((atomic,),)), least, most, mode))
                continue
            elif (opening := self.group_opening(i, flags)) is not None:
                # A capturing group matches as a non-capturing one: the pieces are whole matches.
                alternatives, i = self.group(*opening, depth)
                least, most, mode, i = self.quantifier(i)
                # Literals, once or optional (contractions, `'(?:[sdmt]|ll|ve|re)`): one step a
                # literal where a REPEAT would take one a character.
                index = self.literal_group(alternatives) if most == 1 and mode == GREEDY else None
                if index is not None:
                    items.append((GROUP, index, least, 1, 0))
                else:
                    items.append((REPEAT, self.sub(alternatives), least, most, mode))
                continue
            else:
                index, i = self.atom(i, flags)
                least, most, mode, i = self.quantifier(i)
                items.append((RUN, index, least, most, mode))
                continue
            if _QUANTIFIER.match(pattern, i):  # a quantified lookaround, end or assertion
                raise NotClassRuns
        if not may_be_empty and not any(kind in (RUN, GROUP, REPEAT) and least > 0 for kind, _, least, _, _ in items):
            raise NotClassRuns  # the alternative can match nothing (so no iteration of a group can)
        return tuple(items), i

    def alternatives(self, i: int, flags: str, depth: int,
                     may_be_empty: bool = False) -> tuple[tuple[tuple[Item, ...], ...], int]:
        """The alternatives from i to the `)` that closes their level (or the end), and where they stop."""
        alternatives = []
        while True:
            items, i = self.alternative(i, flags, depth, may_be_empty)
            alternatives.append(items)
            if len(alternatives) > MAX_ALTERNATIVES:
                raise NotClassRuns
            if i == len(self.pattern) or self.pattern[i] == ")":
                return tuple(alternatives), i
            i += 1  # the `|`

    def compile(self) -> ClassRuns:
        start, flags = 0, ""
        if found := _GLOBAL_FLAGS.match(self.pattern):  # flags for the whole pattern: only first
            if not set(found.group(1)) <= _FLAGS:
                raise NotClassRuns
            start, flags = found.end(), "".join(sorted(set(found.group(1))))
        alternatives, i = self.alternatives(start, flags, 0)
        if i != len(self.pattern):
            raise NotClassRuns  # a `)` that closes nothing
        version = regex_version(self.pattern)
        classes = tuple(_class_bitmap(atom, flags, version) for atom, flags in self.classes)
        return ClassRuns(self.pattern, classes, alternatives, tuple(self.groups), tuple(self.subs))


def compile_class_runs(pattern: str) -> ClassRuns | None:
    """The pattern compiled (module docstring), or None if it is not of the shape. The caller
    has compiled it with `regex` already (a pattern regex refuses is refused there)."""
    try:
        return _Compiler(pattern).compile()
    except (NotClassRuns, regex.error):
        return None


def _member(bitmap: bytes, char: str) -> bool:
    code = ord(char)
    return bool(bitmap[code >> 3] >> (code & 7) & 1)


def twin_ends(program: ClassRuns, text: str) -> list[int] | None:
    """The pure-Python twin of tokfx._class_runs: the ends (in characters) of the pieces
    `regex.findall(program.pattern, text)` gives; None where a character starts no match (the
    pattern does not cover the text: the caller asks `regex` for its error).

    `match` tries items[k:] at pos, then `then` (what follows them: the rest of the enclosing
    sequence, or the next iteration of a group) from where they end; the first end found is
    regex's, as both try the ways in the same order."""
    n, classes, groups, subs = len(text), program.classes, program.groups, program.subs

    def at(literal: tuple[int, ...], pos: int) -> bool:
        return 0 <= pos and pos + len(literal) <= n and all(_member(classes[c], text[pos + j]) for j, c in enumerate(literal))

    def first(ways) -> int:
        """The end of the first way (a callable) that matches, or -1."""
        return next((end for way in ways if (end := way()) >= 0), -1)

    def repeat(item: Item, count: int, pos: int, then) -> int:
        """A REPEAT item after `count` iterations, at pos: one more iteration or what follows,
        in the order of its mode (every iteration takes a character: the compiler sees to it)."""
        _, arg, least, most, mode = item

        def again() -> int:
            if count == most:
                return -1
            return first(lambda items=items: match(items, 0, pos, lambda end: repeat(item, count + 1, end, then))
                         for items in subs[arg])

        def stop() -> int:
            return then(pos) if count >= least else -1
        return first((stop, again) if mode == LAZY else (again, stop))

    def match(items, k: int, pos: int, then) -> int:
        if k == len(items):
            return then(pos)
        kind, arg, least, most, mode = items[k]

        def rest(end: int) -> int:
            return match(items, k + 1, end, then)
        if kind == END:
            return rest(pos) if pos == n or (pos == n - 1 and text[pos] == "\n") else -1
        if kind in (AHEAD, BEHIND):
            found = any(at(literal, pos - len(literal) if kind == BEHIND else pos) for literal in groups[arg])
            return rest(pos) if found != bool(least) else -1
        if kind == LOOKAHEAD:
            found = any(match(sub, 0, pos, lambda end: end) >= 0 for sub in subs[arg])
            return rest(pos) if found != bool(least) else -1
        if kind == LOOKBEHIND:  # a way from up to `most` characters back that ends at pos
            found = any(match(sub, 0, start, lambda end: end if end == pos else -1) >= 0
                        for start in range(pos, max(pos - most, 0) - 1, -1) for sub in subs[arg])
            return rest(pos) if found != bool(least) else -1
        if kind == ASSERT:
            if least == START:
                holds = pos == 0
            elif least == TEXT_END:
                holds = pos == n
            else:  # a word boundary: a word character on one side only
                word = classes[arg]
                before = pos > 0 and _member(word, text[pos - 1])
                holds = (before != (pos < n and _member(word, text[pos]))) == (least == WORD_BOUNDARY)
            return rest(pos) if holds else -1
        if kind == GROUP:
            return first([lambda literal=literal: rest(pos + len(literal)) if at(literal, pos) else -1
                          for literal in groups[arg]] + ([lambda: rest(pos)] if least == 0 else []))
        if kind == REPEAT:
            if mode == POSSESSIVE:  # the greedy way's end, never given back
                end = repeat(items[k], 0, pos, lambda end: end)
                return rest(end) if end >= 0 else -1
            return repeat(items[k], 0, pos, rest)
        count = 0
        while count < most and pos + count < n and _member(classes[arg], text[pos + count]):
            count += 1
        tries = {GREEDY: range(count, least - 1, -1), POSSESSIVE: [count], LAZY: range(least, count + 1)}[mode]
        return first(lambda taken=taken: rest(pos + taken) for taken in (tries if count >= least else ()))

    ends, pos = [], 0
    while pos < n:
        end = next((end for items in program.alternatives if (end := match(items, 0, pos, lambda end: end)) > pos), None)
        if end is None:
            return None
        ends.append(end)
        pos = end
    return ends
