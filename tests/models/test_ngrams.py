"""The n-gram initial vocabulary: the Cython core (tokfx._ngrams) against its pure-Python twin,
and a hand-counted case."""
from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._ngrams import (SEED_INHERITED, SEED_INVALID, SEED_SPACE, seed_substrings, top_ngram_counts,
                           top_ngrams)
from tokfx._packed_tokens import PackedTokens
from tokfx.alphabet import BYTES
from conftest import corpus_text
from tokfx.reference import ngrams as ref


def pairs(found):
    """The cores' packed n-grams (symbols, offsets, counts) as the twin's [(symbol tuple, count)]."""
    symbols, offsets, counts = found
    return list(zip(PackedTokens(symbols, offsets), counts))



def test_ngram_initial_vocabulary_counts_occurrences_times_counts():
    words = [b"abab", b"ba"]
    symbols, offsets = BYTES.map_pieces(b"".join(words), array("q", accumulate(map(len, words))))
    # "abab" x3: ab 2x3=6, ba 1x3=3, aba 3, bab 3, abab 3; "ba" x2: ba 2 -> ba 5.
    counts = array("q", [3, 2])
    got = top_ngrams(symbols, offsets, counts, 3, 16)
    assert got == [tuple(b"ab"), tuple(b"ba"), tuple(b"aba")]  # ties (3) by symbols: aba < abab < bab
    assert top_ngrams(symbols, offsets, counts, 10, 2) == [tuple(b"ab"), tuple(b"ba")]
    assert top_ngrams(symbols, offsets, counts, 0, 16) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(-2, 3), max_size=12), st.integers(1, 4)), max_size=8),
       st.integers(0, 40), st.integers(1, 6))
def test_top_ngrams_equal_the_reference(pieces, how_many, max_width):
    offsets = array("q", [0, *accumulate(len(p) for p, _ in pieces)])
    symbols = array("i", [s for p, _ in pieces for s in p])
    counts = array("q", [c for _, c in pieces])
    assert top_ngrams(symbols, offsets, counts, how_many, max_width) == ref.top_ngrams(
        [p for p, _ in pieces], counts, how_many, max_width)
    assert pairs(top_ngram_counts(symbols, offsets, counts, how_many, max_width)) == ref.top_ngram_counts(
        [p for p, _ in pieces], counts, how_many, max_width)


def test_seed_substrings_by_hand():
    # Symbols: 0 U+2581, 1 2 Latin, 3 Common, 4 Inherited, 5 a fallback byte.
    classes = array("i", [SEED_SPACE, 1, 1, 0, SEED_INHERITED, SEED_INVALID])
    pieces = [[0, 1, 2, 1], [0, 1, 2, 3], [0, 1, 2], [1, 2, 4, 3], [1, 5, 1, 2]]
    offsets = array("q", [0, *accumulate(map(len, pieces))])
    symbols = array("i", [s for p in pieces for s in p])
    got = dict(pairs(seed_substrings(symbols, offsets, array("q", [2, 1, 1, 1, 1]), 100, 16, classes)))
    # (0, 1, 2) is followed by 1, 3 and a piece's end; (1, 2) by 1, 3, the end and 4. Not
    # branching: (0, 1) (only 2 follows), (2, 1) and (1, 2, 1) (only a piece's end), (1, 2, 4)
    # (once). (2, 3) and (4, 3) mix scripts; nothing spans the byte 5 or holds U+2581 second.
    assert got == {(0, 1, 2): 4, (1, 2): 6}
    # Both score count x length 12: the tie goes by symbols.
    assert pairs(seed_substrings(symbols, offsets, array("q", [2, 1, 1, 1, 1]), 1, 16, classes)) == [((0, 1, 2), 4)]
    with pytest.raises(ValueError, match="no class"):
        seed_substrings(symbols, offsets, array("q", [1] * 5), 10, 16, classes[:5])


def test_seed_substrings_with_line_ends_by_hand():
    # Symbols 0 U+2581, 1 2 3 Latin. (0, 1, 2) ends a line once and its line goes on once: two
    # followers, as sentencepiece's suffix array over lines sees a space and a line's end. Always
    # at a line's end or never, one (a piece's end stays one follower without line_ends).
    classes = array("i", [SEED_SPACE, 1, 1, 1])
    pieces = [[0, 1, 2], [0, 2, 3], [1, 3]]
    offsets = array("q", [0, *accumulate(map(len, pieces))])
    symbols = array("i", [s for p in pieces for s in p])
    counts = array("q", [2, 3, 1])
    grams = lambda ends: {g for g, _ in pairs(seed_substrings(symbols, offsets, counts, 100, 16, classes, ends))}
    assert grams(None) == grams(array("q", [0, 0, 0])) == set()
    assert grams(array("q", [1, 0, 0])) == {(0, 1, 2), (1, 2)}
    assert grams(array("q", [2, 3, 1])) == set()
    assert grams(array("q", [2, 1, 0])) == {(0, 2, 3), (2, 3)}
    with pytest.raises(ValueError, match="2 line end counts for 3 pieces"):
        grams(array("q", [0, 0]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 6), max_size=12), st.integers(1, 4), st.integers(0, 4)),
                max_size=8),
       st.integers(0, 40), st.integers(1, 6),
       st.lists(st.sampled_from([SEED_INVALID, SEED_SPACE, SEED_INHERITED, 0, 1, 2]), min_size=7, max_size=7),
       st.booleans())
def test_seed_substrings_equal_the_reference(pieces, how_many, max_width, classes, with_line_ends):
    offsets = array("q", [0, *accumulate(len(p) for p, _, _ in pieces)])
    symbols = array("i", [s for p, _, _ in pieces for s in p])
    counts = array("q", [c for _, c, _ in pieces])
    # Of a piece's occurrences, none, some or all end a line.
    line_ends = array("q", [min(e, c) for _, c, e in pieces]) if with_line_ends else None
    assert pairs(seed_substrings(symbols, offsets, counts, how_many, max_width, array("i", classes), line_ends)) == \
        ref.seed_substrings([p for p, _, _ in pieces], counts, how_many, max_width, classes, line_ends)


@pytest.mark.parametrize("corpus, size", [("chinese/hongloumeng.txt", 30_000), ("english/pg2600_war_and_peace.txt", 60_000)])
def test_seed_substrings_equal_the_reference_on_a_corpus(corpus, size):
    # Real text, its lines as pieces (each line's occurrences ending it), a space a SPACE
    # symbol: on Chinese most substrings occur once, which the core makes no nodes for, and the
    # text is large enough that its table of counters (2 x the symbols) has collisions.
    lines = [line for line in corpus_text(corpus)[:size].replace("\r\n", "\n").split("\n") if line]
    alphabet = sorted({c for line in lines for c in line})
    ids = {c: i for i, c in enumerate(alphabet)}
    pieces = [[ids[c] for c in line] for line in lines]
    classes = [SEED_SPACE if c == " " else 0 for c in alphabet]
    offsets = array("q", [0, *accumulate(map(len, pieces))])
    symbols = array("i", [s for p in pieces for s in p])
    counts = array("q", [1] * len(pieces))
    line_ends = array("q", [1] * len(pieces))
    got = pairs(seed_substrings(symbols, offsets, counts, 5_000, 16, array("i", classes), line_ends))
    assert len(got) == 5_000 and got == ref.seed_substrings(pieces, counts, 5_000, 16, classes, line_ends)
