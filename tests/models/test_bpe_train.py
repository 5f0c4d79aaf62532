"""The BPE merge loop (tokfx._bpe_train) against its pure-Python twin and the cs336 fixtures."""
import json
import random
from array import array

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe_inputs import SPECIAL, byte_words, packed, pretoken_counts, training_inputs
from conftest import corpus_text, fixture_path
from tokfx._bpe_train import train_merges
from tokfx.models.bpe.merge_loop import BYTE_KEYS, train_bpe_merges
from tokfx.progress import Progress
from tokfx.segmenters.bpe import merges_as_bytes, token_bytes
from tokfx.pre_tokenizers.byte_level import unicode_to_bytes
from tokfx.reference.bpe_train import count_pairs
from tokfx.reference.bpe_train import train_merges as reference_train_merges

def core_merges(word_counts, symbol_keys, num_merges):
    return train_merges(*packed(word_counts), list(symbol_keys), num_merges)



@settings(max_examples=400, deadline=None)
@given(training_inputs())
def test_core_equals_reference_on_random_inputs(case):
    word_counts, symbol_keys, num_merges = case
    assert core_merges(word_counts, symbol_keys, num_merges) == \
        reference_train_merges(word_counts, symbol_keys, num_merges)


@settings(max_examples=50, deadline=None)
@given(training_inputs(), st.randoms(use_true_random=False))
def test_word_order_does_not_matter(case, rng):
    word_counts, symbol_keys, num_merges = case
    shuffled = list(word_counts.items())
    rng.shuffle(shuffled)
    assert core_merges(dict(shuffled), symbol_keys, num_merges) == \
        reference_train_merges(word_counts, symbol_keys, num_merges)


def test_long_run_of_one_symbol():
    # 2**k-long runs exercise merges of a token with itself at every level.
    word_counts = {(0,) * 37: 3, (0,) * 64: 1, (1, 0, 0, 0, 1): 5}
    assert core_merges(word_counts, [b"a", b"b"], 30) == reference_train_merges(word_counts, [b"a", b"b"], 30)


def test_two_byte_keys_order_like_their_bytes():
    # A later alphabet passes 2-byte big-endian keys; symbol 2's key sorts above symbol 1's.
    symbol_keys = [(0).to_bytes(2, "big"), (0x1FF).to_bytes(2, "big"), (0x100).to_bytes(2, "big")]
    word_counts = {(0, 1): 4, (0, 2): 4}
    assert core_merges(word_counts, symbol_keys, 2) == [(0, 1), (0, 2)]
    assert reference_train_merges(word_counts, symbol_keys, 2) == [(0, 1), (0, 2)]


def test_stops_when_no_pair_is_left():
    word_counts = {(1, 2, 3): 2, (4,): 9}
    assert core_merges(word_counts, BYTE_KEYS, 50) == reference_train_merges(word_counts, BYTE_KEYS, 50)
    assert len(core_merges(word_counts, BYTE_KEYS, 50)) == 2


# ---- counts beyond 32 bits


@pytest.mark.parametrize("word_counts", [
    # One word's count wraps to 1 in 32 bits.
    {tuple(b"ab"): 2**32 + 1, tuple(b"cd"): 5},
    # Every word fits in 32 bits, the pair's total does not (it wraps to 0).
    {tuple(b"ab"): 2**31, tuple(b"xab"): 2**31, tuple(b"cd"): 7},
])
def test_counts_beyond_32_bits(word_counts):
    expected = reference_train_merges(word_counts, BYTE_KEYS, 1)
    # The case is only a test if 32-bit pair counts would have merged something else (with
    # byte keys, key order is id order, so (count, pair) is the tie rule).
    totals = count_pairs([(list(word), count) for word, count in word_counts.items()])
    best_in_32_bits = max(totals, key=lambda pair: (totals[pair] % 2**32, pair))
    assert [best_in_32_bits] != expected
    assert core_merges(word_counts, BYTE_KEYS, 1) == expected == [(ord("a"), ord("b"))]


# ---- real text


