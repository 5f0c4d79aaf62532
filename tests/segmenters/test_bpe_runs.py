"""BPE over a chars alphabet, read run by run (BPEEncoder over sentencepiece's BPE: each character
straight to its id, the runs of ids that merge merged between the ids that none takes), against
the twin: tokfx.reference.alphabet.char_symbols, then tokfx.reference.bpe_encode.apply_merges,
then UnknownRuns' joining of the unknown id. Long CJK-like pieces, as a Chinese line is one piece
under sentencepiece's whitespace split: covered characters between fallback bytes or unknown
characters, characters of 2 and 4 bytes, and bytes that are not UTF-8."""
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ends_of
from tokfx._bpe_encode import BPEEncoder
from tokfx.alphabet import Alphabet
from tokfx.reference.alphabet import char_symbols
from tokfx.reference.bpe_encode import apply_merges, merge_ranks
from tokfx.segmenters.unknown_runs import UnknownRuns

# The characters an alphabet may cover; the text also holds characters it never covers.
COVERABLE = "▁中文人天下，。“”aé😀"
UNITS = [c.encode() for c in COVERABLE + "众認識吾輩𝐀"] + [b"\xff", b"\xe4\xb8", b"\x80"]
pieces = st.lists(st.sampled_from(UNITS), max_size=300).map(b"".join)
FIRST_MERGED_ID = 5000


@st.composite
def tables(draw):
    """(alphabet, merges, symbol ids): some of COVERABLE covered, with byte fallback or an unknown
    symbol; symbol ids a permutation of 1000.. ; merges whose parts are covered characters, now
    and then a fallback byte or the unknown symbol (sentencepiece's models merge neither, but the
    rule holds for any table), and earlier merged ids (in half the tables any merged id)."""
    covered = "".join(draw(st.sets(st.sampled_from(COVERABLE))))
    unknown = draw(st.sampled_from([None, " \u2047 "]))
    alphabet = Alphabet("chars", (), covered, unknown)
    symbol_ids = [1000 + s for s in draw(st.permutations(range(alphabet.size)))]
    parts = [symbol_ids[s] for s in range(alphabet.char_base, alphabet.size)]
    parts += [symbol_ids[0]] if unknown is not None else [symbol_ids[b] for b in b"\xe4\xb8\xff"]
    count = draw(st.integers(0, 30 if parts else 0))
    merged_ids = list(range(FIRST_MERGED_ID, FIRST_MERGED_ID + count))
    forward = draw(st.booleans())
    merges = []
    for rank, merged in enumerate(merged_ids):
        choices = parts + (merged_ids[:rank] + merged_ids[rank + 1:] if forward else merged_ids[:rank])
        merges.append((draw(st.sampled_from(choices)), draw(st.sampled_from(choices)), merged))
    return alphabet, merges, symbol_ids


def twin(piece: bytes, alphabet: Alphabet, merges, symbol_ids, rank_by_id: bool) -> list[int]:
    symbols = char_symbols(piece, alphabet.characters, (), unknown=alphabet.unknown is not None)
    return apply_merges([symbol_ids[s] for s in symbols], merge_ranks(merges, rank_by_id), rank_by_id)


class _Encoded:
    """An encoder that has already encoded: UnknownRuns, the twin of join_runs_of, around it."""

    def __init__(self, ids: list[int]):
        self.ids = ids

    def encode_pieces(self, data, ends, as_array=False):
        return self.ids


def joined(ids: list[int], token: int) -> list[int]:
    return UnknownRuns(_Encoded(ids), token).encode_pieces(b"", None)


@settings(max_examples=300, deadline=None)
@given(tables(), st.lists(pieces, max_size=8), st.sampled_from([0, 1, 3, 1 << 18]), st.booleans(), st.booleans())
def test_runs_match_the_twin(table, piece_list, cache_size, rank_by_id, join):
    alphabet, merges, symbol_ids = table
    encoder = BPEEncoder(merges, symbol_ids, cache_size=cache_size, rank_by_id=rank_by_id, **alphabet.symbol_map)
    expected = [twin(piece, alphabet, merges, symbol_ids, rank_by_id) for piece in piece_list]
    unknown_id = symbol_ids[0]
    if join and alphabet.unknown is not None:
        encoder.join_runs_of(unknown_id)
        whole = joined([i for ids in expected for i in ids], unknown_id)
        expected = [joined(ids, unknown_id) for ids in expected]
    else:
        whole = [i for ids in expected for i in ids]
    for piece, ids in zip(piece_list, expected):
        assert encoder.encode_piece(piece) == ids
    data, ends = b"".join(piece_list), ends_of(piece_list)
    # Twice: the second pass reads whatever the first left in the cache (pieces of up to 24 bytes).
    assert encoder.encode_pieces(data, ends) == whole
    assert encoder.encode_pieces(data, ends, True) == array("i", whole)


def test_runs_past_the_short_piece_limit():
    """Runs of covered characters around and far past 64 symbols (merged with a heap) between
    fallback bytes and unknown characters."""
    for unknown in (None, " \u2047 "):
        alphabet = Alphabet("chars", (), "中人文", unknown)
        symbol_ids = list(range(alphabet.size))
        zhong, ren, wen = (symbol_ids[alphabet.char_base + k] for k in range(3))
        merges = [(zhong, wen, 900), (900, 900, 901), (901, ren, 902), (wen, zhong, 903), (903, 900, 904)]
        encoder = BPEEncoder(merges, symbol_ids, **alphabet.symbol_map)
        for piece in ["中文" * n + "众" + "文中" * n + "人" for n in (31, 32, 33, 500)] + ["中文人吾" * 40]:
            assert encoder.encode_piece(piece.encode()) == twin(piece.encode(), alphabet, merges, symbol_ids, False)
