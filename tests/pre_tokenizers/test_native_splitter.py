"""The native pre-tokenizer gives exactly the pieces of `regex.findall` with the same pattern."""
import array
import itertools
import sys
from collections import Counter

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS_FILES, FIXTURES, corpus_path
from tokfx import _pretokenize
from tokfx._count_table import CountTable, count_pieces
from tokfx.pre_tokenizers.patterns import PATTERNS

FAST = sorted(_pretokenize.FAST_PATTERNS)


def regex_pieces(name: str, text: str) -> list[bytes]:
    return [piece.encode("utf-8") for piece in regex.findall(PATTERNS[name], text)]


def assert_same_pieces(name: str, text: str) -> None:
    data = text.encode("utf-8")
    expected = regex_pieces(name, text)
    pieces = _pretokenize.split(data, name)
    if pieces != expected:
        first = next(i for i, (a, b) in enumerate(itertools.zip_longest(pieces, expected)) if a != b)
        pytest.fail(f"{name}: piece {first} differs: native {pieces[first - 2:first + 3]} "
                    f"regex {expected[first - 2:first + 3]}")
    assert list(_pretokenize.piece_ends(data, name)) == list(itertools.accumulate(map(len, expected)))


def test_fast_patterns_are_named_patterns():
    assert _pretokenize.FAST_PATTERNS <= PATTERNS.keys()
    assert "gpt2" in _pretokenize.FAST_PATTERNS


@pytest.mark.parametrize("relative", CORPUS_FILES)
@pytest.mark.parametrize("name", FAST)
def test_corpus_files(name, relative):
    assert_same_pieces(name, corpus_path(relative).read_bytes().decode("utf-8"))


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md"))
@pytest.mark.parametrize("name", FAST)
def test_fixtures(name, fixture):
    assert_same_pieces(name, (FIXTURES / fixture).read_bytes().decode("utf-8"))


EDGE_CASES = [
    "", " ", "   ", "a   ", "   a", "  a", " \n\n ", "a  \n b", "\n", "\r\n", "a\r\n\r\n  b",
    "x \n  ", "\t\ta", "\u3000\u3000a", "'s'S'll'LL", "'re've'Ve'RE'd'D'm'M't'T", "'", "''", "'x",
    "'ſ'ſt", "it's", "IT'S", "HELLO'S", "don'T", "a'll", "a'LL", "a'l", "'\n",
    "1", "12", "123", "1234", "12345", "123456", "1234567", " 1234567 ", "a1b22c333",
    "٣٣٣٣", "ⅫⅫⅫⅫ", "½¾", "x\u0301y", "\u0301\u0301", " \u0301", "A\u0301B", "ABC\u0301def",
    "\u0301AB", "\u0301AB'S", ".\u0301AB", " \u0301ABc", "\u0301ʰAB", "ǅAB", "ABʰ", "ABʰc",
    "ǅungla", "ʰʰa", "中文字符", "한국어 텍스트", "カタカナ ひらがな", "😀😀 a😀", "𝐀𝐁𝐜",
    "...\n/\n", "a/\n/b", "!!\r\n", " !!", " ,\n", "a\x0b\x0cb", "\x85a", "\xa0a", "a\u2028\u2029",
    "\x1c\x1d\x1e\x1f", "\x00a",
    "\u2581", "\u2581\u2581a\u2581b\u2581\u2581", "a\u2581", "\u2581\u2581", "a\u2581\u2581 \u2581中",  # sentencepiece's space
    "“a”\u2581\u2580\u2582\u2581—\u2581\u2581–",  # and characters of the same lead byte E2
    # DeepSeek's Split: ASCII punctuation before ASCII letters, a prefix before letters and marks,
    # other punctuation and symbols, the gaps it leaves; the ends of its CJK range.
    "!abc", "!!abc", "'été", "-Ab1", "~z", "1a", "1\u0301", "\x00a", "\x00\x00a", "\u200b\u200b",
    "a\x00\u0301", "$x", "。。\n\n", " 。a", "€€ \n", "一\u9fa5\u9fa6", "\u3040\u309f゠ヿ\u3100",
]


@pytest.mark.parametrize("text", EDGE_CASES)
@pytest.mark.parametrize("name", FAST)
def test_edge_cases(name, text):
    assert_same_pieces(name, text)


