"""The trainers' steps around their cores (tokfx._training_steps) against their pure-Python twin
(tokfx.reference.training_steps: the numpy code they replace, or the plain loop), on drawn
cases and on real text."""
import math
from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from conftest import corpus_text
from tokfx._count_table import packed_counts
from tokfx._training_steps import (below_threshold, fallback_apart, floored, key_order, kept_expected,
                                   piece_ends_counts, symbol_counts)
from tokfx.alphabet import Alphabet
from tokfx.reference import training_steps as ref

# Pieces of symbols 0..9, each with a count; with char_base 3, symbols 0-2 are fallback ones.
pieces_with_counts = st.lists(st.tuples(st.lists(st.integers(0, 9), max_size=9), st.integers(1, 10**6)),
                              max_size=12)


def packed(pieces_counts):
    offsets = array("q", [0, *accumulate(len(p) for p, _ in pieces_counts)])
    return (array("i", [s for p, _ in pieces_counts for s in p]), offsets,
            array("q", [c for _, c in pieces_counts]))


@settings(max_examples=300, deadline=None)
@given(pieces_with_counts, st.integers(0, 12))
def test_symbol_counts_equal_the_twin(pieces, alphabet_size):
    corpus = packed(pieces)
    assert symbol_counts(*corpus, alphabet_size).tolist() == ref.symbol_counts(*corpus, alphabet_size)


@settings(max_examples=300, deadline=None)
@given(pieces_with_counts, st.integers(0, 10))
def test_fallback_apart_equals_the_twin(pieces, char_base):
    corpus = packed(pieces)
    offsets, counts = fallback_apart(*corpus, char_base)
    assert (offsets.tolist(), counts.tolist()) == ref.fallback_apart(*corpus, char_base)


def test_the_steps_refuse_offsets_and_ids_out_of_range():
    # Their loops index without bounds checks: what would read or write outside is refused.
    symbols, counts = array("i", [4, 5]), array("q", [1])
    for offsets, message in (([0, 1], "must run from 0 to 2"), ([0, 3], "must run from 0 to 2"),
                             ([0, 2, 2], "must run from 0 to 2, 2 of them")):
        for step in (symbol_counts, fallback_apart):
            with pytest.raises(ValueError, match=message):
                step(symbols, array("q", offsets), counts, 3)
    with pytest.raises(ValueError, match=r"offsets must not decrease \(at 2\)"):
        symbol_counts(symbols, array("q", [0, 3, 2]), array("q", [1, 1]), 3)
    with pytest.raises(ValueError, match="piece_offsets must run from 0 to 2"):
        piece_ends_counts(array("q", [0, 2]), array("q", [0, 1, 3]), array("q", [1]))
    with pytest.raises(ValueError, match="one count per pre-token"):
        piece_ends_counts(array("q", [0, 2]), array("q", [0, 2]), array("q", [1, 1]))
    with pytest.raises(ValueError, match=r"dropped id 3 is not in \[0, 3\)"):
        kept_expected(array("d", [1.0, 2.0, 3.0]), 3, [3], 0.5)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(1, 4), max_size=4), st.integers(0, 9)), max_size=10))
def test_piece_ends_counts_equal_the_twin(pretokens):
    # Each pre-token (its length) cut into pieces (their lengths), as packed_words cuts around
    # the fallback symbols; every pre-token has at least one symbol, as map_pieces gives them.
    pretokens = [(parts or [1], count) for parts, count in pretokens]
    pretoken_offsets = array("q", [0, *accumulate(sum(parts) for parts, _ in pretokens)])
    piece_offsets = array("q", [0, *accumulate(n for parts, _ in pretokens for n in parts)])
    per_pretoken = array("q", [count for _, count in pretokens])
    assert piece_ends_counts(pretoken_offsets, piece_offsets, per_pretoken).tolist() == \
        ref.piece_ends_counts(pretoken_offsets, piece_offsets, per_pretoken)


expected_counts = st.lists(st.sampled_from([0.0, 0.1, 0.5, 0.75, 3.0, 1e-9]) | st.floats(0.0, 1e6), max_size=30)


@settings(max_examples=300, deadline=None)
@given(expected_counts, st.data())
def test_below_threshold_and_kept_expected_equal_the_twin(expected, data):
    values = array("d", expected)
    n = data.draw(st.integers(0, len(expected)))
    first = data.draw(st.integers(0, n))
    assert below_threshold(values, first, n, 0.5).tolist() == ref.below_threshold(expected, first, n, 0.5)
    dropped = data.draw(st.lists(st.integers(0, n - 1), max_size=n)) if n else []
    ids, kept, counted, total = kept_expected(values, n, dropped, 0.5)
    twin = ref.kept_expected(expected, n, dropped, 0.5)
    assert (ids.tolist(), kept.tolist(), [bool(c) for c in counted]) == twin[:3]
    assert total == twin[3]  # the same floats added in the same order


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.booleans()), max_size=20), st.floats(-50.0, 50.0))
def test_floored_equals_the_twin(scores_flags, minus):
    scores = array("d", [s for s, _ in scores_flags])
    flags = [e for _, e in scores_flags]
    assert floored(scores, minus, bytes(flags), 10.0).tolist() == ref.floored(scores, minus, flags, 10.0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([-1.5, 0.0, -0.0, 2.0, 1e-300, math.inf, -math.inf,
                                                                math.nan])), max_size=30), st.data())
def test_key_order_equals_the_twin(keys, data):
    kinds = array("b", [k for k, _ in keys])
    values = array("d", [v for _, v in keys])
    first = data.draw(st.integers(0, len(keys)))
    assert key_order(kinds, values, first) == ref.key_order(kinds, values, first)


@pytest.mark.parametrize("path, vocab_size, coverage", [("chinese/hongloumeng.txt", 3000, 0.999),
                                                        ("english/pg2600_war_and_peace.txt", 200, 0.9995)])
def test_the_steps_equal_the_twin_on_real_text(path, vocab_size, coverage):
    # A chars alphabet that leaves characters out, so that pieces are cut around fallback bytes.
    lines = corpus_text(path).splitlines()[:3000]
    counts = dict(sorted(tokfx.count_pretokens(lines, "sentencepiece", []).items()))
    alphabet = Alphabet.named("chars", characters="".join(sorted({c for line in lines for c in line}))[:vocab_size])
    keys, ends, key_counts = packed_counts(counts)
    symbols, key_offsets = alphabet.map_pieces(keys, ends)
    offsets, piece_counts = fallback_apart(symbols, key_offsets, key_counts, alphabet.char_base)
    assert (offsets.tolist(), piece_counts.tolist()) == ref.fallback_apart(symbols, key_offsets, key_counts,
                                                                           alphabet.char_base)
    assert len(offsets) > len(key_offsets)  # some pieces were cut
    assert symbol_counts(symbols, offsets, piece_counts, alphabet.size).tolist() == \
        ref.symbol_counts(symbols, offsets, piece_counts, alphabet.size)
    per_key = array("q", [c % 7 for c in key_counts])
    assert piece_ends_counts(key_offsets, offsets, per_key).tolist() == \
        ref.piece_ends_counts(key_offsets, offsets, per_key)
