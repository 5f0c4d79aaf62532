"""tokfx._count_table.CountTable against its twin, a dict (and the key hash against
tokfx.reference.count_table): every operation on random keys and counts, and counting real text."""
import pickle
import random
from array import array
from collections import Counter
from collections.abc import Mapping
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._count_table import CountTable, count_pieces, join_disjoint, packed_counts
from tokfx.reference.count_table import key_hash

# Few distinct short keys, so that repeats are common; any length, so that the hash's 8-byte
# words and its tail are both exercised.
keys = st.one_of(st.sampled_from([b"", b"a", b"ab", b" the", b"\x00", b"\xff" * 9]),
                 st.binary(max_size=20))
items = st.lists(st.tuples(keys, st.integers(1, 2**40)), max_size=60)


def table_of(pairs) -> CountTable:
    table = CountTable()
    for key, count in pairs:
        table.add(key, count)
    return table


def dict_of(pairs) -> dict:
    counts = {}
    for key, count in pairs:
        counts[key] = counts.get(key, 0) + count
    return counts


@settings(max_examples=300, deadline=None)
@given(items)
def test_adding_equals_a_dict_in_content_and_order(pairs):
    table, expected = table_of(pairs), dict_of(pairs)
    assert table.items() == list(expected.items())  # in order of first insertion
    assert len(table) == len(expected) and table.total() == sum(expected.values())
    assert table == expected and expected == table and table.to_dict() == expected
    for key in expected:
        assert key in table and table[key] == expected[key] and table.get(key) == expected[key]
    assert isinstance(table, Mapping)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80), st.lists(st.integers(0, 80), max_size=30))
def test_add_pieces_counts_every_slice(data, cuts):
    ends = array("q", sorted(min(c, len(data)) for c in cuts))
    table = CountTable()
    table.add_pieces(data, ends)
    starts = [0, *ends[:-1]]
    assert table.items() == list(Counter(data[s:e] for s, e in zip(starts, ends)).items())


@settings(max_examples=200, deadline=None)
@given(items, items)
def test_update_adds_a_table_or_a_mapping(first, second):
    expected = dict_of(first + second)
    from_table = table_of(first)
    from_table.update(table_of(second))
    from_dict = table_of(first)
    from_dict.update(dict_of(second))
    from_packed = table_of(first)
    from_packed.add_packed(*table_of(second).packed())
    assert from_table.items() == from_dict.items() == from_packed.items() == list(expected.items())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=12), st.integers(1, 3)), max_size=80), st.integers(0, 90))
def test_most_frequent_breaks_ties_to_the_smaller_key(pairs, n):
    """Counts of 1 to 3 tie often: the cut then falls among keys of equal count."""
    table, expected = table_of(pairs), dict_of(pairs)
    kept = set(sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
    assert table.most_frequent(n).items() == [item for item in expected.items() if item in kept]


def test_add_packed_while_the_table_grows():
    """Thousands of keys, so that the table grows many times while keys wait to be added."""
    rng = random.Random(7)
    first = [(rng.randbytes(rng.randrange(14)), rng.randrange(1, 9)) for _ in range(3000)]
    second = [(rng.randbytes(rng.randrange(14)), rng.randrange(1, 9)) for _ in range(5000)]
    table = table_of(first)
    table.add_packed(*table_of(second).packed())
    assert table.items() == list(dict_of(first + second).items())


@settings(max_examples=200, deadline=None)
@given(items, st.integers(1, 9))
def test_split_sends_each_key_to_its_hash_part(pairs, parts):
    table = table_of(pairs)
    split = table.split_packed(parts)
    assert len(split) == parts
    for part, packed in enumerate(split):
        assert CountTable.from_packed(*packed).items() == [(k, c) for k, c in table.items()
                                                           if key_hash(k) % parts == part]


@settings(max_examples=200, deadline=None)
@given(items, st.integers(0, 70), st.integers(1, 2**40))
def test_pruning_and_sorting_equal_their_twins(pairs, n, min_count):
    table, expected = table_of(pairs), dict_of(pairs)
    kept = set(sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:n])
    assert table.most_frequent(n).items() == [item for item in expected.items() if item in kept]
    assert table.at_least(min_count).items() == [(k, c) for k, c in expected.items() if c >= min_count]
    table.sort()
    assert table.items() == sorted(expected.items())
    assert table == expected  # still found by key after the reorder


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=12), st.integers(1, 3)), max_size=80), st.integers(1, 5),
       st.one_of(st.none(), st.integers(0, 90)))
def test_join_disjoint_keeps_the_most_frequent_in_key_order(pairs, parts, keep):
    """The counting pass's summed parts (disjoint by hash) joined, in any order of the parts;
    counts of 1 to 3 tie often, so the cut falls among keys of equal count."""
    expected = dict_of(pairs)
    split = table_of(pairs).split_packed(parts)
    kept = sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:keep]
    joined = join_disjoint(iter(split[::-1]), keep)
    assert joined.items() == sorted(kept)
    assert joined == dict(kept)  # found by key: the slots hold every kept key


