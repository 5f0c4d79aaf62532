"""Shortest-path (PathPiece) and greedy segmentation: the Cython core (tokfx._path_segment)
against its pure-Python twin and against brute-force enumeration of every segmentation."""
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ends_of
from segmentation_cases import all_segmentations, segment_spans, vocab_and_text
from tokfx._path_segment import PathSegmenter
from tokfx.reference import path_segment as ref
from tokfx.reference.unigram import viterbi

@settings(max_examples=400, deadline=None)
@given(vocab_and_text())
def test_pathpiece_token_count_is_the_brute_force_minimum(case):
    tokens, text, max_width = case
    vocab = {tuple(t) for t in tokens}
    fewest = min(map(len, all_segmentations(text, vocab, max_width)))
    for mode, seed in [("pathpiece-l", 0), ("pathpiece-r", 0), ("pathpiece-r", 12345)]:
        assert len(segment_spans(tokens, text, mode, max_width, seed)) == fewest


@settings(max_examples=400, deadline=None)
@given(vocab_and_text())
def test_longest_tie_break_takes_the_longest_last_token_at_each_step(case):
    tokens, text, max_width = case
    vocab = {tuple(t) for t in tokens}
    segmentations = all_segmentations(text, vocab, max_width)
    fewest = min(map(len, segmentations))
    # Backtracking from the end, each step takes the longest token that still ends an optimal
    # path: among optimal segmentations, the greatest widths read from the last token back.
    expected = max((s for s in segmentations if len(s) == fewest),
                   key=lambda s: [e - b for b, e in reversed(s)])
    assert segment_spans(tokens, text, "pathpiece-l", max_width) == expected


@settings(max_examples=300, deadline=None)
@given(vocab_and_text(), st.integers(0, 2**64 - 1))
def test_segmenters_equal_the_reference(case, seed):
    tokens, text, max_width = case
    for mode in ("pathpiece-l", "pathpiece-r", "greedy"):
        ids = PathSegmenter(tokens, mode, max_width, seed).segment(array("i", text))
        assert ids == [t for _, _, t in ref.segment(text, tokens, max_width, mode, seed)]


def test_greedy_takes_the_longest_prefix_and_pathpiece_the_fewest_tokens():
    tokens = [[b] for b in range(256)] + [list(b"ab"), list(b"bcd")]
    data = b"abcd"
    # Greedy: "ab" is the longest prefix, then "c", "d" (no token starts "cd"): 3 tokens.
    assert PathSegmenter(tokens, "greedy").encode_pieces(data, ends_of([data])) == [256, ord("c"), ord("d")]
    # Shortest path: "a" + "bcd", 2 tokens.
    assert PathSegmenter(tokens, "pathpiece-l").encode_pieces(data, ends_of([data])) == [ord("a"), 257]


def test_pieces_are_segmented_apart_and_empty_input_gives_no_tokens():
    tokens = [[b] for b in range(256)] + [list(b"ab")]
    for mode in ("pathpiece-l", "pathpiece-r", "greedy"):
        segmenter = PathSegmenter(tokens, mode)
        assert segmenter.encode_pieces(b"", array("q")) == []
        assert segmenter.segment(array("i")) == []
        # "a" | "b" are two pieces: "ab" never crosses the boundary.
        assert segmenter.encode_pieces(b"aab", ends_of([b"a", b"ab"])) == [ord("a"), 256]
        assert segmenter.encode_pieces(b"ab", ends_of([b"a", b"b"])) == [ord("a"), ord("b")]


def test_tokens_wider_than_max_width_are_not_used():
    tokens = [[b] for b in range(256)] + [list(b"abc")]
    assert PathSegmenter(tokens, "pathpiece-l", max_width=2).encode_pieces(b"abc", ends_of([b"abc"])) \
        == list(b"abc")


def test_pathpiece_r_is_deterministic_per_seed_and_varies_across_seeds():
    # "aaaaaaa" with tokens a, aa: 4 tokens at best, with the single "a" at any of 4 places.
    tokens = [[b] for b in range(256)] + [list(b"aa")]
    data = b"a" * 7
    seen = set()
    for seed in range(40):
        first = PathSegmenter(tokens, "pathpiece-r", seed=seed).encode_pieces(data, ends_of([data]))
        again = PathSegmenter(tokens, "pathpiece-r", seed=seed).encode_pieces(data, ends_of([data]))
        assert first == again and len(first) == 4
        seen.add(tuple(first))
    assert len(seen) == 4  # every optimal segmentation is visited by some seed


