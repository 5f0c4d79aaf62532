"""Tokenizers over the chars and chars-cjk alphabets (docs/alphabets.md): training, round trips,
files, and the every-split BPE encoding that sentencepiece has."""
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tokfx
from tokfx.alphabet import Alphabet
from tokfx.reference.bpe_encode import every_split_merges as reference_every_split_merges
from tokfx.segmenters.bpe import every_split_merges

TEXTS = ["the cat sat on the mat", "众人唤众人 the mat", "認識 the cat 😀", "naïve café", "the the the"] * 20

TEXT = st.text(alphabet=st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from("the cat 众人認識😀é\n\t  ▁<|endoftext|>"),
), max_size=40)


@pytest.fixture(scope="module", params=["chars", "chars-cjk"])
def tokenizer(request):
    return tokfx.train(TEXTS, vocab_size=280 if request.param == "chars" else 540, alphabet=request.param,
                       pattern="sentencepiece", character_coverage=0.9)


@settings(max_examples=300, deadline=None)
@given(TEXT)
@example("\u2581")
@example("a\u2581b")
@example("\u2581x ")
def test_round_trip(tokenizer, text):
    # U+2581 in the text is the space symbol, which decodes as a space: sentencepiece's
    # decode(encode("a\u2581b")) is "a b" too (tokenizer.model of such a tokenizer, checked).
    expected = text.replace("\u2581", " ")
    assert tokenizer.decode(tokenizer.encode(text)) == expected
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == expected


def test_characters_are_chosen_by_coverage(tokenizer):
    characters = tokenizer.alphabet.characters
    assert "t" in characters and "▁" in characters
    assert "😀" not in characters  # rare: spelled as its 4 bytes
    ids = tokenizer.encode("😀")
    assert [tokenizer.id_to_token(i) for i in ids][-4:] == [(b,) for b in "😀".encode()]


def test_no_learned_token_holds_a_fallback_symbol(tokenizer):
    base, special = tokenizer.alphabet.char_base, set(tokenizer.special_tokens.values())
    learned = [t for i, t in enumerate(tokenizer.tokens) if i >= tokenizer.alphabet.size and i not in special]
    assert learned and all(min(t) >= base for t in learned)


def test_saved_and_loaded_encodes_the_same(tokenizer, tmp_path):
    tokenizer.save(tmp_path)
    loaded = tokfx.Tokenizer.load(tmp_path)
    assert loaded.alphabet == tokenizer.alphabet
    for text in TEXTS[:5] + ["  two  spaces ", ""]:
        assert loaded.encode(text) == tokenizer.encode(text)


def test_sentencepiece_normalization_around_special_tokens(tokenizer):
    # The dummy space goes in front of the text, not of the text after a special token.
    ids = tokenizer.encode("the<|endoftext|>the")
    eot = tokenizer.special_tokens["<|endoftext|>"]
    first, second = ids[:ids.index(eot)], ids[ids.index(eot) + 1:]
    assert tokenizer.decode(first) == "the" and first != second
    with pytest.raises(ValueError, match="normalizer"):
        list(tokenizer.encode_iterable(["the cat"]))


def test_a_bpe_over_characters_merges_every_split():
    # bc is learned before ab, then abc from (ab, c). Byte-level BPE leaves "abc" as a, bc (no
    # merge (a, bc)); sentencepiece merges any two pieces that make a piece.
    alphabet = Alphabet("chars", characters="abc")
    a, b, c = (256 + k for k in range(3))
    tokens = [alphabet.token([s]) for s in range(alphabet.size)] + [(b, c), (a, b), (a, b, c)]
    bc, ab, abc = 259, 260, 261
    learned = [(b, c, bc), (a, b, ab), (ab, c, abc)]
    byte_level = tokfx.Tokenizer(tokens, learned, pattern="none", alphabet=alphabet)
    assert byte_level.encode("abc") == [a, bc]
    merges = every_split_merges(tokens, [bc, ab, abc])
    assert merges == [(b, c, bc), (a, b, ab), (a, bc, abc), (ab, c, abc)]
    assert tokfx.Tokenizer(tokens, merges, pattern="none", alphabet=alphabet).encode("abc") == [abc]


def test_character_coverage_is_checked():
    with pytest.raises(ValueError, match="character_coverage given for the 'bytes' alphabet"):
        tokfx.train(TEXTS, vocab_size=300, character_coverage=0.9)
    with pytest.raises(ValueError, match=r"in \(0, 1\]"):
        tokfx.train(TEXTS, vocab_size=300, alphabet="chars", character_coverage=1.5)
    with pytest.raises(ValueError, match="smaller than the alphabet .*characters"):
        tokfx.train(TEXTS, vocab_size=260, alphabet="chars", character_coverage=1.0)


def test_every_split_merges_is_linear_in_a_long_tokens_length():
    # A line of distinct characters learned to the end: each token is the previous one plus a
    # character, so a quadratic walk over 3,000 tokens of up to 3,000 symbols would take seconds.
    alphabet = Alphabet("chars", characters="".join(chr(0x4E00 + k) for k in range(3000)))
    base = alphabet.char_base
    tokens = [alphabet.token([s]) for s in range(alphabet.size)]
    chain = []
    for k in range(1, 3000):
        tokens.append(tuple(range(base, base + k + 1)))
        chain.append(len(tokens) - 1)
    merges = every_split_merges(tokens, chain)
    # The token of k+1 symbols splits into the one of k symbols + a character, and into a
    # character + ... only when that suffix is a token (never, past the first).
    assert merges[:3] == [(base, base + 1, chain[0]), (chain[0], base + 2, chain[1]), (chain[1], base + 3, chain[2])]
    assert len(merges) == len(chain)


def test_a_learned_unk_piece_does_not_collide_with_the_exported_unknown_piece(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    tok = tokfx.train(["x<unk> y<unk>"] * 50, vocab_size=272, alphabet="chars", pattern="sentencepiece",
                      special_tokens=[])
    note = tok.save(tmp_path)
    assert "<unk1> added" in note
    processor = spm.SentencePieceProcessor(model_file=str(tmp_path / "tokenizer.model"))
    assert processor.encode("x<unk> y") == tok.encode("x<unk> y")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=6).map(tuple), min_size=1, max_size=40),
       st.data())
def test_every_split_merges_equals_the_twin(tokens, data):
    tokens = [None if data.draw(st.booleans()) and k % 5 == 0 else t for k, t in enumerate(tokens)]
    chosen = data.draw(st.lists(st.sampled_from([k for k, t in enumerate(tokens) if t is not None] or [0])))
    chosen = [k for k in chosen if tokens[k] is not None]
    assert every_split_merges(tokens, chosen) == reference_every_split_merges(tokens, chosen)
