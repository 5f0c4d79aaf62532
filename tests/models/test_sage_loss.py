"""SaGe ablation loss: the Cython core (tokfx._sage_loss) against its pure-Python twin on random
cases, and hand-worked ablations."""
import math
from array import array
from itertools import accumulate

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._sage_loss import sage_losses
from tokfx.reference import sage_loss as ref

ALPHABET = 3


@st.composite
def sage_case(draw):
    longer = draw(st.lists(st.lists(st.integers(0, ALPHABET - 1), min_size=2, max_size=5), max_size=12))
    tokens = [[s] for s in range(ALPHABET)] + longer
    pieces = draw(st.lists(st.lists(st.integers(0, ALPHABET - 1), max_size=12), min_size=1, max_size=5))
    counts = draw(st.lists(st.integers(1, 1000), min_size=len(pieces), max_size=len(pieces)))
    dim = draw(st.integers(1, 4))
    values = draw(st.lists(st.floats(-3, 3), min_size=len(tokens) * dim, max_size=len(tokens) * dim))
    return tokens, pieces, counts, np.array(values, dtype=np.float64).reshape(len(tokens), dim), \
        draw(st.integers(1, 6))


def run_core(tokens, pieces, counts, embeddings, max_width=16, cuts=None):
    symbols = array("i", [s for p in pieces for s in p])
    offsets = array("q", [0, *accumulate(map(len, pieces))])
    flags = None if cuts is None else np.array([f for cut in cuts for f in cut], dtype=np.uint8)
    return sage_losses(symbols, offsets, array("q", counts), tokens, embeddings, max_width, cuts=flags)


@settings(max_examples=300, deadline=None)
@given(sage_case())
def test_losses_equal_the_reference_exactly(case):
    tokens, pieces, counts, embeddings, max_width = case
    # Same pairs summed in the same order with the same libm functions: equal to the last bit.
    assert run_core(tokens, pieces, counts, embeddings, max_width) == \
        ref.sage_losses(pieces, counts, tokens, embeddings.tolist(), max_width)


@settings(max_examples=300, deadline=None)
@given(sage_case(), st.data())
def test_losses_with_pretoken_cuts_equal_the_reference_exactly(case, data):
    tokens, pieces, counts, embeddings, max_width = case
    cuts = [data.draw(st.lists(st.booleans(), min_size=len(p), max_size=len(p))) for p in pieces]
    assert run_core(tokens, pieces, counts, embeddings, max_width, cuts) == \
        ref.sage_losses(pieces, counts, tokens, embeddings.tolist(), max_width, cuts=cuts)


# Hand-worked vocabulary over bytes: every single byte, then these.
WORDS = [b"abcd", b"abc", b"cde", b"ef", b"de", b"gh"]
TOKENS = [[b] for b in range(256)] + [list(w) for w in WORDS]
ID = {w: 256 + i for i, w in enumerate(WORDS)} | {bytes([b]): b for b in range(256)}


def test_ablated_retokenization_of_a_hand_worked_piece():
    piece = list(b"ghabcdefgh")
    # Greedy: gh | abcd | ef | gh (at 2 "abcd" beats "abc"; at 6 "ef"), starts 0 2 6 8 (+ 10).
    starts = [0, 2, 6, 8, 10]
    # Ablating "abcd" at 2: the longest strictly shorter token there is "abc" (cursor 5, inside
    # "abcd", not a base start); greedy at 5
    # takes "de" (5..6; "def" is no token), cursor 7 is inside "ef", not a start; greedy at 7
    # takes "f", cursor 8 is the start of base token 3 ("gh"): rejoined.
    assert ref.ablate(piece, TOKENS, 16, 2, 4, starts) == ([ID[b"abc"], ID[b"de"], ID[b"f"]], 3)
    # Ablating "ef" at 6: "e", then greedy "f" at 7 lands on 8: rejoined at base token 3.
    assert ref.ablate(piece, TOKENS, 16, 6, 2, starts) == ([ID[b"e"], ID[b"f"]], 3)
    # Ablating "gh" at 8: "g", then "h" reaches the end (10, base token 4 = the token count).
    assert ref.ablate(piece, TOKENS, 16, 8, 2, starts) == ([ID[b"g"], ID[b"h"]], 4)


def test_losses_of_a_hand_worked_piece_count_context_pairs():
    # With all embeddings zero every pair adds log sigmoid(0) = -log 2, so a loss is
    # (ablated pairs - base pairs) * log 2, ordered pairs at distance 1..2 with one side in the span.
    # "abcd" at token 1: base gh [abcd ef] gh (span = "abcd" and "ef", which the ablation
    # rewrites): unordered pairs at distance <= 2 among 4 positions: 01 02 12 13 23 = 5 -> 10.
    # Ablated gh [abc de f] gh: 01 02 12 13 23 24 34 = 7 -> 14. Loss 4 log 2.
    # "ef" at token 2: left context gh abcd, right gh: base gh abcd [ef] gh: pairs touching 2
    # at distance <= 2: 02 12 23 -> 6 ordered; ablated gh abcd [e f] gh: 02 12 13 23 24 34 -> 12.
    # Loss 6 log 2. First "gh" at token 0: base [gh] abcd ef: 01 02 -> 4; ablated [g h] abcd ef:
    # 01 02 12 13 -> 8 (03: distance 3). Loss 4 log 2. Last "gh" at token 3: base abcd ef [gh]:
    # 02 12 -> 4; ablated abcd ef [g h]: 02 12 13 23 -> 8 (03: distance 3). Loss 4 log 2.
    # Both "gh" occurrences add to one token; counts 3.
    embeddings = np.zeros((len(TOKENS), 2))
    losses, occurrences, total = run_core(TOKENS, [list(b"ghabcdefgh")], [3], embeddings)
    log2 = math.log(2)
    assert math.isclose(losses[ID[b"abcd"]], 3 * 4 * log2)
    assert math.isclose(losses[ID[b"ef"]], 3 * 6 * log2)
    assert math.isclose(losses[ID[b"gh"]], 2 * 3 * 4 * log2)
    assert occurrences[ID[b"gh"]] == 6 and occurrences[ID[b"abcd"]] == 3 and occurrences[ID[b"abc"]] == 0
    assert total == 3 * 4
    assert [x for i, x in enumerate(losses) if i not in (ID[b"abcd"], ID[b"ef"], ID[b"gh"])] == \
        [0.0] * (len(TOKENS) - 3)