def test_join_disjoint_refuses_a_key_in_two_parts_and_bad_parts():
    with pytest.raises(ValueError, match=r"key b'bb' is in two of the parts"):
        join_disjoint([CountTable({b"a": 1, b"bb": 2}).packed(), CountTable({b"bb": 3}).packed()])
    # Keys that share their first 8 bytes, the one in two parts last among them.
    long = {b"internat" + tail: 2 for tail in (b"", b"ional", b"ionally", b"\x00", b"ionalz")}
    with pytest.raises(ValueError, match=r"key b'internationalz' is in two of the parts"):
        join_disjoint([CountTable(long).packed(), CountTable({b"internationalz": 1, b"z": 1}).packed()])
    assert join_disjoint([CountTable(long).packed(), CountTable({b"internationaly": 1}).packed()]).items() == \
        sorted([*long.items(), (b"internationaly", 1)])
    with pytest.raises(ValueError, match="count 0"):
        join_disjoint([(b"abc", array("q", [3]), array("q", [0]))])
    with pytest.raises(ValueError, match="keep must be None or >= 0"):
        join_disjoint([], -1)
    assert not join_disjoint([]) and not join_disjoint([CountTable({b"a": 1}).packed()], 0)


@settings(max_examples=100, deadline=None)
@given(items, st.integers(0, 5000))
def test_a_table_with_room_reserved_equals_a_dict(pairs, room):
    table = CountTable()
    table.add(b"before", 2)
    table.reserve(room)
    for key, count in pairs:
        table.add(key, count)
    assert table.items() == list(dict_of([(b"before", 2), *pairs]).items())
    with pytest.raises(OverflowError, match="at most"):
        table.reserve(2**40)


def test_sorting_many_keys_equals_sorted():
    """Enough keys for every byte of the 8-byte prefixes the sort orders by to vary, and many
    that share a prefix (a few letters, zero bytes, keys longer than 8 bytes)."""
    rng = random.Random(11)
    pairs = [(bytes(rng.choice(b"\x00ab\xff") for _ in range(rng.randrange(17))), 1) for _ in range(20000)]
    table = table_of(pairs)
    table.sort()
    assert table.keys() == sorted(dict_of(pairs))


@settings(max_examples=200, deadline=None)
@given(items)
def test_pickle_and_packed_round_trip(pairs):
    table = table_of(pairs)
    assert pickle.loads(pickle.dumps(table)).items() == table.items()
    keys, ends, counts = table.packed()
    assert (keys, list(ends), list(counts)) == (b"".join(table.keys()), list(accumulate(map(len, table.keys()))),
                                                table.values())
    assert CountTable.from_packed(keys, ends, counts).items() == table.items()
    assert packed_counts(dict_of(pairs)) == (keys, ends, counts)


def test_count_pieces_into_a_dict_adds_in_order_of_first_occurrence():
    counts = {b" world": 5, b"unrelated": 1}
    count_pieces(counts, b"hello world world", array("q", [5, 11, 17]))
    assert list(counts.items()) == [(b" world", 7), (b"unrelated", 1), (b"hello", 1)]
    counter = Counter({b" b": 2})
    count_pieces(counter, b"a b b", array("q", [1, 3, 5]))
    assert counter == Counter({b"a": 1, b" b": 4})


def test_bad_arguments_are_refused():
    table = CountTable()
    with pytest.raises(ValueError, match="counts must be >= 1"):
        table.add(b"a", 0)
    with pytest.raises(ValueError, match="outside"):
        table.add_pieces(b"abc", array("q", [2, 1]))
    with pytest.raises(ValueError, match="outside"):
        table.add_pieces(b"abc", array("q", [4]))
    with pytest.raises(ValueError, match="cover"):
        CountTable.from_packed(b"abc", array("q", [2]), array("q", [1]))
    with pytest.raises(ValueError, match="count 0"):
        CountTable.from_packed(b"abc", array("q", [3]), array("q", [0]))
    with pytest.raises(ValueError, match="2 ends but 1 counts"):
        table.add_packed(b"abc", array("q", [1, 3]), array("q", [1]))
    with pytest.raises(ValueError, match="count 0"):
        table.add_packed(b"abc", array("q", [1, 3]), array("q", [1, 0]))
    assert not table  # nothing added from a refused call
    with pytest.raises(TypeError, match="CountTable or a dict"):
        count_pieces([], b"a", array("q", [1]))
    assert table.get("a") is None and "a" not in table and table.get(1, 0) == 0
    with pytest.raises(KeyError):
        table[b"missing"]
