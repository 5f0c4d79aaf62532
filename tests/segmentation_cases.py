"""Small segmentation cases shared by the tests of the shortest-path cores
(tests/segmenters/test_path_segment.py, tests/models/test_pathpiece_mi.py): random vocabularies
over a tiny alphabet, every segmentation by brute force, and the core's spans."""
from array import array
from functools import cache

from hypothesis import strategies as st

from tokfx._path_segment import PathSegmenter

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
