"""The n-gram initial vocabulary: the Cython core (tokfx._ngrams) against its pure-Python twin,
and a hand-counted case."""
from array import array
from itertools import accumulate

from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._ngrams import top_ngram_counts, top_ngrams
from tokfx.alphabet import BYTES
from tokfx.reference import ngrams as ref


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
    assert top_ngram_counts(symbols, offsets, counts, how_many, max_width) == ref.top_ngram_counts(
        [p for p, _ in pieces], counts, how_many, max_width)
