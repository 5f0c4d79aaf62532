"""A user pattern of the GPT shape, compiled into class runs (tokfx.pre_tokenizers.class_runs),
finds exactly the pieces of `regex.findall` with the same pattern, natively and in the twin."""
import array
import itertools
import pickle
import threading

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS_FILES, corpus_path
from test_native_splitter import EDGE_CASES, FRAGMENTS
from tokfx._class_runs import ClassRunsMatcher
from tokfx.pre_tokenizers import user_pattern
from tokfx.pre_tokenizers.class_runs import compile_class_runs, twin_ends
from tokfx.pre_tokenizers.patterns import DEEPSEEK_SPLIT, PATTERNS
from tokfx.pre_tokenizers.pre_tokenizer import PreTokenizer
from tokfx.pre_tokenizers.user_pattern import UserPattern, checked_user_pattern

# Patterns users bring (as their files spell them) and made-up ones that exercise each item kind:
# possessive and counted runs, `$`, lookaheads of several characters, case-insensitive groups,
# runs that must give characters back, `.`, escapes.
PATTERNS_UNDER_TEST = {
    "qwen2": PATTERNS["qwen2"],
    "o200k": PATTERNS["o200k"],
    "tekken": PATTERNS["tekken"],
    "cl100k": PATTERNS["cl100k"],
    "gpt2": PATTERNS["gpt2"],
    "llama3": PATTERNS["llama3"],
    "deepseek": PATTERNS["deepseek"],  # a repeated group of a class and a lookahead
    "deepseek-split": DEEPSEEK_SPLIT,  # covers not every text: a gap is compared too
    "firstspace-digit": PATTERNS["firstspace-digit"],
    "digits-1-2": r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "words-and-case": r"""\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}{2}|\p{N}|'(?:[sdmt]|ll|ve|re)| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "give-back": r"""\p{L}*\p{L}{2}x?|[a-z]+[a-z]{3,5}\d|\w+(?=[.!?] )|\s+(?= \S)|\S|\s+""",
    "escapes": r"""\x41\u00e9+|\U0001F600+|[\]\[\\^-]+|\.{2,}|.|\n|\t+|\d{,3}\D""",
    "not-covering": r"""\p{L}+|\s""",
    # Lazy runs, word boundaries and the start of the text.
    "word-boundaries": r"""\b\p{L}+\b|\B'[a-z]+|\p{N}{1,3}?|^\s+|\s+?(?=\S)|\s+|[^\s\p{L}\p{N}]+?|.""",
    "lazy": r"""(?i:'s|'t|'re)|\p{L}+?\b|\B\p{N}|\p{N}*?\p{N}|\s*?\n|\s|.""",
    "start": r"""\A\p{L}+|\b\p{Lu}\p{Ll}*?(?=\p{Ll})|\w+|\s+|.""",
    # Groups of sequences, quantified (greedy, lazy, possessive, counted), nested, capturing;
    # `\Z`, `\z`.
    "groups": r"""'(?:[sdmt]|ll|ve|re)|[a-z]+(?:'[a-z]+)?|(?:\p{L}\p{M}*)+|(?:\d{1,3})(?:,\d{3})*|(?:\s*\n)+|\s+|.""",
    "lookbehind": r"""(?<=\p{L}')\p{L}|(?<=\p{N})\p{L}+|(?<![\p{L}'])'(?:s|t|ll)|(?<=\s)\p{L}+|\p{L}+|(?<!\s)\s+|\s|.""",
    "nested-groups": r"""(?i:(?:th|a(?:b|c)+)+?e)|(?:\p{N}(?:[.,]\p{N}+)?){2,3}|(?:[^\s\w]\s?){1,4}+|\s+\Z|\s\z|(\s)|.""",
    # Lookarounds of runs and groups (numbers cut in threes from the right; a lookbehind of
    # alternatives of several widths, one of them with `^`; lookaheads that may match nothing).
    "lookaround": r"""\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))|(?<=\p{N}[.,]?)\p{L}+\s?|\p{Lu}(?=\p{Ll}{2,}\b)|(?<=\s\p{Lu}|^\p{Lu}|(?:ab){2})\p{Ll}+\s*|\p{L}+(?=\s*[.!?])\s*|(?<!\p{L}\p{M}?)'\p{L}+|\p{L}+|(?=\s+\n)\s|(?<![a-z]{2}\p{N}?)\s\s|(?!(?:\p{L}|')?$)\s\S?|\s+|.""",
    # Atomic groups (once, quantified, their alternatives' first way only, never given back to
    # what follows), named groups.
    "atomic-named": r"""(?>\p{L}+)\p{L}|(?>a|ab)c|(?>\p{L}+|\p{N})'?|(?P<num>\p{N}{2})+|(?<sp> )(?>\p{L}+)(?!\p{L})|(?>[^\s\w]+?)\p{P}?|(?>\s+)(?<!\n)|(?>\s|x)++|.""",
    # Flags for the whole pattern, and flags of a group that turn one off or `s` on.
    "flags": r"""(?i)(?:'s|'t|'re)|(?-i:[A-Z])[a-z]|\p{L}+|(?s:.)\n?|\s""",
}