def test_a_vocabulary_without_a_needed_base_symbol_is_refused():
    with pytest.raises(ValueError, match="lacks a base symbol"):
        PathSegmenter([[0]], "pathpiece-l").segment(array("i", [0, 1]))
    with pytest.raises(ValueError, match="lacks a base symbol"):
        PathSegmenter([[0]], "greedy").segment(array("i", [-3]))  # no symbol of any token
    with pytest.raises(ValueError, match="unknown segmenter"):
        PathSegmenter([[0]], "shortest")


@settings(max_examples=300, deadline=None)
@given(vocab_and_text(), st.data(), st.sampled_from([64, 32]))
def test_likelihood_segmenter_equals_the_reference(case, data, float_bits):
    tokens, text, max_width = case
    # Integer scores: exact sums, so ties happen and the tie rule is compared too.
    scores = [float(data.draw(st.one_of(st.integers(-6, -1), st.floats(-9.0, -0.1)))) for _ in tokens]
    segmenter = PathSegmenter(tokens, "likelihood", max_width, scores=scores, float_bits=float_bits)
    ids = segmenter.segment(array("i", text))
    assert ids == [t for _, _, t in ref.segment(text, tokens, max_width, "likelihood", scores=scores,
                                                   float_bits=float_bits)]
    data_bytes = bytes(text)
    assert segmenter.encode_pieces(data_bytes, ends_of([data_bytes])) == ids


def test_float32_sums_choose_between_permutations_as_their_rounding_says():
    # ba + a and a + ba score the same in exact arithmetic; float64 sums tie and the tie rule
    # chooses, float32 sums (sentencepiece's arithmetic) round apart. The twin packs floats.
    tokens = [[b] for b in range(256)] + [list(b"ab"), list(b"ba"), list(b"aab")]
    scores = [-100.0] * 256 + [-0.4, -0.4, -8.0]
    scores[ord("a")], scores[ord("b")] = -7.1, -3.5
    text = array("i", list(b"bbaabaababa"))
    a, b, ab, ba = ord("a"), ord("b"), 256, 257
    expected = {32: [b, ba, a, ba, a, ba, ba], 64: [b, ba, ab, a, a, ba, ba]}
    for bits, ids in expected.items():
        assert PathSegmenter(tokens, "likelihood", scores=scores, float_bits=bits).segment(text) == ids
        assert [t for _, _, t in ref.segment(list(text), tokens, 16, "likelihood", scores=scores,
                                             float_bits=bits)] == ids
    with pytest.raises(ValueError, match="float_bits"):
        PathSegmenter(tokens, "likelihood", scores=scores, float_bits=16)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(b"abc"), min_size=1, max_size=4).map(bytes), min_size=1, max_size=12),
       st.lists(st.floats(-9.0, -0.1), min_size=12, max_size=12),
       st.lists(st.sampled_from([b"x", b"xab", b"xa", b"xxb", b"xcc", b"x", b"xb"]), min_size=1, max_size=12))
def test_float32_carries_the_running_sum_across_pieces_as_one_whole_text(learned, scores, pieces):
    # Pieces start at each x, and no token holds an x after another symbol: the pieces' paths
    # with the sum carried over are the whole text's (sentencepiece's Viterbi over a text), and
    # the twin's viterbi chained through `start` agrees.
    tokens = [[b] for b in range(256)] + [list(t) for t in dict.fromkeys(learned)] + [list(b"xa"), list(b"xab")]
    token_scores = [-12.0] * 256 + [scores[k % len(scores)] for k in range(len(tokens) - 256)]
    segmenter = PathSegmenter(tokens, "likelihood", scores=token_scores, float_bits=32)
    data = b"".join(pieces)
    per_piece = segmenter.encode_pieces(data, ends_of(pieces))
    assert per_piece == segmenter.encode_pieces(data, ends_of([data]))
    chained, running = [], 0.0
    for piece in pieces:
        running, found = viterbi(list(piece), tokens, token_scores, 16, float32=True, start=running)
        chained += [t for _, _, t in found]
    assert per_piece == chained


def test_likelihood_takes_the_most_likely_path_not_the_fewest_tokens():
    tokens = [[b] for b in range(256)] + [list(b"abc"), list(b"ab")]
    scores = [-2.0] * 256 + [-10.0, -1.0]
    data = b"abc"
    # "abc" alone: -10; "ab" + "c": -3.
    assert PathSegmenter(tokens, "likelihood", scores=scores).encode_pieces(data, ends_of([data])) == [257, ord("c")]
    with pytest.raises(ValueError, match="scores"):
        PathSegmenter(tokens, "likelihood")
    with pytest.raises(ValueError, match="scores"):
        PathSegmenter(tokens, "greedy", scores=scores)
