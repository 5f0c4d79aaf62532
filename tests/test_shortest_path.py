"""Shortest-path (PathPiece) and greedy segmentation, and the MI pass: the Cython core against
its pure-Python twin and against brute-force enumeration of every segmentation."""
import random
from array import array
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ends_of
from tokfx._shortest_path import PathSegmenter, chunk_mi, mi_pass
from tokfx.reference import pathpiece as ref

ALPHABET = 3  # symbols 0, 1, 2: few symbols, so tokens and ties repeat often


def all_segmentations(symbols, vocab, max_width):
    """Every segmentation into tokens of vocab at most max_width wide, as (start, end) lists."""
    n = len(symbols)

    @cache
    def from_(i):
        if i == n:
            return [[]]
        return [[(i, j)] + rest for j in range(i + 1, min(n, i + max_width) + 1)
                if tuple(symbols[i:j]) in vocab for rest in from_(j)]

    return from_(0)


@st.composite
def vocab_and_text(draw, max_text=9):
    """Tokens by id: every single symbol first, then random longer sequences (some repeated)."""
    longer = draw(st.lists(st.lists(st.integers(0, ALPHABET - 1), min_size=2, max_size=5),
                           max_size=12))
    tokens = [[s] for s in range(ALPHABET)] + longer
    text = draw(st.lists(st.integers(0, ALPHABET - 1), max_size=max_text))
    return tokens, text, draw(st.integers(1, 5))


def spans(segmentation):
    return [(s, e) for s, e, *_ in segmentation]


def segment_spans(tokens, text, mode, max_width, seed=0):
    """The Cython segmentation as (start, end) spans, checked to be the tokens' symbols."""
    ids = PathSegmenter(tokens, mode, max_width, seed).segment(array("i", text))
    out, start = [], 0
    for i in ids:
        out.append((start, start + len(tokens[i])))
        assert list(tokens[i]) == text[start:start + len(tokens[i])]
        start += len(tokens[i])
    assert start == len(text)  # the tokens concatenate to the input
    return out


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


def brute_force_mi(text, vocab, max_width, start, end):
    """Fewest tokens of a segmentation that does not use the occurrence (start, end), minus the
    fewest of any segmentation; None when every segmentation uses it."""
    segmentations = all_segmentations(text, vocab, max_width)
    avoiding = [len(s) for s in segmentations if (start, end) not in s]
    return min(avoiding) - min(map(len, segmentations)) if avoiding else None


@settings(max_examples=400, deadline=None)
@given(vocab_and_text(max_text=10))
def test_mi_of_every_occurrence_equals_brute_force(case):
    tokens, text, max_width = case
    vocab = {tuple(t) for t in tokens}
    got = chunk_mi(array("i", text), tokens, max_width)
    assert got == ref.chunk_mi(text, tokens, max_width)
    assert spans(got) == segment_spans(tokens, text, "pathpiece-l", max_width)
    for start, end, _, mi in got:
        assert mi == brute_force_mi(text, vocab, max_width, start, end)


def test_random_cases_include_occurrences_only_a_token_from_the_first_symbol_avoids():
    """The paper's pseudo-code misses covering tokens that start at the chunk's first symbol;
    make sure the brute-force comparison above meets such occurrences, by finding some here."""
    rng = random.Random(6)
    found = 0
    for _ in range(3000):
        tokens = [[s] for s in range(ALPHABET)] + [
            [rng.randrange(ALPHABET) for _ in range(rng.randint(2, 5))] for _ in range(rng.randint(1, 10))]
        text = [rng.randrange(ALPHABET) for _ in range(rng.randint(1, 9))]
        vocab = {tuple(t) for t in tokens}
        segmentations = all_segmentations(text, vocab, 5)
        for start, end, _, mi in chunk_mi(array("i", text), tokens, 5):
            if start == 0 or not mi:
                continue
            best = min(len(s) for s in segmentations if (start, end) not in s)
            # Every best avoiding segmentation begins with one token covering the occurrence.
            if all(s[0][0] == 0 and s[0][1] >= end for s in segmentations
                   if (start, end) not in s and len(s) == best):
                found += 1
                assert mi == brute_force_mi(text, vocab, 5, start, end)
    assert found > 0


def test_chunk_offsets_are_checked():
    tokens = [[0], [1]]
    for offsets in ([0, 3], [1, 2], [0, 2, 1, 2]):
        with pytest.raises(ValueError, match="offsets"):
            counts = array("q", [1] * (len(offsets) - 1))
            mi_pass(array("i", [0, 1]), array("q", offsets), counts, tokens)
    with pytest.raises(ValueError, match="3 offsets for 1 chunks"):
        mi_pass(array("i", [0, 1]), array("q", [0, 1, 2]), array("q", [1]), tokens)


@settings(max_examples=100, deadline=None)
@given(st.lists(vocab_and_text(max_text=8), min_size=1, max_size=4), st.data())
def test_mi_pass_sums_occurrences_times_counts(cases, data):
    """mi_pass over several chunks (one shared vocabulary) = the per-chunk MIs, summed by token."""
    tokens = cases[0][0]
    texts = [text for _, text, _ in cases]
    counts = [data.draw(st.integers(1, 5)) for _ in texts]
    max_width = cases[0][2]
    sums, total = [0] * len(tokens), 0
    for text, count in zip(texts, counts):
        occurrences = ref.chunk_mi(text, tokens, max_width)
        total += count * len(occurrences)
        for _, _, token, mi in occurrences:
            sums[token] += count * (mi or 0)
    offsets = array("q", [0])
    for text in texts:
        offsets.append(offsets[-1] + len(text))
    got = mi_pass(array("i", [s for t in texts for s in t]), offsets, array("q", counts), tokens,
                  max_width)
    assert got == (sums, total)