def regex_ends(pattern: str, text: str) -> list[int] | None:
    """The ends of regex's matches, or None where they leave a gap (what the matchers refuse)."""
    ends, at = [], 0
    for match in regex.finditer(pattern, text):
        if match.start() != at:
            return None
        ends.append(at := match.end())
    return ends if at == len(text) else None


@pytest.fixture(scope="module")
def compiled():
    programs = {name: compile_class_runs(pattern) for name, pattern in PATTERNS_UNDER_TEST.items()}
    return {name: (program, ClassRunsMatcher(program)) for name, program in programs.items()}


def assert_same_ends(name: str, text: str, compiled, twin: bool = True) -> None:
    program, matcher = compiled[name]
    expected = regex_ends(PATTERNS_UNDER_TEST[name], text)
    if twin:
        assert twin_ends(program, text) == expected
    data = text.encode("utf-8")
    native = matcher.piece_ends(data)
    byte_ends = None if expected is None else list(itertools.accumulate(
        len(text[start:end].encode("utf-8")) for start, end in zip([0] + expected, expected)))
    if native is not None and list(native) != byte_ends:
        first = next(i for i, (a, b) in enumerate(itertools.zip_longest(native, byte_ends or [])) if a != b)
        pytest.fail(f"{name}: piece {first} differs: native ends {list(native[first - 2:first + 3])} regex"
                    f" {(byte_ends or [])[first - 2:first + 3]}")
    assert native is None if byte_ends is None else list(native) == byte_ends


def test_every_pattern_under_test_has_the_shape(compiled):
    assert all(program is not None for program, _ in compiled.values())


@pytest.mark.parametrize("pattern", [
    r"(?:ab)??|\s", r"(?=\bword)|\s", r"\b+a|\s", r"\Z|\s", r"a*|\s", r"\p{L}|(?:)|\s", r"(\p{L})\1|\s",
    r"^|\s", r"[[:alpha:]]+|\s", r"a{}|\s", r"(?!a)+b|\s", r"\X|\s",
    # Groups: an alternative that can match nothing (an empty iteration), a lookahead of more
    # than literals, a lookbehind of more than literals, a named group, groups too deep.
    r"(?:a|b?)+c|\s", r"(?:a*)*b|\s", r"(?:a|)b|\s", r"(?>a|)b|\s", r"(?P<x>a)(?P=x)|\s",
    "(?:" * 17 + "a" + ")" * 17 + r"|\s", "(?=" * 17 + "a" + ")" * 17 + r"b|\s",
    # Lookbehinds that may span more than MAX_BEHIND characters or that `regex`, matching them
    # backwards, may match otherwise; flags other than `i` and `s`, or later than the start.
    r"(?<=a+)b|\s", r"(?<=a{33})b|\s", r"(?<=(?:ab){17})c|\s", r"(?<=a{1,2}+)b|\s", r"(?<=(?>a|ab))c|\s",
    r"(?<=(?=a)\w)b|\s", r"(?<=a(?!b))\w|\s", r"(?m)a|\s", r"(?x)a b|\s", r"(?a:\w)|\s", r"a(?i)b|\s",
    r"(?i-m:a)|\s", r"(?iL)a|\s", r"(?<=x)+a|\s",
    r"(?f:ss)|\s", r"(?!\S)", "|".join(f"x{i}" for i in range(65)),
])
def test_other_shapes_are_left_to_regex(pattern):
    regex.compile(pattern)
    assert compile_class_runs(pattern) is None


