"""The Cython BPE encoder against its pure-Python twin, on random merge tables and on GPT-2."""
from array import array

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPUS_FILES, corpus_text, ends_of, fixture_path
from tokfx._bpe_encode import BPEEncoder
from tokfx.segmenters.bpe import byte_ids, merges_as_ids
from tokfx.pre_tokenizers.patterns import GPT2
from tokfx.reference.bpe_encode import apply_merges, encode_piece, merge_ranks

# Few distinct bytes, so that runs (`aaaa`) and chains of merges are common; byte 0x00 never
# appears in a merge.
ALPHABET = b"abc\x00"
FIRST_MERGED_ID = 5000


@st.composite
def merge_tables(draw):
    """(merges, byte_ids): byte ids are a random permutation of 1000..1255; merged ids are fresh.

    In half the tables a merge's parts are tokens that exist by then (as in a trained vocabulary);
    in the other half any token but the merge's own result, later merges' included, to check that
    the two implementations agree on the rule itself and not only on well-formed tables.
    Pairs may repeat.
    """
    ids = [1000 + i for i in draw(st.permutations(range(256)))]
    count = draw(st.integers(0, 40))
    merged_ids = list(range(FIRST_MERGED_ID, FIRST_MERGED_ID + count))
    forward = draw(st.booleans())
    merges = []
    for rank, merged in enumerate(merged_ids):
        parts = [ids[b] for b in ALPHABET[:3]] + (merged_ids[:rank] + merged_ids[rank + 1:] if forward
                                                  else merged_ids[:rank])
        merges.append((draw(st.sampled_from(parts)), draw(st.sampled_from(parts)), merged))
    return merges, ids


pieces = st.lists(st.sampled_from(ALPHABET), max_size=60).map(bytes)


@settings(max_examples=300, deadline=None)
@given(merge_tables(), pieces)
def test_encode_piece_matches_reference(table, piece):
    merges, ids = table
    assert BPEEncoder(merges, ids).encode_piece(piece) == encode_piece(piece, merges, ids)


@settings(max_examples=150, deadline=None)
@given(merge_tables(), st.lists(pieces, max_size=30), st.sampled_from([0, 1, 3, 1 << 18]))
def test_encode_pieces_is_the_concatenation(table, piece_list, cache_size):
    merges, ids = table
    encoder = BPEEncoder(merges, ids, cache_size=cache_size)
    expected = [i for piece in piece_list for i in encode_piece(piece, merges, ids)]
    data, ends = b"".join(piece_list), ends_of(piece_list)
    # Twice: the second pass reads whatever the first left in the cache.
    assert encoder.encode_pieces(data, ends) == expected
    assert encoder.encode_pieces(data, ends) == expected


@settings(max_examples=60, deadline=None)
@given(merge_tables(), st.lists(st.sampled_from(ALPHABET), min_size=61, max_size=400).map(bytes))
def test_long_pieces_match_reference(table, piece):
    """Past the short-piece limit (64 bytes) the encoder merges run by run between the bytes no
    merge takes (0x00, and a, b or c where no merge has them), each run in rounds or with a heap."""
    merges, ids = table
    assert BPEEncoder(merges, ids).encode_piece(piece) == encode_piece(piece, merges, ids)


def test_long_runs_match_reference():
    """Runs around and far past the short-piece limit (64 bytes), where the heap takes over."""
    ids = list(range(256))
    a, b = ord("a"), ord("b")
    merges = [(a, a, 300), (300, 300, 301), (301, a, 302), (b, a, 303), (303, 300, 304), (301, 301, 305)]
    encoder = BPEEncoder(merges, ids)
    for piece in [b"a" * n for n in (25, 63, 64, 65, 1000, 4097)] + [b"ba" * 700, b"baa" * 333 + b"a"]:
        assert encoder.encode_piece(piece) == encode_piece(piece, merges, ids)


@pytest.fixture(scope="module")
def gpt2_encoders(gpt2_vocab_merges):
    """(Cython encoder with a small cache, reference ranks, byte ids) for GPT-2's vocabulary."""
    vocab, merges = gpt2_vocab_merges
    triples, ids = merges_as_ids(vocab, merges), byte_ids(vocab)
    return BPEEncoder(triples, ids, cache_size=4096), merge_ranks(triples), ids


def check_gpt2_text(text, gpt2_encoders):
    encoder, ranks, ids = gpt2_encoders
    piece_list = [piece.encode("utf-8") for piece in regex.findall(GPT2, text)]
    expected = {piece: apply_merges([ids[b] for b in piece], ranks) for piece in set(piece_list)}
    for piece, piece_ids in expected.items():
        assert encoder.encode_piece(piece) == piece_ids, piece
    assert encoder.encode_pieces(b"".join(piece_list), ends_of(piece_list)) == [
        i for piece in piece_list for i in expected[piece]]


@pytest.mark.parametrize("name", ["address.txt", "corpus.en", "german.txt", "tinystories_sample.txt",
                                  "special_token_double_newlines_non_whitespace.txt"])
def test_gpt2_fixture_texts(name, gpt2_encoders):
    check_gpt2_text(fixture_path(name).read_text(encoding="utf-8"), gpt2_encoders)


@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_gpt2_corpus_files(relative, gpt2_encoders):
    # The first 150,000 characters hold enough distinct pieces to overflow the 4096-entry cache.
    check_gpt2_text(corpus_text(relative)[:150_000], gpt2_encoders)


