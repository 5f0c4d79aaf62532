"""WordPiece (PMI merges): the Cython core's PMI mode (tokfx._bpe_train.train_wordpiece_merges)
against its pure-Python twin, and the trained tokenizer."""
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from bpe_inputs import KEYS, byte_words, packed, pretoken_counts
from conftest import fixture_path
from tokfx import Tokenizer
from tokfx._bpe_train import train_wordpiece_merges
from tokfx.models.base import ShortVocabularyWarning
from tokfx.models.bpe.merge_loop import BYTE_KEYS
from tokfx.reference.bpe_train import count_pairs, standalone_counts
from tokfx.reference.wordpiece_train import train_merges as reference_merges

EOT = "<|endoftext|>"


def core_merges(word_counts, symbol_keys, num_merges):
    return train_wordpiece_merges(*packed(word_counts), list(symbol_keys), num_merges)


@st.composite
def training_inputs(draw):
    """Tiny alphabets and few words force equal scores; counts beyond 32 bits, below 2**42 in all."""
    symbol_keys = draw(st.lists(KEYS, min_size=2, max_size=6))
    symbol = st.integers(0, len(symbol_keys) - 1)
    counts = st.one_of(st.integers(1, 4), st.integers(2**32 - 2, 2**34))
    word_counts = draw(st.dictionaries(st.lists(symbol, max_size=14).map(tuple), counts, max_size=8))
    return word_counts, symbol_keys, draw(st.integers(0, 40))


@settings(max_examples=500, deadline=None)
@given(training_inputs())
def test_core_equals_reference_on_random_inputs(case):
    word_counts, symbol_keys, num_merges = case
    assert core_merges(word_counts, symbol_keys, num_merges) == reference_merges(word_counts, symbol_keys, num_merges)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2000), st.integers(1, 300))
def test_core_equals_reference_on_real_text(start, num_merges):
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[start:start + 3000]
    words = byte_words(pretoken_counts(text))
    assert core_merges(words, BYTE_KEYS, num_merges) == reference_merges(words, BYTE_KEYS, num_merges)


def test_the_score_is_count_ab_over_count_a_times_count_b():
    # "xy" is rarer than "ab", but x and y occur nowhere else: 2 / (2 x 2) beats 10 / (20 x 20).
    words = {tuple(b"ab"): 10, tuple(b"a"): 10, tuple(b"b"): 10, tuple(b"xy"): 2}
    assert core_merges(words, BYTE_KEYS, 1) == [(ord("x"), ord("y"))]
    # q r: 2 / (4 x 2) = 1/4; c d: 1 / (2 x 1) = 1/2.
    words = {tuple(b"qr"): 2, tuple(b"q"): 2, tuple(b"cd"): 1, tuple(b"c"): 1}
    assert core_merges(words, BYTE_KEYS, 1) == [(ord("c"), ord("d"))]


def test_ties_go_to_the_higher_count_then_the_greater_pair():
    # a b: 2 / (2 x 2) = 1/2; c d: 1 / (1 x 2) = 1/2: the higher count wins.
    words = {tuple(b"ab"): 2, tuple(b"cd"): 1, tuple(b"d"): 1}
    assert core_merges(words, BYTE_KEYS, 1) == [(ord("a"), ord("b"))]
    # Both 1 / (1 x 1), count 1: the greater pair of byte strings.
    words = {tuple(b"ab"): 1, tuple(b"cd"): 1}
    assert core_merges(words, BYTE_KEYS, 2) == [(ord("c"), ord("d")), (ord("a"), ord("b"))]


def test_counts_follow_each_merge():
    # After merging (a, a) in "a a a", a stands once per word: counts are recomputed from the
    # rewritten words, as the twin does.
    words = {(0,) * 7: 3, (0, 1, 0): 2, (1, 1, 0, 1): 1}
    assert core_merges(words, [b"a", b"b"], 12) == reference_merges(words, [b"a", b"b"], 12)
    pairs = count_pairs([(list(w), c) for w, c in words.items()])
    alone = standalone_counts([(list(w), c) for w, c in words.items()])
    assert set(alone) == {0, 1} and pairs