@pytest.mark.parametrize("text", EDGE_CASES)
@pytest.mark.parametrize("name", PATTERNS_UNDER_TEST)
def test_edge_cases(name, text, compiled):
    assert_same_ends(name, text, compiled)


# Lookarounds of more than literals, atomic and named groups, flags: each pattern on a text where
# a matcher that got the construct wrong (a lookbehind whose way ends past where it stands, one
# start too few, an atomic group that gives characters back or tries its next alternative, a
# flag not turned off...) finds other pieces than regex.
NEW_SHAPE_CASES = [
    (r"(?<=\p{L}{2})\p{L}+|\s|.", "ab cde f"),
    (r"(?<!\p{N}{2})\p{N}+|\s|.", "12 345 6"),
    (r"(?<=a\p{N}?)b\w*|\s|.", "ab a1b a12b xb"),
    (r"(?<=^\s?)\w+|\s|.", " ab cd"),
    (r"(?<=(?:ab|c){2})\w+|\s|.", "abcx ccx abab x"),
    (r"(?<=\p{L}{1,3}?)\p{N}+\w|\s|.", "abc12 x1y 9z"),
    (r"(?<=\b\w{3})\w+|\w|\s|.", "abcdef ab abcd"),
    (r"(?<!\s|^)\w+|\s|.", "ab cd e"),
    (r"\d{1,3}(?=(?:\d{3})*(?!\d))|\s|.", "1 12 123 1234 1234567 12345678"),
    (r"\w+(?=\s*[.!?])|\w|\s|.", "hi . ok ! no"),
    (r"(?!\s*\n)\s+|\s|.", "  \n   x\t\n"),
    (r"\w(?=|x)\w|\s|.", "ab c"),
    (r"(?!)a|(?=)b|\s|.", "ab"),
    (r"(?=(?<=a)b)\w+|\s|.", "ab b abc"),
    (r"(?>a|ab)c|(?>\w+)\w|\w|\s|.", "abc ac ab"),
    (r"(?>\s+)(?<!\n)|\s|.", "  \n  x"),
    (r"(?>a+?)a|\w|\s", "aaa"),
    (r"(?>\w)+x|\w+|\s|.", "abx ab"),
    (r"(?>\w+){2}|\w|\s", "abc d"),
    (r"(?P<a>\w)(?<b>\d)+|\w+|\s", "a12 bc"),
    (r"(?i)ab|(?-i:c)d|\w|\s", "AB Cd cD CD"),
    (r"(?s).+|x", "a\nb"),
    (r"(?s:.)\n|.|\n", "a\n\n\nb"),
    (r"(?i:(?-i:a)b)+|\w|\s", "aBaB AB ab"),
]


@pytest.mark.parametrize("pattern, text", NEW_SHAPE_CASES)
def test_new_shapes_on_their_edge_cases(pattern, text):
    program = compile_class_runs(pattern)
    assert program is not None
    matcher = ClassRunsMatcher(program)
    expected = [m.span() for m in regex.finditer(pattern, text)]
    assert matcher.spans(text.encode("utf-8")) == expected
    ends = regex_ends(pattern, text)
    assert twin_ends(program, text) == ends
    native = matcher.piece_ends(text.encode("utf-8"))
    assert (None if native is None else [len(text.encode()[:e].decode()) for e in native]) == ends


fuzzed_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS + ["A\u00e9\u00e9", "\U0001F600\U0001F600", "]\\[^-", "...", "x1",
                                           "abcdefg1", "word. ", "x x", "  \n "]),
              st.characters(codec="utf-8")), max_size=40
).map("".join)


