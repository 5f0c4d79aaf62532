"""tokfx.eval.metrics on inputs small enough to compute by hand."""
import math
import random
from array import array

import pytest
from hypothesis import given, settings, strategies as st

import tokfx
from tokfx._neighbours import NeighbourPairs
from tokfx.alphabet import Alphabet
from tokfx.eval.metrics import (CorpusStats, base_symbols_per_char, context_diversity, decode_errors, fertility,
                           frequency_rank, jaccard, length_histogram, per_token, renyi_efficiency,
                           scaffold_share, token_counts, tokens_per_char, unused_share,
                           vocabulary_overlap, word_count)
from tokfx.reference.neighbours import distinct_neighbours
from conftest import corpus_text

BYTES, CJK = Alphabet.named("bytes"), Alphabet.named("cjk")


def test_base_symbols_per_char():
    # 众唤众: 9 bytes; cjk: one prefix + 3 x (h2, h3) = 7 symbols.
    assert base_symbols_per_char("众唤众", BYTES) == 3
    assert base_symbols_per_char("众唤众", CJK) == pytest.approx(7 / 3)
    # 众認 straddles groups 0x39 and 0x3A: two prefixes, 6 symbols, no gain over bytes.
    assert base_symbols_per_char("众認", CJK) == 3
    # Two pre-tokens ("众", " 唤"): each starts with no prefix, so two prefixes: 3 + 4 symbols.
    assert base_symbols_per_char("众 唤", CJK) == pytest.approx(7 / 3)
    assert base_symbols_per_char("ab ʤ", CJK) == base_symbols_per_char("ab ʤ", BYTES) == 5 / 4


def test_tokens_per_char():
    tok = tokfx.train(["x"], vocab_size=516, alphabet="cjk")  # no merges: tokens are symbols
    assert tokens_per_char(tok, "众唤众") == pytest.approx(7 / 3)


def test_renyi_efficiency():
    assert renyi_efficiency({1: 5, 2: 5, 3: 5, 4: 5}, 4) == pytest.approx(1.0)
    assert renyi_efficiency({1: 1, 2: 1}, 4) == pytest.approx(0.5)  # log 2 / log 4, any alpha
    expected = math.log(0.75 ** 2.5 + 0.25 ** 2.5) / (1 - 2.5) / math.log(4)
    assert renyi_efficiency({7: 3, 9: 1}, 4) == pytest.approx(expected)
    assert renyi_efficiency({7: 3, 9: 1}, 4) == pytest.approx(0.31596, abs=1e-5)
    shannon = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(4)
    assert renyi_efficiency({7: 3, 9: 1, 8: 0}, 4, alpha=1) == pytest.approx(shannon)


def test_token_counts_and_decode_errors():
    assert token_counts([[1, 2], [2, 2]]) == {1: 1, 2: 3}
    tok = tokfx.train(["x"], vocab_size=516, alphabet="cjk")
    h3_alone, h2_alone = 384, 256
    # Each output is decoded on its own: an h2 at the end of one is not completed by the next.
    assert decode_errors(tok, [[h3_alone], tok.encode("众"), [512, h2_alone], [0xFF, 0x41]]) == 3


def test_undefined_metrics_are_refused():
    with pytest.raises(ValueError, match="empty text"):
        base_symbols_per_char("", CJK)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        renyi_efficiency({1: 3}, 1)
    with pytest.raises(ValueError, match="no tokens"):
        renyi_efficiency({}, 10)


def test_rates_per_token_and_per_word():
    assert per_token(12, 4) == 3  # 12 bytes in 4 tokens
    assert fertility(6, 4) == 1.5  # 6 tokens for 4 words
    assert word_count(" a  b\nc\t ") == 3  # runs of any whitespace separate words
    with pytest.raises(ValueError, match="no tokens"):
        per_token(3, 0)
    with pytest.raises(ValueError, match="no words"):
        fertility(3, 0)


def test_scaffold_share():
    assert scaffold_share(3, 300) == 0.01  # 3 scaffold tokens among 256 bytes + 44 merges
    assert scaffold_share(0, 256) == 0
    with pytest.raises(ValueError):
        scaffold_share(5, 4)


def test_length_histogram():
    lengths = [1, 1, 2, 3]  # ids 0..3
    assert length_histogram(lengths) == {1: 2, 2: 1, 3: 1}
    assert length_histogram(lengths, ids=[0, 2, 3]) == {1: 1, 2: 1, 3: 1}  # id 1 left out
    # Over a corpus: id 0 (length 1) five times, id 3 (length 3) twice.
    assert length_histogram(lengths, {0: 5, 3: 2}) == {1: 5, 3: 2}


def test_frequency_rank_and_unused_share():
    assert frequency_rank({4: 1, 7: 5, 2: 0, 9: 3}) == [5, 3, 1]  # id 2 never used: no rank
    # Of ids 0..3 only id 1 occurs: 3 of 4 unused.
    assert unused_share({1: 2, 3: 0}, [0, 1, 2, 3]) == 0.75
    with pytest.raises(ValueError, match="empty vocabulary"):
        unused_share({}, [])


