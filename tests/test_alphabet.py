"""The cjk and chars alphabets against docs/cjk_remap.md and docs/alphabets.md, and against their
pure-Python twin."""
import random
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx._alphabet import decode_symbols, map_pieces, prefix_table
from tokfx.alphabet import DEFAULT_CJK_GROUPS, Alphabet, DecodeError
from tokfx.reference.alphabet import char_symbols, cjk_bytes, cjk_symbols

CJK = Alphabet.named("cjk")
WITH_KANA = Alphabet.named("cjk", (0x38, 0x39, 0x3A, 0x3B))

# The spec's table, built from its formulas: every h2/h3 value that a well-formed lead byte
# E0-EF and continuation bytes 80-BF can give, ranked in increasing order.
H2_VALUES = sorted({((b1 & 3) << 7) | (b2 >> 1) for b1 in range(0xE0, 0xF0) for b2 in range(0x80, 0xC0)})
H3_VALUES = sorted({((b2 & 1) << 8) | b3 for b2 in range(0x80, 0xC0) for b3 in range(0x80, 0xC0)})


def h2(value):
    return 256 + H2_VALUES.index(value)


def h3(value):
    return 384 + H3_VALUES.index(value)


def test_the_spec_tables_have_128_values_each():
    assert len(H2_VALUES) == len(H3_VALUES) == 128
    assert CJK.size == 515 and WITH_KANA.size == 516


def test_worked_example_from_the_spec():
    p39, p3a = 512, 513  # one prefix per group, in increasing order of p, after the 512 others
    assert bytes.fromhex("E4BC97 E594A4 E4BC97") == "众唤众".encode()
    assert CJK.symbols("众唤众".encode()) == [p39, h2(0x5E), h3(0x97), h2(0xCA), h3(0xA4),
                                              h2(0x5E), h3(0x97)]
    assert CJK.symbols("众唤众認".encode())[7:] == [p3a, h2(0x55), h3(0x8D)]
    assert CJK.show(CJK.symbols("众唤众認".encode())) == "P39 5E 97 CA A4 5E 97 P3A 55 8D"


def test_raw_2_byte_character_after_a_run_stays_distinct():
    # The reason for separate h2/h3 ids: ʤ is CA A4 as raw bytes, 唤 is h2 CA h3 A4.
    assert CJK.symbols("众ʤ".encode())[3:] == [0xCA, 0xA4]
    assert CJK.symbols("众ʤ".encode()) != CJK.symbols("众唤".encode())
    for text in ("众ʤ", "众唤"):
        assert CJK.decode(CJK.symbols(text.encode())) == text


def test_raw_bytes_between_characters_keep_the_prefix():
    assert CJK.symbols("众a唤".encode()) == [512, h2(0x5E), h3(0x97), ord("a"), h2(0xCA), h3(0xA4)]