def test_too_many_symbols_are_refused():
    with pytest.raises(ValueError, match="exact PMI"):
        core_merges({tuple(b"ab"): 2**41, tuple(b"cd"): 2**41}, BYTE_KEYS, 1)


@pytest.fixture(scope="module")
def english():
    return fixture_path("corpus.en").read_text(encoding="utf-8")[:50_000]


@pytest.mark.parametrize("vocab_size", [300, 1000])
def test_trained_tokenizer_has_exactly_vocab_size_ids_and_segments_greedily(english, vocab_size):
    tok = tokfx.train(english, "wordpiece", vocab_size=vocab_size)
    assert tok.vocab_size == vocab_size and tok.algorithm == "wordpiece"
    assert tok.segmenter == "greedy" and tok.segmenter_params["max_width"] >= 16
    assert tok.tokens[:256] == [(b,) for b in range(256)]
    assert tok.special_tokens == {EOT: vocab_size - 1}
    assert len(tok.merge_ids) == vocab_size - 257
    assert tok.decode(tok.encode(english)) == english
    counts = tokfx.count_pretokens(english, "gpt2")
    merges = reference_merges(byte_words(counts), BYTE_KEYS, 40)
    assert [(left, right) for left, right, _ in tok.merge_ids[:40]] == merges


def test_greedy_is_the_longest_prefix(english):
    tok = tokfx.train(english, "wordpiece", vocab_size=600)
    vocab = {token: i for i, token in sorted(tok.vocab.items(), reverse=True) if i < tok.vocab_size - 1}
    for piece in list(tokfx.count_pretokens(english[:3000], "gpt2"))[:300]:
        want, at = [], 0
        while at < len(piece):
            width = max(w for w in range(1, len(piece) - at + 1) if piece[at:at + w] in vocab)
            want.append(vocab[piece[at:at + width]])
            at += width
        assert tok.encode_ordinary(piece.decode("utf-8", "surrogateescape")) == want


def test_runs_out_with_a_short_vocabulary_warning():
    with pytest.warns(ShortVocabularyWarning, match="wordpiece: no pair left to merge"):
        tok = tokfx.train({b"abc": 3, b"d": 1}, "wordpiece", vocab_size=400, special_tokens=())
    assert tok.vocab_size == 258


def test_cjk_alphabet_save_load_and_determinism(tmp_path):
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[:5000] + "天下大势，分久必合，合久必分。" * 30
    tok = tokfx.train(text, "wordpiece", vocab_size=800, alphabet="cjk", special_tokens=())
    assert tok.vocab_size == 800 and tok.decode(tok.encode(text)) == text
    tok.save(tmp_path / "a")
    again = Tokenizer.load(tmp_path / "a")
    assert again.encode(text) == tok.encode(text) and again.segmenter == "greedy"
    counts = tokfx.count_pretokens(text, "gpt2", ())
    shuffled = dict(reversed(list(counts.items())))
    tokfx.train(shuffled, "wordpiece", vocab_size=800, alphabet="cjk", special_tokens=()).save(tmp_path / "b")
    assert (tmp_path / "a" / "tokfx.json").read_bytes() == (tmp_path / "b" / "tokfx.json").read_bytes()


def test_command_line_trains_wordpiece(tmp_path):
    from tokfx.cli.main import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShortVocabularyWarning)
        main(["train", str(corpus), "-o", str(tmp_path / "tok"), "--algorithm", "wordpiece", "--vocab-size",
              "400", "-q"])
    tok = Tokenizer.load(tmp_path / "tok")
    assert tok.vocab_size == 400 and tok.segmenter == "greedy" and tok.algorithm == "wordpiece"