def every_code_point() -> str:
    return "".join(map(chr, itertools.chain(range(0xD800), range(0xE000, sys.maxunicode + 1))))


@pytest.mark.parametrize("separator", ["", " ", "'"])
@pytest.mark.parametrize("name", FAST)
def test_every_code_point(name, separator):
    """Every character class entry, alone and after a space or an apostrophe."""
    assert_same_pieces(name, separator.join(every_code_point()))


@pytest.mark.parametrize("name", FAST)
def test_letter_runs_read_a_word_at_a_time(name):
    """Letter runs are read 8 bytes at a time where 8 are left (letters_end): every ASCII
    character, and non-ASCII letters and a mark, at each place in and past that window, after
    a letter, a space or an apostrophe, with the text ending at every length around it."""
    others = [chr(code) for code in range(128)] + ["é", "中", "\u0301", "ſ"]
    for lead in ["a", " ", "'", "' "]:
        for before in range(11):
            for other in others:
                text = lead + "x" * before + other + "Yz" * 5
                for end in range(len(lead) + before, len(text) + 1):
                    assert_same_pieces(name, text[:end])


# One character of each kind the patterns tell apart: letters of every case category, marks,
# numbers, kinds of whitespace, the contraction letters (and ſ, which `(?i)s` matches), "/".
KINDS = ["a", "A", "ǅ", "ʰ", "中", "\u0301", "\u0903", "1", "٣", "Ⅻ", "½", " ", "\t", "\n", "\r",
         "\u3000", "\x85", "'", "s", "S", "ſ", "l", "L", "e", "v", "/", ".", "😀", "\u2581"]
FEWER_KINDS = ["a", "A", "ǅ", "ʰ", "中", "\u0301", "1", " ", "\t", "\n", "\r", "'", "s", "l", "/", "."]


@pytest.mark.parametrize("name", FAST)
def test_every_short_string(name):
    """Every string of up to 3 kinds of character, and of 4 of fewer kinds."""
    texts = itertools.chain(
        *(itertools.product(KINDS, repeat=length) for length in range(1, 4)),
        itertools.product(FEWER_KINDS, repeat=4),
    )
    for characters in texts:
        assert_same_pieces(name, "".join(characters))


# The kinds DeepSeek's Split and the Isolated Splits tell apart, besides: ASCII punctuation and
# symbols, others, characters that no alternative of DeepSeek's Split matches (a control, a
# format character), the ends of its CJK range.
SPLIT_KINDS = ["a", "Z", "é", "\u0301", "!", "$", "-", "。", "€", "1", "٣", " ", "\n", "\r", "\x00",
               "\u200b", "中", "\u9fa6", "ヿ", "\u3100", "'", "s"]


@pytest.mark.parametrize("name", FAST)
def test_every_short_string_of_the_split_kinds(name):
    for characters in itertools.product(SPLIT_KINDS, repeat=3):
        assert_same_pieces(name, "".join(characters))


FRAGMENTS = [
    " ", "  ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2003",
    "\u2028", "\u2029", "\u202f", "\u3000", "'", "'s", "'S", "'t", "'T", "'ll", "'LL", "'Ll",
    "'ve", "'VE", "'re", "'Re", "'m", "'M", "'d", "'D", "ſ", "/", ".", ",", "!", "-", "\"", "$",
    "a", "b", "s", "l", "e", "t", "Hello", "WORLD", "0", "7", "42", "2024", "\u0301", "\u0308",
    "é", "ß", "Æ", "ǅ", "ʰ", "中", "文", "가", "힣", "カ", "ひ", "ー", "😀", "🇺🇸", "𝐀", "𝐜", "٣",
    "Ⅻ", "½", "²", "\u200b", "\u200d", "\ufeff", "\x00", "\x1f",
    "!ab", "-Z", "$", "。", "€", "ヿ", "\u9fa6",  # DeepSeek's Split, the ends of its CJK range
]

