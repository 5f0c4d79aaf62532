"""sentencepiece's float32 Viterbi cut where every path crosses, with cached segments
(viterbi32_segments.pxd): the core against its twin (tokfx.reference.unigram.viterbi32_segments,
the same cache and threshold) and both against the plain float32 Viterbi over the whole text,
which the cache must never change. Scores are built as near-ties (sums of different tokens a few
2^-19 apart, well under a float32 ulp of the running sums drawn), so that the running sum's
rounding decides between paths and a cache hit taken without its bound would be wrong."""
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ends_of
from tokfx._path_segment import PathSegmenter
from tokfx.alphabet import Alphabet
from tokfx.reference.alphabet import char_symbols
from tokfx.reference.unigram import viterbi, viterbi32_segments

# x: held only first, so every path crosses before it; y: only alone (crossed on both sides).
LEARNED = [b"ab", b"ba", b"aab", b"abb", b"bc", b"cab", b"abc", b"xa", b"xab", b"xba", b"xc", b"aa", b"bb"]
NEAR = 2.0 ** -19
SCORE = st.builds(lambda base, k: base + k * NEAR, st.sampled_from([-1.0, -2.5, -3.5, -6.0, -7.0]),
                  st.integers(-3, 3))
WORD = st.one_of(st.just(b"y"), st.lists(st.sampled_from(b"abc"), max_size=7).map(lambda w: b"x" + bytes(w)))


def _vocabulary(scores: list[float]):
    tokens = [[b] for b in range(256)] + [list(t) for t in LEARNED]
    token_scores = [-12.0] * 256 + scores[:len(LEARNED)]
    for k, symbol in enumerate(b"abcxy"):
        token_scores[symbol] = scores[len(LEARNED) + k]
    return tokens, token_scores


@settings(max_examples=300, deadline=None)
@given(st.lists(SCORE, min_size=len(LEARNED) + 5, max_size=len(LEARNED) + 5),
       st.lists(WORD, min_size=1, max_size=80),
       st.lists(st.sampled_from([0.0, -3.0, -777.25, -4096.5, -70000.0, 1234.5]), min_size=3, max_size=3))
def test_cached_segments_give_the_whole_text_viterbi(scores, words, starts):
    tokens, token_scores = _vocabulary(scores)
    segmenter = PathSegmenter(tokens, "likelihood", scores=token_scores, float_bits=32)
    data = b"".join(words)
    cache = {}
    for start in starts:  # the same text again from other running scores: the cache holds its segments
        expected_score, path = viterbi(list(data), tokens, token_scores, 16, float32=True, start=start)
        expected = [t for _, _, t in path]
        before = segmenter.cached_segments
        assert segmenter.encode_pieces(data, ends_of([data]), False, start) == expected
        assert segmenter.last_score == expected_score
        twin_score, twin_ids, twin_hits = viterbi32_segments(list(data), tokens, token_scores, 16, start, cache)
        assert (twin_ids, twin_score) == (expected, expected_score)
        assert segmenter.cached_segments - before == twin_hits
    # Per piece, the running score carried: the same choices.
    assert segmenter.encode_pieces(data, ends_of(words), False, starts[0]) == viterbi32_segments(
        list(data), tokens, token_scores, 16, starts[0], {})[1]


def test_segments_with_clear_margins_are_served_from_the_cache():
    # Scores far apart: every segment's threshold is far above these running scores.
    tokens, token_scores = _vocabulary([-1.0 - k for k in range(len(LEARNED) + 5)])
    segmenter = PathSegmenter(tokens, "likelihood", scores=token_scores, float_bits=32)
    data = b"xabxbaxabcy" * 50
    first = segmenter.encode_pieces(data, ends_of([data]))
    served = segmenter.cached_segments
    assert served == 3 * 50 - 3  # the first xab, xba, xabc are computed; y is a segment of one
    assert segmenter.encode_pieces(data, ends_of([data])) == first
    assert segmenter.cached_segments == served + 3 * 50
    assert first == [t for _, _, t in viterbi(list(data), tokens, token_scores, 16, float32=True)[1]]


def test_a_tie_is_never_cached():
    # ab + a and a + ba: the same sum exactly, so the running sum's rounding decides every time.
    tokens = [[b] for b in range(256)] + [list(b"ab"), list(b"ba")]
    scores = [-12.0] * 256 + [-0.4, -0.4]
    scores[ord("a")], scores[ord("b")], scores[ord("x")] = -7.1, -3.5, -1.0
    segmenter = PathSegmenter(tokens, "likelihood", scores=scores, float_bits=32)
    data = b"xaba" * 200
    ids = segmenter.encode_pieces(data, ends_of([data]))
    assert segmenter.cached_segments == 0
    assert ids == [t for _, _, t in viterbi(list(data), tokens, scores, 16, float32=True)[1]]
    assert segmenter.segment(array("i", list(b"xaba"))) == ids[:3]