# Random patterns of the shape: alternatives of items drawn from every kind the compiler takes.
_ATOMS = [r"\p{L}", r"\p{N}", r"\s", r"\S", r"\w", r"[a-z]", r"[^\s\p{L}]", ".", "a", "'", r"\n"]
_RUN = st.tuples(st.sampled_from(_ATOMS), st.sampled_from(["", "?", "*", "+", "{2}", "{1,3}", "{2,}"]),
                 st.sampled_from(["", "+", "?"])).map("".join)
_TAKING_RUN = st.tuples(st.sampled_from(_ATOMS), st.sampled_from(["", "+", "{2}", "{1,3}"]),
                       st.sampled_from(["", "+", "?"])).map("".join)
_GROUP_QUANTIFIER = st.tuples(st.sampled_from(["", "?", "*", "+", "{2}", "{1,3}", "{2,}"]),
                              st.sampled_from(["", "+", "?"])).map("".join)
_ASSERTION = st.sampled_from([r"\b", r"\B", "^", r"\A", "$", r"\Z", r"\z", r"(?!\S)", r"(?=\s)", r"(?:'s|'t)?",
                              r"(?i:'s|'re)", r"(?:a|bc)", r"(?<=\s)", r"(?<!\w)", r"(?<='s|a)", r"(?<!\p{L}\p{L})",
                              r"(?=\s*\S)", r"(?<=^|\s)", r"(?<!\p{L}\p{N}?)", r"(?=(?:\p{N}{2})+\b)"])
# A lookbehind's runs: bounded (else regex runs it), not possessive (matched forwards by us).
_BOUNDED_RUN = st.tuples(st.sampled_from(_ATOMS), st.sampled_from(["", "?", "{2}", "{1,3}", "{,2}"]),
                         st.sampled_from(["", "?"])).map("".join)


def _group(inner):
    """A group of sequences of `inner` items, each ending with a run that takes a character (an
    alternative that can match nothing is left to regex), quantified: non-capturing, capturing,
    named, atomic, with flags."""
    sequence = st.tuples(st.lists(inner, max_size=1).map("".join), _TAKING_RUN).map("".join)
    return st.tuples(st.sampled_from(["(?:", "(?i:", "(", "(?P<g>", "(?<h>", "(?>", "(?s:", "(?-i:"]),
                     st.lists(sequence, min_size=1, max_size=3).map("|".join), st.just(")"), _GROUP_QUANTIFIER).map("".join)


def _lookaround(inner):
    """A lookahead of sequences of `inner` items, which may match nothing; a lookbehind of
    sequences of bounded runs, assertions and optional groups of them."""
    ahead = st.tuples(st.sampled_from(["(?=", "(?!"]), st.lists(st.lists(inner, max_size=2).map("".join),
                                                                   min_size=1, max_size=2).map("|".join))
    behind_item = st.one_of(_BOUNDED_RUN, st.sampled_from([r"\b", "^", "$", r"(?:a|\s\p{L})?", r"(?:\p{L}\p{N}?){1,2}"]))
    behind = st.tuples(st.sampled_from(["(?<=", "(?<!"]), st.lists(st.lists(behind_item, max_size=3).map("".join),
                                                                     min_size=1, max_size=2).map("|".join))
    return st.one_of(ahead, behind).map(lambda parts: "".join(parts) + ")")


# An item: a run, an assertion or lookaround, a group of them (nested up to 2 deep).
_ITEM = st.recursive(st.one_of(_RUN, _ASSERTION), lambda inner: st.one_of(_group(inner), _lookaround(inner)),
                     max_leaves=4)
# An alternative: often an assertion or lookaround, a run, more items, often an assertion or
# lookahead; or items; or a group first (most of them match something only when their start
# does). A lookaround first decides whether the alternative's piece is taken at all, where a
# wrong answer shows.
_ALTERNATIVE = st.tuples(st.one_of(st.sampled_from(["", r"\b", r"\B", "^", r"\A", r"(?<=\s)", r"(?<!\w)", r"(?<='s|a)"]),
                                   _lookaround(st.one_of(_RUN, _ASSERTION))),
                         _RUN, st.lists(_ITEM, max_size=2).map("".join),
                         st.sampled_from(["", r"\b", r"\B", "$", r"\Z", r"(?!\S)"])).map("".join)
