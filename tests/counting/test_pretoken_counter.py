"""PretokenCounter (counting by batches through one native call each) against its oracle:
`regex.findall` over each text's normalized chunks, counted with a Counter."""
from array import array
from collections import Counter
from itertools import accumulate

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import corpus_text
from tokfx._count_table import CountTable
from tokfx.counting.pretoken_counter import PretokenCounter
from tokfx.pre_tokenizers import PreTokenizer

SPECIALS = ["<|endoftext|>", "<s>"]
texts = st.lists(st.lists(st.one_of(st.sampled_from(["<s>", "<|endoftext|>", " ", "  ", "\n", "a b", "ab1 2"]),
                                    st.text(max_size=8)), max_size=8).map("".join), max_size=8)


def expected_counts(pretokenizer: PreTokenizer, texts: list[str]) -> Counter:
    compiled = regex.compile(pretokenizer.pattern_regex)
    counts = Counter()
    for text in texts:
        for chunk, special in pretokenizer.chunks(text):
            if not special:
                counts.update(piece.encode("utf-8") for piece in compiled.findall(chunk))
    return counts


# A built-in pattern, the one that implies a normalizer, and a user regex (split in `regex`);
# into a dict, and into a CountTable (a built-in pattern's batches then go through
# CountTable.add_pretokens).
@pytest.mark.parametrize("pattern", ["gpt2", "sentencepiece", r"\s+|\S{1,3}"])
@pytest.mark.parametrize("counts", [dict, CountTable])
@settings(max_examples=100, deadline=None)
@given(texts=texts, batch_bytes=st.integers(1, 40))
def test_batches_count_what_each_text_holds(pattern, counts, texts, batch_bytes):
    pretokenizer = PreTokenizer(pattern, SPECIALS)
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # no lone surrogates
    counter = PretokenCounter(pretokenizer, counts(), batch_bytes)
    for text in texts:
        counter.add(text)
    counted = counter.flush()
    expected = expected_counts(pretokenizer, texts)
    assert counted == expected
    assert list(counted) == list(expected)  # keys in order of first occurrence


# Counting texts given as UTF-8, many at once (Texts: what the counting pass reads from JSON
# lines), counts what counting their str counts: without special tokens the data joins the batch
# whole; with them, they are cut out of each text's bytes where the text holds them. Groups of
# texts go in as UTF-8 or one str at a time (one with a lone surrogate, whose encoding fails
# half-way: what it queued is taken back), in turn.
@pytest.mark.parametrize("pattern", ["gpt2", r"\s+|\S{1,3}"])
@pytest.mark.parametrize("specials", [SPECIALS, []])
@settings(max_examples=100, deadline=None)
@given(groups=st.lists(st.tuples(texts, st.booleans()), max_size=5), batch_bytes=st.integers(1, 1000))
def test_texts_given_as_utf8_count_what_their_str_counts(pattern, specials, groups, batch_bytes):
    pretokenizer = PreTokenizer(pattern, specials)
    counter = PretokenCounter(pretokenizer, CountTable(), batch_bytes)
    assert counter.takes_utf8
    counted_texts = []
    for group, as_utf8 in groups:
        group = [t.encode("utf-8", "replace").decode("utf-8") for t in group]
        if as_utf8:
            encoded = [t.encode("utf-8") for t in group]
            counter.add_texts(b"".join(encoded), array("q", accumulate(map(len, encoded))))
        else:
            for text in [*group, "x <s>a\ud800 b"]:
                counter.add(text)
            group.append("x <s>a\ufffd b")
        counted_texts += group
    counted = counter.flush()
    assert counted == expected_counts(pretokenizer, counted_texts)


def test_a_normalizing_pretokenizer_takes_no_utf8():
    counter = PretokenCounter(PreTokenizer("sentencepiece"), CountTable())
    assert not counter.takes_utf8
    with pytest.raises(ValueError, match="normalizer"):
        counter.add_texts(b"a b", array("q", [3]))


def test_nothing_is_counted_before_the_batch_is_full_or_flushed():
    counter = PretokenCounter(PreTokenizer("gpt2"), CountTable(), batch_bytes=10)
    counter.add("hello")
    assert len(counter.counts) == 0
    counter.add(" world")  # 11 bytes waiting: the batch is counted
    assert counter.counts.to_dict() == {b"hello": 1, b" world": 1}
    counter.add(" again")
    assert counter.flush().to_dict() == {b"hello": 1, b" world": 1, b" again": 1}


@pytest.mark.parametrize("relative", ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt"])
def test_counting_a_corpus_by_lines_equals_counting_its_pieces(relative):
    pretokenizer = PreTokenizer("gpt2")
    lines = corpus_text(relative).splitlines(keepends=True)
    counter = PretokenCounter(pretokenizer, CountTable())
    for line in lines:
        counter.add(line)
    assert counter.flush().items() == list(expected_counts(pretokenizer, lines).items())
