"""BPE training, encoding, decoding and files with the cjk alphabet (docs/cjk_remap.md)."""
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from conftest import CORPUS_FILES, corpus_path, fixture_path
from bpe_inputs import pretoken_counts
from tokfx import Tokenizer
from tokfx.alphabet import Alphabet, DecodeError
from tokfx.models.bpe.merge_loop import train_bpe_merges
from tokfx.cli.main import main
from tokfx.reference.alphabet import cjk_symbols
from tokfx.reference.bpe_encode import encode_piece
from tokfx.reference.bpe_train import train_merges as reference_train_merges

EOT = "<|endoftext|>"
GROUPS = (0x39, 0x3A, 0x3B)


def chinese_sample(chars: int = 60_000) -> str:
    return corpus_path("chinese/hongloumeng.txt").read_bytes().decode("utf-8")[:chars]


def _mixed_text(words: int = 3000) -> str:
    """Seeded random words over hanzi, kana, hangul, Latin and 2- and 4-byte characters: enough
    distinct pairs for a few hundred merges, and no dependence on ../shared."""
    pool = "众唤認識漢字红楼梦水浒传人醒仮名かなカナ한국어텍스트abcdefghijkʤé𝔘🙂。、"
    rng = random.Random(3)
    return "".join(rng.choice(" \n") + "".join(rng.choices(pool, k=rng.randint(1, 4)))
                   for _ in range(words))


MIXED = _mixed_text()


@pytest.fixture(scope="module")
def cjk():
    return tokfx.train(MIXED, vocab_size=700, alphabet="cjk")


def test_training_over_symbols_matches_the_reference_merges():
    counts = pretoken_counts(MIXED)
    words = {tuple(cjk_symbols(word, GROUPS)): count for word, count in counts.items()}
    # Two big-endian bytes per symbol: comparing keys compares symbol sequences.
    keys = [s.to_bytes(2, "big") for s in range(515)]
    expected = reference_train_merges(words, keys, 120)
    assert train_bpe_merges(counts, 120, alphabet=Alphabet.named("cjk")) == expected


def test_ties_compare_symbol_sequences():
    # 众众 is P39 [5E 97] [5E 97] and 唤唤 is P39 [CA A4] [CA A4]: both inner pairs occur twice,
    # everything else once, and the greater symbol sequence wins: h2 CA (298) > h2 5E (286).
    counts = {"众众".encode(): 1, "唤唤".encode(): 1}
    merges = train_bpe_merges(counts, 1, alphabet=Alphabet.named("cjk"))
    assert merges == [(256 + 0x20 + 0x0A, 384 + 0x24)]


def test_text_without_remapped_characters_trains_the_same_merges():
    counts = pretoken_counts(fixture_path("tinystories_sample.txt").read_text(encoding="utf-8"))
    by_bytes = train_bpe_merges(counts, 200)
    by_cjk = train_bpe_merges(counts, 200, alphabet=Alphabet.named("cjk"))

    def shifted(token_id):  # merged ids start at 515 instead of 256
        return token_id if token_id < 256 else token_id + 515 - 256

    assert by_cjk == [(shifted(left), shifted(right)) for left, right in by_bytes]


def test_ids_are_the_alphabet_then_merges_then_specials(cjk):
    assert cjk.alphabet == Alphabet("cjk", GROUPS)
    assert cjk.vocab_size == 700 and cjk.special_tokens == {EOT: 699}
    assert cjk.tokens[:515] == [(s,) for s in range(515)]
    assert all(merged == 515 + rank for rank, (_, _, merged) in enumerate(cjk.merge_ids))


def test_encoding_matches_the_reference_per_pre_token(cjk):
    symbol_ids = list(range(515))
    for piece in pretoken_counts(MIXED):
        assert cjk._encoder.encode_piece(piece) == encode_piece(piece, cjk.merge_ids, symbol_ids, GROUPS)


def test_long_pieces_take_the_heap_path_and_match_the_reference(cjk):
    # Pieces above 64 symbols are merged with a heap in the core, not in rounds.
    rng = random.Random(8)
    pool = "众唤認識漢字红楼梦水浒传人醒かなカナ한국어텍스트"
    symbol_ids = list(range(515))
    for _ in range(30):
        piece = "".join(rng.choices(pool, k=rng.randint(30, 120))).encode()
        assert len(cjk_symbols(piece, GROUPS)) > 64
        assert cjk._encoder.encode_piece(piece) == encode_piece(piece, cjk.merge_ids, symbol_ids, GROUPS)


def test_worked_example_encodes_through_the_tokenizer():
    # With no merges, encoding is the alphabet mapping itself.
    tok = tokfx.train(["x"], vocab_size=516, alphabet="cjk")
    assert tok.encode("众唤众") == [512, 256 + 0x1E, 384 + 0x17, 256 + 0x20 + 0x0A, 384 + 0x24,
                                   256 + 0x1E, 384 + 0x17]
    assert tok.show_token(512) == "P39"
    assert tok.encode("众ʤ") != tok.encode("众唤")
    assert tok.decode(tok.encode("众ʤ")) == "众ʤ" and tok.decode(tok.encode("众唤")) == "众唤"


MIXED_TEXT = st.lists(st.one_of(
    st.characters(max_codepoint=0x7F), st.characters(min_codepoint=0x80, max_codepoint=0x7FF),
    st.characters(min_codepoint=0x800, max_codepoint=0xFFFF, exclude_categories=["Cs"]),
    st.characters(min_codepoint=0x10000), st.sampled_from(["众", "唤", "ʤ", EOT, " 認識", "\ufffd", "\ud7ff", "\ue000", "\uffff",
                                                  "\u0800", "\U00010000"])),
    max_size=80).map("".join)