random_pattern = st.tuples(
    st.sampled_from(["", "", "", "(?i)", "(?s)"]),  # flags for the whole pattern
    # (items then a run that takes a character: items alone, mostly lookarounds and assertions
    # now, would often match nothing, and the pattern would be left to regex.)
    st.lists(st.one_of(_ALTERNATIVE, st.tuples(st.lists(_ITEM, min_size=1, max_size=3).map("".join), _TAKING_RUN).map("".join),
                       st.tuples(_group(_ITEM), st.lists(_ITEM, max_size=1).map("".join)).map("".join)),
             min_size=1, max_size=4).map(lambda alternatives: "|".join(alternatives + [r"\s", "."]))).map("".join)


@settings(max_examples=400, deadline=None)
@given(pattern=random_pattern, text=fuzzed_text)
def test_random_patterns(pattern, text):
    """Native == twin == regex on random patterns of the shape and random texts."""
    program = compile_class_runs(pattern)
    if program is None:  # e.g. an alternative that can match nothing: regex runs it
        return
    spans = ClassRunsMatcher(program).spans(text.encode("utf-8"))
    if spans is None:
        # Over the step budget (nested repeated groups backtrack exponentially): the call runs in
        # regex, and the twin, which counts no steps, is not asked to run as long.
        return
    assert spans == [m.span() for m in regex.finditer(pattern, text)]
    covered = regex_ends(pattern, text)
    assert twin_ends(program, text) == covered
    native = ClassRunsMatcher(program).piece_ends(text.encode("utf-8"))
    assert (None if native is None else [len(text.encode()[:e].decode()) for e in native]) in (covered, None)


@pytest.mark.parametrize("name", PATTERNS_UNDER_TEST)
@settings(max_examples=300, deadline=None)
@given(text=fuzzed_text)
def test_fuzzed_text(name, text, compiled):
    assert_same_ends(name, text, compiled)


@pytest.mark.parametrize("name", PATTERNS_UNDER_TEST)
@settings(max_examples=200, deadline=None)
@given(text=fuzzed_text)
def test_spans_are_regexs_matches(name, text, compiled):
    """A Hugging Face Split's matches: the text between them skipped, as regex.finditer skips it."""
    _, matcher = compiled[name]
    assert matcher.spans(text.encode("utf-8")) == [m.span() for m in regex.finditer(PATTERNS_UNDER_TEST[name], text)]


def test_a_split_of_a_user_pattern_runs_natively():
    user = UserPattern(DEEPSEEK_SPLIT)
    text = "abc 123 !x 中文\n\n 4"
    assert user.native is not None
    assert user.spans(text) == [m.span() for m in regex.finditer(DEEPSEEK_SPLIT, text)]


@pytest.mark.parametrize("name", PATTERNS_UNDER_TEST)
def test_every_code_point(name, compiled):
    """Each code point alone between spaces: where a class's Unicode table could differ."""
    every = " ".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert_same_ends(name, every, compiled, twin=False)


@pytest.mark.parametrize("relative", CORPUS_FILES)
@pytest.mark.parametrize("name", ["qwen2", "o200k", "tekken", "digits-1-2", "words-and-case", "give-back", "groups",
                                  "nested-groups", "deepseek", "lookaround", "atomic-named", "flags"])
def test_corpus_files(name, relative, compiled):
    text = corpus_path(relative).read_bytes().decode("utf-8")[:300_000]
    # The twin recurses once an iteration of a group (Python's stack holds about a hundred): on
    # the corpora's longer pieces (Japanese without spaces) only the native matcher is compared.
    assert_same_ends(name, text, compiled, twin=not compiled[name][0].subs)


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(fuzzed_text, max_size=6))
def test_chunks_are_split_alone(texts, compiled):
    _, matcher = compiled["o200k"]
    data = "".join(texts).encode("utf-8")
    chunk_ends = list(itertools.accumulate(len(t.encode("utf-8")) for t in texts))
    expected = []
    for start, text in zip([0] + chunk_ends, texts):
        expected += [start + e for e in matcher.piece_ends(text.encode("utf-8"))]
    assert list(matcher.piece_ends(data, array.array("q", chunk_ends))) == expected


