"""PackedTokens (tokfx._packed_tokens) against its twin, a list of tuples: the same tokens, the
same selections, the same orders."""
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._packed_tokens import PackedTokens

# Few symbols and short tokens, so that equal tokens, prefixes and equal keys are common; the
# int32 ends and ints that are no small ints (CJK symbols are not) among them.
SYMBOLS = st.sampled_from([-2**31, -1, 0, 1, 2, 300, 40_000, 2**31 - 1])
TOKENS = st.lists(st.lists(SYMBOLS, max_size=4).map(tuple), max_size=25)


@settings(max_examples=300, deadline=None)
@given(TOKENS, st.data())
def test_packed_tokens_round_trip_select_and_order_as_a_list_of_tuples(tokens, data):
    packed = PackedTokens.of(tokens)
    assert len(packed) == len(tokens) and list(packed) == tokens
    assert [packed[k] for k in range(-len(tokens), 0)] == tokens
    assert [packed.width(k) for k in range(len(tokens))] == [len(t) for t in tokens]
    ids = data.draw(st.lists(st.integers(0, len(tokens) - 1), max_size=30) if tokens else st.just([]))
    assert list(packed.select(ids)) == [tokens[i] for i in ids]
    assert list(packed.select(array("q", ids))) == [tokens[i] for i in ids]
    # Stable, as sorted(): equal tokens (and keys) keep the ids' order.
    assert packed.order(ids) == sorted(ids, key=tokens.__getitem__)
    keys = data.draw(st.lists(st.sampled_from([-1.5, -0.0, 0.0, 2.0, 1e-300, float("inf")]),
                              min_size=len(tokens), max_size=len(tokens)))
    assert packed.order(ids, keys) == sorted(ids, key=lambda i: (keys[i], tokens[i]))
    assert packed.order(ids, array("d", keys)) == sorted(ids, key=lambda i: (keys[i], tokens[i]))
    more = data.draw(TOKENS)
    assert list(packed + PackedTokens.of(more)) == tokens + more
    again = PackedTokens(packed.symbols, packed.offsets)
    assert list(again) == tokens and again.symbols is packed.symbols


def test_packed_tokens_refuse_what_they_cannot_hold():
    with pytest.raises(ValueError, match=r"token 1: symbol 2147483648 is not in \[-2\*\*31, 2\*\*31\)"):
        PackedTokens.of([(0,), (1, 2**31)])
    with pytest.raises(TypeError, match="array\\('i'\\) symbols and array\\('q'\\) offsets"):
        PackedTokens(array("q", [1]), array("q", [0, 1]))
    with pytest.raises(ValueError, match="offsets must run from 0 to 2"):
        PackedTokens(array("i", [1, 2]), array("q", [0, 1]))
    with pytest.raises(ValueError, match=r"offsets must not decrease \(at 2\)"):
        PackedTokens(array("i", [1, 2]), array("q", [0, 2, 1, 2]))
    packed = PackedTokens.of([(1,), (2, 3)])
    for bad in (2, -3):
        with pytest.raises(IndexError, match="of 2"):
            packed[bad]
    with pytest.raises(IndexError, match="token 2 of 2"):
        packed.select([0, 2])
    with pytest.raises(IndexError, match="token -1 of 2"):
        packed.order([-1])
    with pytest.raises(ValueError, match="1 keys for 2 tokens"):
        packed.order([0, 1], [0.0])


def test_tuples_share_one_int_object_per_symbol_below_65536():
    packed = PackedTokens.of([(300, 40_000), (40_000, 300, 70_000), (70_000,)])
    first, second, third = packed[0], packed[1], packed[2]
    assert first[0] is second[1] and first[1] is second[0]  # shared: no new int per symbol
    assert (first, second, third) == ((300, 40_000), (40_000, 300, 70_000), (70_000,))
    assert second[2] == third[0] == 70_000  # above the shared ints: made as read