@settings(max_examples=300, deadline=None)
@given(MIXED_TEXT)
def test_decode_encode_round_trips(cjk, text):
    ids = cjk.encode(text)
    assert cjk.decode(ids, errors="strict") == text
    assert cjk.decode_errors(ids) == 0


@pytest.mark.parametrize("groups", [GROUPS, (0x38,) + GROUPS], ids=["default", "with-0x38"])
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpora_round_trip(name, groups):
    tokenizer = _corpus_tokenizer(groups)
    text = corpus_path(name).read_bytes().decode("utf-8")
    assert tokenizer.decode(tokenizer.encode(text), errors="strict") == text


_trained = {}


def _corpus_tokenizer(groups):
    if groups not in _trained:
        _trained[groups] = tokfx.train(chinese_sample(), vocab_size=2000, alphabet="cjk", cjk_groups=groups)
    return _trained[groups]


def test_random_ids_never_crash_decode(cjk):
    rng = random.Random(7)
    for _ in range(1000):
        ids = [rng.randrange(cjk.vocab_size) for _ in range(rng.randrange(12))]
        text = cjk.decode(ids)
        if cjk.decode_errors(ids):
            with pytest.raises(DecodeError) as info:
                cjk.decode(ids, errors="strict")
            assert 0 <= info.value.position < len(ids)
        else:
            assert cjk.decode(ids, errors="strict") == text


def test_strict_names_the_id_holding_the_error(cjk):
    h3_alone = 384 + 0x17
    ids = cjk.encode("ab 众") + [h3_alone] + cjk.encode("c")
    with pytest.raises(DecodeError, match=f"position {len(ids) - 2}") as info:
        cjk.decode(ids, errors="strict")
    assert info.value.position == len(ids) - 2
    assert cjk.decode(ids) == "ab 众\ufffdc" and cjk.decode_errors(ids) == 1


def test_tokfx_json_records_the_alphabet_and_round_trips(cjk, tmp_path):
    cjk.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokfx.json"]
    doc = json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8"))
    assert doc["alphabet"] == {"name": "cjk", "groups": [0x39, 0x3A, 0x3B]}
    assert max(max(t) for t in doc["tokens"] if t) == 514
    loaded = Tokenizer.load(tmp_path)
    assert loaded.alphabet == cjk.alphabet and loaded.tokens == cjk.tokens
    assert loaded.encode(MIXED) == cjk.encode(MIXED)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["alphabet"].update(groups=[0x37]), "tokfx.json: alphabet: cjk groups must be a non-empty subset"),
    (lambda d: d["alphabet"].pop("groups"), "tokfx.json: alphabet: cjk groups must be a non-empty subset"),
    (lambda d: d["tokens"].__setitem__(514, [515]), r"tokfx.json: tokens\[514\]\[0\]: 515 is outside 0\.\.514"),
    # A bytes-alphabet file's symbols are held to 0-255.
    (lambda d: d.update(alphabet={"name": "bytes"}), r"tokfx.json: tokens\[\d+\]\[\d+\]: \d+ is outside 0\.\.255"),
])
def test_bad_alphabets_are_refused(cjk, tmp_path, edit, message):
    cjk.save(tmp_path)
    doc = json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8"))
    edit(doc)
    (tmp_path / "tokfx.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        Tokenizer.load(tmp_path)


def test_byte_formats_are_refused_for_cjk(cjk):
    with pytest.raises(ValueError, match="needs the bytes alphabet"):
        cjk.vocab
    with pytest.raises(ValueError, match="needs the bytes alphabet"):
        cjk.decode_bytes([1])


def test_cli_trains_and_inspects_a_cjk_tokenizer(tmp_path, capsys):
    corpus = tmp_path / "zh.txt"
    corpus.write_text(MIXED, encoding="utf-8")
    out = tmp_path / "tok"
    assert main(["train", str(corpus), "-o", str(out), "--vocab-size", "600", "--alphabet", "cjk",
                 "--cjk-groups", "38,39,3a,3b", "-q"]) == 0
    tok = Tokenizer.load(out)
    assert tok.alphabet == Alphabet("cjk", (0x38, 0x39, 0x3A, 0x3B)) and tok.vocab_size == 600
    capsys.readouterr()
    assert main(["inspect", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "alphabet:       cjk groups 38,39,3a,3b (516 base symbols)" in shown
    assert "P39" in shown or "P3A" in shown


def test_cli_refuses_groups_without_cjk(tmp_path, capsys):
    assert main(["train", str(fixture_path("address.txt")), "-o", str(tmp_path / "t"),
                 "--cjk-groups", "39", "-q"]) == 2
    assert "cjk_groups given for the 'bytes' alphabet" in capsys.readouterr().err


def test_bytes_alphabet_is_unchanged():
    counts = Counter({b"hello": 3, b" world": 2, "众".encode(): 4})
    tok = tokfx.train(counts, vocab_size=270)
    assert tok.alphabet.name == "bytes" and tok.tokens[:256] == [(b,) for b in range(256)]
    assert tok.decode(tok.encode("众 hello")) == "众 hello"


def test_encoder_checks_its_cjk_arguments():
    from tokfx._bpe_encode import BPEEncoder

    prefixes = [-1, 512, 513, 514]  # groups 0x39-0x3B
    assert BPEEncoder([], range(515), cjk_prefix_ids=prefixes).encode_piece("众".encode()) == [512, 286, 407]
    with pytest.raises(ValueError, match="symbol_ids must hold 515 ids, got 256"):
        BPEEncoder([], range(256), cjk_prefix_ids=prefixes)
    with pytest.raises(ValueError, match="is not -1 or a prefix symbol"):
        BPEEncoder([], range(515), cjk_prefix_ids=[-1, 512, 513, 600])