@pytest.mark.parametrize("alphabet", [CJK, WITH_KANA], ids=["default", "with-0x38"])
def test_3_byte_remap_is_a_bijection(alphabet):
    seen = {}
    for cp in range(0x800, 0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        data = chr(cp).encode()
        symbols = alphabet.symbols(data)
        if data[0] >> 2 in alphabet.groups:
            assert len(symbols) == 3 and symbols[0] == 512 + alphabet.groups.index(data[0] >> 2)
            assert 256 <= symbols[1] < 384 <= symbols[2] < 512
            assert tuple(symbols) not in seen, (hex(cp), hex(seen.get(tuple(symbols), 0)))
            seen[tuple(symbols)] = cp
        else:
            assert symbols == list(data)
        assert alphabet.decode(symbols, errors="strict") == chr(cp)
    expected = sum(1 for cp in range(0x800, 0x10000) if not 0xD800 <= cp <= 0xDFFF
                   and chr(cp).encode()[0] >> 2 in alphabet.groups)
    assert len(seen) == expected


def test_ill_formed_3_byte_sequences_stay_raw_bytes():
    for data in (b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xe4\xbc", b"\xe4\x41\x97", b"\xe4\xbc\xc0"):
        assert WITH_KANA.symbols(data) == list(data)


def test_text_without_remapped_characters_gets_the_byte_symbols():
    data = "plain ASCII, é, ʤ, 𝔘 and ぁ (0x38 is not remapped by default)".encode()
    assert CJK.symbols(data) == list(data) == Alphabet.named("bytes").symbols(data)


def _random_piece(rng):
    """Bytes that often form 3-byte characters, with truncations and stray bytes mixed in."""
    out = bytearray()
    for _ in range(rng.randrange(12)):
        kind = rng.random()
        if kind < 0.5:
            out += bytes([rng.randrange(0xE0, 0xF0), rng.randrange(0x80, 0xC0), rng.randrange(0x80, 0xC0)])
        elif kind < 0.6:
            out += bytes([rng.randrange(0xE0, 0xF0), rng.randrange(0x80, 0xC0)])
        else:
            out.append(rng.randrange(256))
    return bytes(out)


GROUP_CHOICES = [DEFAULT_CJK_GROUPS, (0x38, 0x39, 0x3A, 0x3B), (0x38,), (0x3A, 0x3B), (0x39,)]


def test_cython_mapping_agrees_with_the_reference():
    rng = random.Random(4)
    for _ in range(300):
        groups = rng.choice(GROUP_CHOICES)
        pieces = [_random_piece(rng) for _ in range(rng.randrange(1, 8))]
        ends = array("q")
        total = 0
        for piece in pieces:
            total += len(piece)
            ends.append(total)
        symbols, offsets = map_pieces(b"".join(pieces), ends, prefix_table(groups), None, 512 + len(groups))
        expected = [cjk_symbols(piece, groups) for piece in pieces]
        assert [list(symbols[offsets[k]:offsets[k + 1]]) for k in range(len(pieces))] == expected


def test_cython_decoder_agrees_with_the_reference():
    rng = random.Random(5)
    for _ in range(500):
        groups = rng.choice(GROUP_CHOICES)
        size = 512 + len(groups)
        symbols = [rng.choice([rng.randrange(size), rng.randrange(256, size)]) for _ in range(rng.randrange(15))]
        data, errors, starts = decode_symbols(array("i", symbols), groups, True)
        assert (data, errors, list(starts)) == cjk_bytes(symbols, groups)


def test_decoder_errors_and_their_positions():
    p39 = 512
    cases = [  # symbols, replaced text, position of the first error
        ([h3(0x97)], "\ufffd", 0),  # an h3 without an h2
        ([ord("a"), h2(0x5E)], "a\ufffd", 1),  # an h2 not followed by an h3
        ([p39, h2(0x5E), ord("b")], "\ufffdb", 1),
        ([h2(0x5E), h3(0x97), ord("c")], "\ufffdc", 0),  # no prefix yet: the pair is one error
        ([ord("a"), 0xFF, ord("b")], "a\ufffdb", 1),  # invalid UTF-8 after decoding
        ([p39, h2(0x5E), h3(0x97), 0xE4, 0xBC], "众\ufffd", 3),
    ]
    for symbols, text, position in cases:
        assert CJK.decode(symbols) == text
        assert CJK.decode_errors(symbols) == text.count("\ufffd")
        with pytest.raises(DecodeError) as info:
            CJK.decode(symbols, errors="strict")
        assert info.value.position == position
    # The prefix persists across the whole sequence (it is not reset between pre-tokens).
    assert CJK.decode([p39, h2(0x5E), h3(0x97), ord(" "), h2(0xCA), h3(0xA4)]) == "众 唤"


def test_overlong_bytes_from_a_0x38_prefix_are_a_utf8_error():
    # P38 with h2 0x40 gives E0 80 xx: overlong, so invalid UTF-8 after decoding.
    symbols = [512, h2(0x40), h3(0x80)]
    assert WITH_KANA.decode(symbols) == "\ufffd\ufffd\ufffd"
    assert WITH_KANA.decode_errors(symbols) == 3


def test_random_symbols_never_crash_and_strict_raises_exactly_when_replace_replaces():
    rng = random.Random(6)
    for _ in range(2000):
        symbols = [rng.randrange(CJK.size) for _ in range(rng.randrange(10))]
        text = CJK.decode(symbols)
        errors = CJK.decode_errors(symbols)
        if errors:
            with pytest.raises(DecodeError) as info:
                CJK.decode(symbols, errors="strict")
            assert 0 <= info.value.position < len(symbols)
        else:
            assert CJK.decode(symbols, errors="strict") == text


def test_symbols_outside_the_alphabet_are_refused():
    with pytest.raises(ValueError, match="outside the alphabet"):
        CJK.decode([515])


def test_groups_are_checked():
    with pytest.raises(ValueError, match="subset of 0x38-0x3B"):
        Alphabet.named("cjk", (0x37,))
    with pytest.raises(ValueError, match="unknown alphabet"):
        Alphabet.named("utf9")


MIXED = st.text(alphabet=st.one_of(
    st.characters(max_codepoint=0x7F),
    st.characters(min_codepoint=0x80, max_codepoint=0x7FF),
    st.characters(min_codepoint=0x800, max_codepoint=0xFFFF, exclude_categories=["Cs"]),
    st.characters(min_codepoint=0x10000),
    # Bytes that look like h2/h3 values (ʤ = CA A4), U+FFFD, and the edges around the
    # surrogates and the 2-, 3- and 4-byte ranges.
    st.sampled_from("众唤認ʤ\ufffdぁ가\u07ff\u0800\ud7ff\ue000\uffff\U00010000"),
), max_size=60)


@settings(max_examples=400, deadline=None)
@given(MIXED, st.sampled_from(GROUP_CHOICES))
def test_symbols_round_trip(text, groups):
    alphabet = Alphabet.named("cjk", groups)
    symbols = alphabet.symbols(text.encode())
    assert alphabet.decode(symbols, errors="strict") == text
    assert symbols == cjk_symbols(text.encode(), groups)


# --- chars and chars-cjk ----------------------------------------------------------------------
CHARS = Alphabet.named("chars", characters="abc ▁é众唤ʤ\U0001F600")
CHARS_CJK = Alphabet.named("chars-cjk", characters=CHARS.characters)
CHARS_UNK = Alphabet("chars", characters=CHARS.characters, unknown=" \u2047 ")


def test_chars_layout_and_worked_example():
    assert CHARS.size == 256 + 10 and CHARS_CJK.size == 515 + 10
    a, b, e_acute, zhong = (256 + sorted(CHARS.characters).index(c) for c in "abé众")
    assert CHARS.symbols("abé众".encode()) == [a, b, e_acute, zhong]
    # 認 is not covered: its bytes, or with chars-cjk its remap (a prefix, then h2 h3).
    assert CHARS.symbols("a認".encode()) == [a, 0xE8, 0xAA, 0x8D]
    assert CHARS_CJK.symbols("認".encode()) == [512 + 1, h2(0x55), h3(0x8D)]
    assert CHARS.show(CHARS.symbols("a認".encode())) == "'a' <0xE8> <0xAA> <0x8D>"
    # A covered character between two fallback ones keeps the prefix.
    assert CHARS_CJK.symbols("認a認".encode()) == [513, h2(0x55), h3(0x8D), 515 + sorted(CHARS.characters).index("a"),
                                                   h2(0x55), h3(0x8D)]


def test_chars_are_chosen_as_sentencepiece_chooses_them():
    counts = {"aab".encode(): 3, "é".encode(): 1, "cc".encode(): 1}  # a 6, b 3, c 2, é 1: 12
    chars = Alphabet.named("chars")
    assert chars.covering(counts, 0.5).characters == "a"  # 6/12 covers a half
    assert chars.covering(counts, 0.51).characters == "ab"
    assert chars.covering(counts, 1.0).characters == "abcé"
    with pytest.raises(ValueError, match="no characters"):
        Alphabet.named("bytes").covering(counts)


def _random_text_piece(rng) -> bytes:
    text = "".join(rng.choice("ab ▁é众唤認ʤ\U0001F600\U0001F601xy\u0800") for _ in range(rng.randrange(8)))
    data = bytearray(text.encode())
    if data and rng.random() < 0.3:  # a stray byte: not UTF-8 any more
        data.insert(rng.randrange(len(data) + 1), rng.randrange(0x80, 0x100))
    return bytes(data)


@pytest.mark.parametrize("alphabet", [CHARS, CHARS_CJK, CHARS_UNK], ids=["chars", "chars-cjk", "chars-unknown"])
def test_chars_mapping_and_decoding_agree_with_the_reference(alphabet):
    rng = random.Random(7)
    unknown = alphabet.unknown is not None
    for _ in range(300):
        pieces = [_random_text_piece(rng) for _ in range(rng.randrange(1, 6))]
        symbols, offsets = alphabet.map_pieces(b"".join(pieces), list(_ends(pieces)))
        expected = [char_symbols(piece, alphabet.characters, alphabet.groups, unknown=unknown) for piece in pieces]
        assert [list(symbols[offsets[k]:offsets[k + 1]]) for k in range(len(pieces))] == expected
        flat = [s for piece in expected for s in piece]
        data, errors, starts = decode_symbols(array("i", flat), alphabet.groups, True, *alphabet._char_utf8)
        assert (data, errors, list(starts)) == cjk_bytes(flat, alphabet.groups, alphabet.characters, alphabet.unknown)
    for _ in range(500):  # any symbols, errors and all
        symbols = [rng.randrange(alphabet.size) for _ in range(rng.randrange(12))]
        data, errors, starts = decode_symbols(array("i", symbols), alphabet.groups, True, *alphabet._char_utf8)
        assert (data, errors, list(starts)) == cjk_bytes(symbols, alphabet.groups, alphabet.characters,
                                                         alphabet.unknown)


def _ends(pieces):
    total = 0
    for piece in pieces:
        total += len(piece)
        yield total


@settings(max_examples=300, deadline=None)
@given(MIXED, st.sampled_from([CHARS, CHARS_CJK]))
def test_chars_round_trip(text, alphabet):
    symbols = alphabet.symbols(text.encode())
    assert alphabet.decode(symbols, errors="strict") == text
    assert symbols == char_symbols(text.encode(), alphabet.characters, alphabet.groups)


def test_unknown_layout_and_worked_example():
    """Without byte fallback (sentencepiece's T5 and ALBERT models): symbol 0 is the unknown one,
    one per character not covered, and the characters follow it."""
    assert CHARS_UNK.size == 1 + 10 and CHARS_UNK.char_base == 1 and CHARS_UNK.unknown_symbol == 0
    a, b = (1 + sorted(CHARS.characters).index(c) for c in "ab")
    assert CHARS_UNK.symbols("a認認\U0001F601b".encode()) == [a, 0, 0, 0, b]
    assert CHARS_UNK.symbols(b"a\xff\xe8\xaab") == [a, 0, 0, 0, b]  # not UTF-8: one per byte
    assert CHARS_UNK.show(CHARS_UNK.symbols("a認".encode())) == "'a' <unk>"
    assert CHARS_UNK.decode(CHARS_UNK.symbols("a認b".encode()), errors="strict") == "a \u2047 b"
    assert Alphabet.from_dict(CHARS_UNK.to_dict()) == CHARS_UNK
    assert CHARS_UNK.with_characters("xy").unknown == CHARS_UNK.unknown
    # The byte-fallback alphabets keep their layout and their saved form.
    assert CHARS.to_dict() == {"name": "chars", "characters": CHARS.characters} and CHARS.char_base == 256


@settings(max_examples=300, deadline=None)
@given(MIXED)
def test_unknown_round_trip(text):
    """Decoding writes each character not covered as the unknown text, every other one as it is."""
    symbols = CHARS_UNK.symbols(text.encode())
    assert symbols == char_symbols(text.encode(), CHARS_UNK.characters, (), unknown=True)
    written = "".join(c if c in CHARS_UNK.characters else CHARS_UNK.unknown for c in text)
    assert CHARS_UNK.decode(symbols, errors="strict") == written


def test_unknown_is_checked():
    for name, groups in (("bytes", ()), ("cjk", DEFAULT_CJK_GROUPS), ("chars-cjk", DEFAULT_CJK_GROUPS)):
        with pytest.raises(ValueError, match="no unknown symbol"):
            Alphabet(name, groups, "", unknown="?")
    with pytest.raises(ValueError, match="UTF-8"):
        Alphabet("chars", (), "a", unknown="\ud800")
    with pytest.raises(ValueError, match="unknown symbol"):
        map_pieces(b"a", array("q", [1]), prefix_table(DEFAULT_CJK_GROUPS), None, 600, 0)


def test_characters_are_checked():
    with pytest.raises(ValueError, match="distinct"):
        Alphabet.named("chars", characters="aa")
    with pytest.raises(ValueError, match="distinct"):
        Alphabet.named("chars", characters="\ud800")
    with pytest.raises(ValueError, match="takes no characters"):
        Alphabet.named("cjk", characters="a")
    assert Alphabet.from_dict(CHARS_CJK.to_dict()) == CHARS_CJK