def test_a_pattern_that_backtracks_badly_runs_in_regex_past_the_step_budget():
    pattern = r"\p{L}*\p{L}*\p{L}*!|[\s\S]"
    text = "a" * 300 + "?"  # no "!": cubic backtracking, fast enough for regex at this length
    assert ClassRunsMatcher(compile_class_runs(pattern)).piece_ends(text.encode()) is None  # over budget
    assert UserPattern(pattern).findall(text) == regex.findall(pattern, text)  # regex's pieces


def test_a_user_pattern_of_the_shape_runs_natively_and_splits_as_regex():
    pattern = PATTERNS_UNDER_TEST["digits-1-2"]
    pre = PreTokenizer(pattern)
    assert pre.pattern_name is None and pre._user.native is not None
    text = "I'LL pay 12345 dollars,\n\n  tomorrow! 中文 😀"
    assert pre.pieces(text) == [p.encode() for p in regex.findall(pattern, text)]


def test_a_user_pattern_that_skips_a_character_still_names_it():
    with pytest.raises(ValueError, match=r"does not cover the text: it skips '#b' at character 1"):
        checked_user_pattern(r"[^#]+").findall("a#b")


def test_a_native_matcher_that_differs_from_regex_on_the_probe_is_dropped(monkeypatch):
    """The guard behind the compiler: were it wrong about a pattern (here: handed another
    pattern's program), the probe finds it and the pattern runs in `regex`."""
    wrong = compile_class_runs(r"\p{L}{1,2}|\p{N}|\s|[^\s\p{L}\p{N}]")
    monkeypatch.setattr(user_pattern, "compile_class_runs", lambda pattern: wrong)
    pattern = r"\p{L}+|\p{N}+|\s|[^\s\p{L}\p{N}]"
    checked_user_pattern.cache_clear()
    try:
        user = checked_user_pattern(pattern)
        assert user.native is None
        assert user.findall("Hello 123") == ["Hello", " ", "123"]
    finally:
        checked_user_pattern.cache_clear()


def test_a_pickled_user_pattern_runs_natively_in_the_receiving_process():
    pattern = PATTERNS_UNDER_TEST["digits-1-2"]
    user = checked_user_pattern(pattern)
    copy = pickle.loads(pickle.dumps(user))
    assert copy.native is not None and copy.native is not user.native
    text = "Hello WORLD 1234 it's\n\n  x"
    assert copy.findall(text) == regex.findall(pattern, text)


def test_a_piece_of_many_iterations_runs_in_regex_within_a_small_stack():
    """Each open iteration of a group holds C stack frames: past a bound (a piece of about a
    thousand iterations here) the call runs in `regex`, in a thread of 1 MB of stack as well."""
    pattern = r"(?:(?:a\s?)|b)+|[\s\S]"
    text = "a " * 4000 + "b!"
    found = []
    previous = threading.stack_size(1 << 20)
    try:
        thread = threading.Thread(target=lambda: found.append(
            (ClassRunsMatcher(compile_class_runs(pattern)).piece_ends(text.encode()), UserPattern(pattern).findall(text))))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert found == [(None, regex.findall(pattern, text))]
    assert twin_ends(compile_class_runs(pattern), "a " * 20 + "b!") == [41, 42]


@pytest.mark.parametrize("pattern", [r"\p{L}+(?=\p{L}*\p{L}*\p{L}*!)|[\s\S]", r"(?:\p{L}(?=\p{L}*\p{L}*!))+|[\s\S]",
                                     r"(?<=\p{L}{0,16}\p{L}{0,16})x|(?<!\p{L}?\p{L}?\p{L}?\p{L}?\p{L}?!)\p{L}|[\s\S]"])
def test_a_lookaround_that_backtracks_badly_runs_in_regex_past_the_step_budget(pattern):
    text = "a" * 300 + "?"  # no "!": each lookaround backtracks over the letters after it
    assert ClassRunsMatcher(compile_class_runs(pattern)).piece_ends(text.encode()) is None  # over budget
    assert UserPattern(pattern).findall(text) == regex.findall(pattern, text)  # regex's pieces