def test_vocabulary_overlap():
    assert jaccard({"a", "b", "c"}, {"b", "c", "d"}) == 0.5  # {b, c} of {a, b, c, d}
    two = vocabulary_overlap({"x": {"a", "b", "c"}, "y": {"b", "c", "d"}})
    assert two["jaccard"] == {"x": {"x": 1.0, "y": 0.5}, "y": {"x": 0.5, "y": 1.0}}
    assert two["unique"] == {"x": {"a"}, "y": {"d"}}
    assert two["regions"] == {"10": 1, "01": 1, "11": 2}
    # x = {a, b, c}, y = {b, c, d}, z = {c, d, e}: a only x; b in x, y; c in all; d in y, z;
    # e only z.
    three = vocabulary_overlap({"x": {"a", "b", "c"}, "y": {"b", "c", "d"}, "z": {"c", "d", "e"}})
    assert three["regions"] == {"001": 1, "010": 0, "011": 1, "100": 1, "101": 0, "110": 1, "111": 1}
    assert three["unique"] == {"x": {"a"}, "y": set(), "z": {"e"}}
    assert three["jaccard"]["x"]["z"] == 1 / 5  # {c} of {a, b, c, d, e}
    four = vocabulary_overlap({n: {n} for n in "pqrs"})
    assert "regions" not in four and four["jaccard"]["p"]["q"] == 0


def test_context_diversity_by_hand():
    # ids [1, 2, 1, 3], window 2: id 1 at 0 sees 2, 1; at 2 sees 1, 2, 3 -> {1, 2, 3};
    # id 2 at 1 sees 1, 1, 3 -> {1, 3}; id 3 at 3 sees 2, 1 -> {1, 2}.
    pairs = NeighbourPairs(2)
    pairs.add(array("i", [1, 2, 1, 3]))
    assert pairs.distinct_neighbours(4) == [0, 3, 2, 2]
    # Per token distinct / frequency: 3/2, 2/1, 2/1; weighted by frequencies 2, 1, 1 over 4
    # tokens: (2 * 1.5 + 2 + 2) / 4 = 7/4.
    assert context_diversity([0, 3, 2, 2], {1: 2, 2: 1, 3: 1}) == 1.75
    # Window 1: id 1 sees {2} then {2, 3}; id 2 sees {1}; id 3 sees {1}.
    narrow = NeighbourPairs(1)
    narrow.add(array("i", [1, 2, 1, 3]))
    assert narrow.distinct_neighbours(4) == [0, 2, 1, 1]
    # Pairs never span two sequences: [5] then [6] leave both without neighbours.
    apart = NeighbourPairs(3)
    apart.add(array("i", [5]))
    apart.add(array("i", [6]))
    assert apart.distinct_neighbours(7) == [0] * 7
    with pytest.raises(ValueError, match="at least 1"):
        NeighbourPairs(0)
    with pytest.raises(ValueError, match="outside"):
        apart.add(array("i", [5, 9]))
        apart.distinct_neighbours(7)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 11), max_size=30), max_size=5), st.integers(1, 4))
def test_neighbours_match_reference(sequences, window):
    pairs = NeighbourPairs(window)
    for ids in sequences:
        pairs.add(array("i", ids))
    assert pairs.distinct_neighbours(12) == distinct_neighbours(sequences, window, 12)


def test_neighbours_match_reference_on_real_text():
    text = corpus_text("cs336/tinystories_sample.txt")
    tok = tokfx.train(text, vocab_size=400)
    sequences = [tok.encode_ordinary(doc) for doc in text.split("<|endoftext|>")]
    pairs = NeighbourPairs(2)
    for ids in sequences:
        pairs.add(array("i", ids))
    assert pairs.distinct_neighbours(400) == distinct_neighbours(sequences, 2, 400)


def test_neighbours_match_reference_past_compaction():
    # 3 x 60,000 ids with window 4 append 8 pairs per id, 1.44 M in all: past the 2**20 pairs
    # after which the pairs are first sorted and deduplicated, in the middle of a sequence.
    rng = random.Random(7)
    sequences = [[rng.randrange(300) for _ in range(60_000)] for _ in range(3)]
    pairs = NeighbourPairs(4)
    for ids in sequences:
        pairs.add(array("i", ids))
    assert pairs.distinct_neighbours(300) == distinct_neighbours(sequences, 4, 300)
    assert len(pairs) == sum(distinct_neighbours(sequences, 4, 300))


def test_corpus_stats_by_hand():
    tok = tokfx.train(["x"], vocab_size=257)  # no merges: a token per byte, id = byte value
    stats = CorpusStats(tok, window=1)
    stats.add("ab é")  # bytes 97 98 32 195 169: 4 characters, 5 bytes, 2 words
    stats.add("aa")
    assert (stats.documents, stats.characters, stats.bytes, stats.words) == (2, 6, 7, 3)
    assert stats.tokens == 7 and stats.counts == {97: 3, 98: 1, 32: 1, 195: 1, 169: 1}
    assert stats.decode_errors == 0  # each document decodes to itself
    # Window 1: 97 sees 98 (doc 1) and 97 (doc 2); 98 sees 97, 32; 32 sees 98, 195; 195 sees
    # 32, 169; 169 sees 195.
    distinct = stats.neighbours.distinct_neighbours(257)
    assert (distinct[97], distinct[98], distinct[32], distinct[195], distinct[169]) == (2, 2, 2, 2, 1)
    assert sum(distinct) == 9