def emoji_text() -> str:
    """Korean reviews with emoji inserted (the shared corpora hold no emoji text)."""
    emoji = ["😀", "😂", "👍🏽", "❤️", "👨‍👩‍👧", "🇰🇷", "🎬", "🍿", "✨", "🤔"]
    rng = random.Random(0)
    lines = corpus_text("korean/nsmc_reviews_4M.txt")[:40_000].splitlines()
    return "\n".join(line + " " + "".join(rng.choices(emoji, k=rng.randint(1, 4))) for line in lines)


REAL_TEXTS = {
    "english": lambda: corpus_text("english/pg2701_moby_dick.txt")[:100_000],
    "chinese": lambda: corpus_text("chinese/hongloumeng.txt")[:17_000],
    "japanese": lambda: corpus_text("sentencepiece/wagahaiwa_nekodearu.txt")[:17_000],
    "korean": lambda: corpus_text("korean/nsmc_reviews_4M.txt")[:20_000],
    "emoji": emoji_text,
}


@pytest.mark.parametrize("language", REAL_TEXTS)
def test_core_equals_reference_on_real_text(language):
    counts = pretoken_counts(REAL_TEXTS[language]())
    assert train_bpe_merges(counts, 200) == reference_train_merges(byte_words(counts), BYTE_KEYS, 200)


# ---- conformance with the cs336 reference trainer


def gpt2_spelled_bytes(token: str) -> bytes:
    table = unicode_to_bytes()
    return bytes(table[char] for char in token)


def test_merges_and_vocab_match_cs336_reference():
    counts = pretoken_counts(fixture_path("corpus.en").read_text(encoding="utf-8"))
    merges = train_bpe_merges(counts, 500 - 256 - 1)

    with open(fixture_path("train-bpe-reference-merges.txt"), encoding="utf-8") as lines:
        expected_merges = [tuple(gpt2_spelled_bytes(part) for part in line.rstrip("\n").split(" "))
                           for line in lines]
    assert merges_as_bytes(merges) == expected_merges

    expected_vocab = json.loads(fixture_path("train-bpe-reference-vocab.json").read_text(encoding="utf-8"))
    expected_tokens = {gpt2_spelled_bytes(token) for token in expected_vocab if token != SPECIAL}
    assert len(expected_tokens) == 499
    assert set(token_bytes(merges)) == expected_tokens


# ---- the wrapper


def test_progress_is_reported_every_progress_every_merges_and_at_the_end():
    word_counts = {tuple(b"abcdefgh"): 1}
    calls = []
    merges = train_merges(*packed(word_counts), BYTE_KEYS, 10, progress=lambda *call: calls.append(call),
                          progress_every=3)
    assert len(merges) == 7
    assert calls == [(3, 10), (6, 10), (7, 10)]


def test_progress_lines_go_to_stderr(capsys):
    counts = pretoken_counts(fixture_path("corpus.en").read_text(encoding="utf-8"))
    train_bpe_merges(counts, 2000, progress=Progress())
    captured = capsys.readouterr()
    assert captured.out == ""
    *steps, last = captured.err.splitlines()
    assert [step.split(" merges,")[0] for step in steps] == ["bpe: 1,000/2,000", "bpe: 2,000/2,000"]
    assert all(regex.fullmatch(r"bpe: [\d,/]+ merges, [\d,]+ merges/s", step) for step in steps)
    assert regex.fullmatch(r"bpe: 2,000 merges in \d+\.\d\d s", last)


@pytest.mark.parametrize("symbols, offsets, counts", [
    (array("i", [0, 1]), array("q", [0, 1]), array("q", [1])),       # offsets end short
    (array("i", [0, 1]), array("q", [0, 2]), array("q", [1, 1])),    # one offset too few
    (array("i", [0, 1]), array("q", [0, 5, 2]), array("q", [1, 1])),  # an offset past the end
    (array("i", [0, 9]), array("q", [0, 2]), array("q", [1])),       # symbol outside alphabet
    (array("i", [0, 1]), array("q", [0, 2]), array("q", [0])),       # count below 1
])
def test_malformed_input_is_refused(symbols, offsets, counts):
    with pytest.raises(ValueError):
        train_merges(symbols, offsets, counts, [b"a", b"b"], 3)