def test_ids_up_to_the_int32_limit():
    largest = 2**31 - 1
    ids = [largest - b for b in range(256)]
    merges = [(ids[ord("a")], ids[ord("b")], 7), (7, ids[ord("c")], 2**30)]
    piece = b"abcab\x00"
    assert BPEEncoder(merges, ids).encode_piece(piece) == encode_piece(piece, merges, ids) == [
        2**30, 7, largest]


def test_bad_ends_are_refused():
    encoder = BPEEncoder([], range(256))
    with pytest.raises(ValueError, match="last end"):
        encoder.encode_pieces(b"abc", array("q", [1, 2]))
    with pytest.raises(ValueError, match="ends"):
        encoder.encode_pieces(b"abc", array("q", [2, 1, 3]))
    with pytest.raises(ValueError, match="ends"):
        encoder.encode_pieces(b"abc", array("q", [4]))


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="256"):
        BPEEncoder([], range(255))
    with pytest.raises(ValueError, match="token id"):
        BPEEncoder([(0, 1, -5)], range(256))


# --- rank_by_id and whole tokens (tiktoken's byte-pair rule: tokfx.formats.tiktoken_ranks) ------

@st.composite
def tied_merge_tables(draw):
    """(merges, byte_ids, whole tokens) whose merged ids repeat and come in any order, with any
    byte or merged id as a part: with rank_by_id, pairs of one rank tie (the leftmost merges
    first) and a pair a merge makes can outrank the rest of what would be one round."""
    ids = [1000 + i for i in draw(st.permutations(range(256)))]
    merged_pool = list(range(5000, 5012))
    parts = st.sampled_from([ids[b] for b in ALPHABET[:3]] + merged_pool)
    merges = draw(st.lists(st.tuples(parts, parts, st.sampled_from(merged_pool)), max_size=40))
    whole = draw(st.dictionaries(st.lists(st.sampled_from(ALPHABET[:3]), min_size=2, max_size=8).map(bytes),
                                 st.integers(6000, 6100), max_size=6))
    return merges, ids, whole


@settings(max_examples=300, deadline=None)
@given(tied_merge_tables(), st.one_of(pieces, st.lists(st.sampled_from(ALPHABET), min_size=61,
                                                        max_size=200).map(bytes)),
       st.booleans(), st.booleans())
def test_rank_by_id_and_whole_tokens_match_reference(table, piece, rank_by_id, with_whole):
    """Short pieces (rounds) and long ones (the heap), each option alone and both."""
    merges, ids, whole = table
    encoder = BPEEncoder(merges, ids, rank_by_id=rank_by_id, whole_tokens=whole if with_whole else None)
    expected = encode_piece(piece, merges, ids, rank_by_id=rank_by_id,
                            whole_tokens={tuple(k): v for k, v in whole.items()} if with_whole else None)
    assert encoder.encode_piece(piece) == expected
    assert encoder.encode_piece(piece) == expected  # from the cache


@settings(max_examples=200, deadline=None)
@given(tied_merge_tables(), st.lists(pieces, max_size=20), st.booleans())
def test_flat_merges_build_the_same_encoder(table, piece_list, rank_by_id):
    """Merges as one array('i'), three ids each (as a Tokenizer holds them), against the twin;
    ids as an array first, then as a list (whose Python ints are made on the first list)."""
    merges, ids, _ = table
    flat = array("i", [i for merge in merges for i in merge])
    encoder = BPEEncoder(flat, ids, rank_by_id=rank_by_id)
    expected = [i for piece in piece_list for i in encode_piece(piece, merges, ids, rank_by_id=rank_by_id)]
    data, ends = b"".join(piece_list), ends_of(piece_list)
    assert encoder.encode_pieces(data, ends, True).tolist() == expected
    assert encoder.encode_pieces(data, ends) == expected
    assert list(flat) == [i for merge in merges for i in merge]  # read, not changed


def test_flat_merges_of_a_broken_length_are_refused():
    with pytest.raises(ValueError, match="three ids per merge"):
        BPEEncoder(array("i", [97, 98]), range(256))
    with pytest.raises(ValueError, match="token id"):
        BPEEncoder(array("i", [0, 1, -5]), range(256))


def test_rank_by_id_merges_one_at_a_time():
    """`abab` with ab (id 10) and aba (id 2): merging the first ab makes the pair (ab, a), which
    outranks the second ab; merging both occurrences in one round would give [ab, ab]."""
    ids = list(range(256))
    a, b = ord("a"), ord("b")
    merges = [(a, b, 300), (300, a, 299)]
    assert BPEEncoder(merges, ids).encode_piece(b"abab") == [300, 300]
    assert BPEEncoder(merges, ids, rank_by_id=True).encode_piece(b"abab") == [299, b]
    assert encode_piece(b"abab", merges, ids, rank_by_id=True) == [299, b]


def test_whole_tokens_with_a_remapped_alphabet():
    """With cjk (symbols remapped), a piece is looked up by its symbols as int32 bytes."""
    from tokfx.alphabet import Alphabet
    from tokfx.reference.alphabet import cjk_symbols

    alphabet = Alphabet("cjk", (0x39,))
    piece = "中文字".encode("utf-8")
    symbols = cjk_symbols(piece, (0x39,))
    whole = {array("i", symbols).tobytes(): 9999}
    encoder = BPEEncoder([], range(alphabet.size), whole_tokens=whole, **alphabet.symbol_map)
    assert encoder.encode_piece(piece) == [9999]
    assert encode_piece(piece, [], range(alphabet.size), (0x39,),
                        whole_tokens={tuple(symbols): 9999}) == [9999]