@settings(max_examples=400, deadline=None)
@given(st.sets(st.integers(0, 5)),
       st.lists(st.lists(st.integers(0, 5), min_size=2, max_size=4).map(tuple), max_size=8),
       st.lists(st.floats(-9.0, -0.125, width=32), min_size=16, max_size=16),
       st.lists(st.integers(0, 7), max_size=40))
def test_runs_of_one_symbol_segments_and_symbols_without_a_token(alone, learned, scores, text):
    # Some symbols have no one-symbol token (a segment of one of them has no path), 6 and 7 are
    # in no token at all: the core (its cuts, its one-symbol runs) against the twin and the plain
    # float32 Viterbi, a path or none.
    tokens = [(x,) for x in sorted(alone)] + [t for t in dict.fromkeys(learned) if len(t) > 1]
    if not tokens:
        return
    token_scores = [scores[k % len(scores)] for k in range(len(tokens))]
    segmenter = PathSegmenter(tokens, "likelihood", scores=token_scores, float_bits=32)
    whole = viterbi(text, tokens, token_scores, 16, float32=True)
    twin = viterbi32_segments(text, tokens, token_scores, 16, 0.0, {})
    if whole is None:
        assert twin is None
        with pytest.raises(ValueError, match="no segmentation"):
            segmenter.segment(array("i", text))
        return
    expected = [t for _, _, t in whole[1]]
    assert twin[:2] == (whole[0], expected)
    assert segmenter.segment(array("i", text)) == expected
    assert segmenter.last_score == whole[0]


# A chars alphabet with the unknown symbol (sentencepiece's Unigram without byte fallback) over
# Chinese-like text: runs of 3-byte characters covered and not (map_symbols' run at a fixed
# stride), 2- and 4-byte ones, and bytes that are not UTF-8 there (a surrogate, an overlong
# form, a cut character, stray continuation bytes), each of which is one unknown symbol.
COVERED = "ab众唤é😀"
UNKNOWN_TEXT = st.lists(st.sampled_from([c.encode() for c in COVERED + "中文字ʤ\U0001F601"]
                                        + [b"\xed\xa0\x80", b"\xe0\x80\x80", b"\xe4\xb8", b"\x80", b"\xff"]),
                        max_size=40)


@settings(max_examples=300, deadline=None)
@given(UNKNOWN_TEXT, st.lists(st.integers(0, 40), max_size=3),
       st.lists(st.floats(-9.0, -0.125, width=32), min_size=12, max_size=12), st.sampled_from([0.0, -777.25]))
def test_runs_of_the_unknown_symbol_come_out_joined(parts, cuts, scores, start):
    """encode_pieces after join_runs_of(the unknown token): the one-symbol runs join them
    (no pass over the ids after), against the twins: reference.alphabet's symbols,
    reference.unigram.viterbi32_segments per piece from the running score, runs joined in Python
    (tokfx.segmenters.unknown_runs)."""
    alphabet = Alphabet("chars", characters=COVERED, unknown=" \u2047 ")
    symbol = {c: alphabet.symbols(c.encode())[0] for c in COVERED}
    unknown = alphabet.unknown_symbol
    learned = ["众唤", "ab", "a众", "唤a", "é众", "众众"]
    tokens = [(unknown,)] + [(symbol[c],) for c in COVERED] + [tuple(symbol[c] for c in t) for t in learned]
    token_scores = [scores[k % len(scores)] for k in range(len(tokens))]
    segmenter = PathSegmenter(tokens, "likelihood", scores=token_scores, float_bits=32, **alphabet.symbol_map,
                              num_symbols=alphabet.size)
    segmenter.join_runs_of(0)
    bounds = sorted({0, len(parts), *(min(c, len(parts)) for c in cuts)})
    pieces = [b"".join(parts[a:b]) for a, b in zip(bounds, bounds[1:])]
    running, expected = start, []
    for piece in pieces:
        running, ids, _ = viterbi32_segments(char_symbols(piece, COVERED, (), unknown=True), tokens,
                                             token_scores, 16, running, {})
        expected += ids
    expected = [t for k, t in enumerate(expected) if t != 0 or k == 0 or expected[k - 1] != 0]
    assert segmenter.encode_pieces(b"".join(pieces), ends_of(pieces), False, start) == expected
    assert segmenter.last_score == running