def test_context_stops_at_the_piece_edges():
    # "gh" alone in a piece: base [gh] has no pair; ablated [g h] has 1 unordered pair -> 2.
    # Loss = 0 - 2 * log sigmoid(e_g . e_h) with e_g . e_h = 1 * 2 = 2 (dimension 1).
    embeddings = np.zeros((len(TOKENS), 1))
    embeddings[ID[b"g"], 0], embeddings[ID[b"h"], 0] = 1.0, 2.0
    losses, _, _ = run_core(TOKENS, [list(b"gh"), list(b"xy")], [1, 5], embeddings)
    assert math.isclose(losses[ID[b"gh"]], -2 * math.log(1 / (1 + math.exp(-2))))


def test_ablation_stays_in_its_pretoken_and_context_crosses_it():
    # One line "ghabcdefgh" cut into the pre-tokens "ghabc" | "defgh" (a cut flag at 5).
    piece, cut = list(b"ghabcdefgh"), [0] * 5 + [1] + [0] * 4
    # Greedy per pre-token: "ghabc" -> gh | abc ("abcd" would cross the cut);
    # "defgh" -> de | f | gh ("def" is no token). Starts 0 2 5 7 8 (+ 10).
    starts = [0, 2, 5, 7, 8, 10]
    # Ablating "abc" at 2 inside "ghabc" (symbols up to 5): "a" ("ab" is no token), then
    # greedy at 3 within 2 symbols: "b" ("bc" no token), at 4 within 1: "c", cursor 5: rejoined
    # at base token 2. Over the whole line the greedy step at 4 would take "cde" instead.
    assert ref.ablate(piece[:5], TOKENS, 16, 2, 3, starts) == ([ID[b"a"], ID[b"b"], ID[b"c"]], 2)
    assert ref.ablate(piece, TOKENS, 16, 2, 3, starts) == ([ID[b"a"], ID[b"b"], ID[b"cde"]], 3)
    # Ablating "de" at 5: "d", then greedy at 6: "ef" (6..8), cursor 8 starts base token 4.
    assert ref.ablate(piece, TOKENS, 16, 5, 2, starts) == ([ID[b"d"], ID[b"ef"]], 4)
    # Zero embeddings: every ordered pair at distance 1..2 with one side in the span adds
    # -log 2, so a loss is (ablated pairs - base pairs) * log 2.
    # "abc" (token 1): context gh | de f, the right side in the next pre-token.
    #   base gh [abc] de f: 01 12 13 -> 6 ordered; ablated gh [a b c] de f: 01 02 12 13 23 24
    #   34 35 -> 16. Loss 10 log 2 (8 log 2 if the context stopped at the pre-token's end).
    # "de" (token 2), span de f -> d ef: base gh abc [de f] gh: 02 12 13 23 24 34 -> 12;
    #   ablated gh abc [d ef] gh: the same shape -> 12. Loss 0, one occurrence.
    # "gh" (token 0): [gh] abc de: 01 02 -> 4; [g h] abc de: 01 02 12 13 -> 8: 4 log 2.
    # "gh" (token 4): de f [gh]: 02 12 -> 4; de f [g h]: 02 12 13 23 -> 8: 4 log 2.
    embeddings = np.zeros((len(TOKENS), 2))
    losses, occurrences, total = run_core(TOKENS, [piece], [3], embeddings, cuts=[cut])
    log2 = math.log(2)
    assert math.isclose(losses[ID[b"abc"]], 3 * 10 * log2)
    assert losses[ID[b"de"]] == 0.0 and occurrences[ID[b"de"]] == 3
    assert math.isclose(losses[ID[b"gh"]], 2 * 3 * 4 * log2)
    assert occurrences[ID[b"abcd"]] == 0 and occurrences[ID[b"gh"]] == 6
    assert total == 3 * 5
    assert ref.sage_losses([piece], [3], TOKENS, embeddings.tolist(), cuts=[cut]) == \
        (losses, occurrences, total)


def test_malformed_pieces_are_refused():
    tokens = [[s] for s in range(256)]
    embeddings = np.zeros((256, 4))
    with pytest.raises(ValueError, match="is below"):  # a piece ending before it starts
        sage_losses(array("i", [1, 2, 3]), array("q", [0, 2, 1, 3]), array("q", [1, 1, 1]),
                    tokens, embeddings)
    with pytest.raises(ValueError, match="offsets for"):
        sage_losses(array("i", [1, 2, 3]), array("q", [0, 3]), array("q", [1, 1]), tokens, embeddings)
    with pytest.raises(ValueError, match="cut flags"):
        sage_losses(array("i", [1, 2, 3]), array("q", [0, 3]), array("q", [1]), tokens, embeddings,
                    cuts=np.zeros(2, dtype=np.uint8))