fuzzed_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.characters(codec="utf-8")), max_size=40
).map("".join)


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=300, deadline=None)
@given(text=fuzzed_text)
def test_fuzzed_text(name, text):
    assert_same_pieces(name, text)


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=100, deadline=None)
@given(text=fuzzed_text)
def test_counting_on_fuzzed_text(name, text):
    data = text.encode("utf-8")
    counts = CountTable()
    count_pieces(counts, data, _pretokenize.piece_ends(data, name))
    assert counts.items() == list(Counter(regex_pieces(name, text)).items())


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=100, deadline=None)
@given(texts=st.lists(fuzzed_text, max_size=6))
def test_chunks_are_split_alone(name, texts):
    """With chunk_ends, each chunk gets the pieces regex finds in it alone, not those of the
    joined text (no piece runs across a chunk's end, none looks past it)."""
    chunks = [t.encode("utf-8") for t in texts]
    data = b"".join(chunks)
    expected = [piece for text in texts for piece in regex_pieces(name, text)]
    chunk_ends = array.array("q", itertools.accumulate(map(len, chunks)))
    assert list(_pretokenize.piece_ends(data, name, chunk_ends)) == list(itertools.accumulate(map(len, expected)))


def counted_in_one_pass(name: str, chunks: list[bytes], table: CountTable | None = None) -> CountTable:
    """CountTable.add_pretokens over the chunks joined (each chunk split alone)."""
    table = CountTable() if table is None else table
    table.add_pretokens(b"".join(chunks), _pretokenize.matcher(name),
                        array.array("q", itertools.accumulate(map(len, chunks))))
    return table


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=100, deadline=None)
@given(texts=st.lists(fuzzed_text, max_size=6), known=st.lists(fuzzed_text, max_size=2))
def test_counting_in_one_pass_on_fuzzed_text(name, texts, known):
    """add_pretokens (split and counted as the splitter goes, lookups fetched ahead) gives the
    counts of regex's pieces of each chunk alone, in order of first occurrence, also into a
    table that already holds counts."""
    table = counted_in_one_pass(name, [t.encode("utf-8") for t in known])
    counted_in_one_pass(name, [t.encode("utf-8") for t in texts], table)
    expected = Counter(piece for text in known + texts for piece in regex_pieces(name, text))
    assert table.items() == list(expected.items())


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "sentencepiece"])
def test_counting_in_one_pass_on_corpus(name, relative):
    """A corpus's lines as chunks: tens of thousands of keys, so the table grows while pieces
    wait to be added."""
    lines = corpus_path(relative).read_text(encoding="utf-8").splitlines(keepends=True)
    expected = Counter(piece for line in lines for piece in regex_pieces(name, line))
    assert counted_in_one_pass(name, [line.encode("utf-8") for line in lines]).items() == list(expected.items())


def add_pretokens(data: bytes, name: str, chunk_ends: array.array):
    CountTable().add_pretokens(data, _pretokenize.matcher(name), chunk_ends)


@pytest.mark.parametrize("function", [_pretokenize.piece_ends, add_pretokens])
@pytest.mark.parametrize("chunk_ends, message", [([], "end at"), ([2], "end at"), ([4], "end at"),
                                                   ([2, 1, 3], "decrease"), ([-1, 3], "decrease")])
def test_bad_chunk_ends_are_refused(function, chunk_ends, message):
    with pytest.raises(ValueError, match=message):
        function(b"abc", "gpt2", array.array("q", chunk_ends))


def test_add_pretokens_refuses_what_is_not_a_matcher():
    with pytest.raises(ValueError, match="PyCapsule"):
        CountTable().add_pretokens(b"abc", "gpt2", array.array("q", [3]))


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
@pytest.mark.parametrize("name", FAST)
def test_counting_on_corpus(name, relative):
    data = corpus_path(relative).read_bytes()
    text = data.decode("utf-8")
    counts = {}
    count_pieces(counts, data, _pretokenize.piece_ends(data, name))
    expected = Counter(regex_pieces(name, text))
    assert counts == expected
    assert list(counts) == list(expected)  # both in order of first occurrence


def test_empty_data():
    ends = _pretokenize.piece_ends(b"", "gpt2")
    assert isinstance(ends, array.array) and ends.typecode == "q" and len(ends) == 0
    assert _pretokenize.split(b"", "gpt2") == []


@pytest.mark.parametrize("function", [_pretokenize.piece_ends, _pretokenize.split])
def test_unknown_pattern_is_refused(function):
    with pytest.raises(ValueError, match="gpt2"):
        function(b"text", "no-such-pattern")
    with pytest.raises(ValueError, match="gpt2"):
        _pretokenize.matcher("no-such-pattern")
