"""PathPiece's MI pass: the Cython core (tokfx._pathpiece_mi) against its pure-Python twin and
against brute-force enumeration of every segmentation, with either tie rule (the path of
pathpiece-l, or of pathpiece-r with a seed)."""
import random
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segmentation_cases import ALPHABET, all_segmentations, segment_spans, vocab_and_text
from tokfx._pathpiece_mi import chunk_mi, mi_pass
from tokfx.reference import pathpiece_mi as ref


def spans(segmentation):
    return [(s, e) for s, e, *_ in segmentation]


def brute_force_mi(text, vocab, max_width, start, end):
    """Fewest tokens of a segmentation that does not use the occurrence (start, end), minus the
    fewest of any segmentation; None when every segmentation uses it."""
    segmentations = all_segmentations(text, vocab, max_width)
    avoiding = [len(s) for s in segmentations if (start, end) not in s]
    return min(avoiding) - min(map(len, segmentations)) if avoiding else None


SEEDS = st.integers(0, 2**64 - 1)
SEGMENTER = {"longest": "pathpiece-l", "random": "pathpiece-r"}


@pytest.mark.parametrize("tie_break", ["longest", "random"])
@settings(max_examples=400, deadline=None)
@given(vocab_and_text(max_text=10), SEEDS)
def test_mi_of_every_occurrence_equals_brute_force(tie_break, case, seed):
    """The occurrences are those of the segmenter's path (pathpiece-r's with the same seed for
    random ties); the MI of each is its brute-force MI whichever shortest path holds it."""
    tokens, text, max_width = case
    vocab = {tuple(t) for t in tokens}
    got = chunk_mi(array("i", text), tokens, max_width, tie_break, seed)
    assert got == ref.chunk_mi(text, tokens, max_width, tie_break, seed)
    assert spans(got) == segment_spans(tokens, text, SEGMENTER[tie_break], max_width, seed)
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


@pytest.mark.parametrize("tie_break", ["longest", "random"])
@settings(max_examples=100, deadline=None)
@given(st.lists(vocab_and_text(max_text=8), min_size=1, max_size=4), st.data(), SEEDS)
def test_mi_pass_sums_occurrences_times_counts(tie_break, cases, data, seed):
    """mi_pass over several chunks (one shared vocabulary) = the per-chunk MIs, summed by token;
    and = the twin's mi_pass."""
    tokens = cases[0][0]
    texts = [text for _, text, _ in cases]
    counts = [data.draw(st.integers(1, 5)) for _ in texts]
    max_width = cases[0][2]
    sums, total = [0] * len(tokens), 0
    for text, count in zip(texts, counts):
        occurrences = ref.chunk_mi(text, tokens, max_width, tie_break, seed)
        total += count * len(occurrences)
        for _, _, token, mi in occurrences:
            sums[token] += count * (mi or 0)
    offsets = array("q", [0])
    for text in texts:
        offsets.append(offsets[-1] + len(text))
    symbols = array("i", [s for t in texts for s in t])
    got = mi_pass(symbols, offsets, array("q", counts), tokens, max_width, tie_break, seed)
    assert got == (sums, total)
    assert got == ref.mi_pass(list(symbols), list(offsets), counts, tokens, max_width, tie_break, seed)


def test_random_ties_are_deterministic_per_seed_and_differ_from_longest():
    """A text whose shortest segmentations tie: 'ab' + 'a' or 'a' + 'ba'. Longest takes the
    longer last token every time; random takes each path for some seeds, the same one for a
    seed every time."""
    tokens = [[0], [1], [0, 1], [1, 0]]
    text = [0, 1, 0]
    longest = chunk_mi(array("i", text), tokens)
    assert spans(longest) == [(0, 1), (1, 3)]
    paths = set()
    for seed in range(32):
        got = chunk_mi(array("i", text), tokens, 16, "random", seed)
        assert got == chunk_mi(array("i", text), tokens, 16, "random", seed)
        paths.add(tuple(spans(got)))
    assert paths == {((0, 1), (1, 3)), ((0, 2), (2, 3))}


@settings(max_examples=300, deadline=None)
@given(st.lists(vocab_and_text(max_text=10), min_size=1, max_size=4), st.data(), SEEDS)
def test_mi_sums_do_not_depend_on_the_tie_rule(cases, data, seed):
    """docs/algorithms.md: an occurrence with MI > 0 (or none) is on every shortest path, and
    one that some other shortest path avoids has MI 0; so the random path counts different
    occurrences than the longest one, but only ones of MI 0, and the sums are the same."""
    tokens, max_width = cases[0][0], cases[0][2]
    texts = [text for _, text, _ in cases]
    counts = array("q", [data.draw(st.integers(1, 5)) for _ in texts])
    offsets = array("q", [0])
    for text in texts:
        offsets.append(offsets[-1] + len(text))
    symbols = array("i", [s for t in texts for s in t])
    longest = mi_pass(symbols, offsets, counts, tokens, max_width)
    assert mi_pass(symbols, offsets, counts, tokens, max_width, "random", seed) == longest
    for text in texts:
        by_span = {(s, e): mi for s, e, _, mi in chunk_mi(array("i", text), tokens, max_width)}
        for s, e, _, mi in chunk_mi(array("i", text), tokens, max_width, "random", seed):
            if (s, e) not in by_span:
                assert mi == 0


def test_bad_tie_break_and_seed_are_refused():
    tokens, text = [[0], [1]], array("i", [0, 1])
    with pytest.raises(ValueError, match="unknown tie_break 'shortest'"):
        chunk_mi(text, tokens, 16, "shortest")
    with pytest.raises(ValueError, match="unknown tie_break 'shortest'"):
        mi_pass(text, array("q", [0, 2]), array("q", [1]), tokens, 16, "shortest")
    for seed in (-1, 2**64):
        with pytest.raises(ValueError, match="seed must be in"):
            mi_pass(text, array("q", [0, 2]), array("q", [1]), tokens, 16, "random", seed)
    with pytest.raises(ValueError, match="unknown tie_break"):
        ref.chunk_mi([0, 1], tokens, 16, "shortest")
