"""tokfx.metrics on inputs small enough to compute by hand."""
import math

import pytest

import tokfx
from tokfx.alphabet import Alphabet
from tokfx.metrics import base_symbols_per_char, decode_errors, renyi_efficiency, token_counts, tokens_per_char

BYTES, CJK = Alphabet.named("bytes"), Alphabet.named("cjk")


def test_base_symbols_per_char():
    # 众唤众: 9 bytes; cjk: one prefix + 3 x (h2, h3) = 7 symbols.
    assert base_symbols_per_char("众唤众", BYTES) == 3
    assert base_symbols_per_char("众唤众", CJK) == pytest.approx(7 / 3)
    # 众認 straddles groups 0x39 and 0x3A: two prefixes, 6 symbols, no gain over bytes.
    assert base_symbols_per_char("众認", CJK) == 3
    # Two pre-tokens ("众", " 唤"): each starts with no prefix, so two prefixes: 3 + 4 symbols.
    assert base_symbols_per_char("众 唤", CJK) == pytest.approx(7 / 3)
    assert base_symbols_per_char("ab ʤ", CJK) == base_symbols_per_char("ab ʤ", BYTES) == 5 / 4


def test_tokens_per_char():
    tok = tokfx.train(["x"], vocab_size=516, alphabet="cjk")  # no merges: tokens are symbols
    assert tokens_per_char(tok, "众唤众") == pytest.approx(7 / 3)


def test_renyi_efficiency():
    assert renyi_efficiency({1: 5, 2: 5, 3: 5, 4: 5}, 4) == pytest.approx(1.0)
    assert renyi_efficiency({1: 1, 2: 1}, 4) == pytest.approx(0.5)  # log 2 / log 4, any alpha
    expected = math.log(0.75 ** 2.5 + 0.25 ** 2.5) / (1 - 2.5) / math.log(4)
    assert renyi_efficiency({7: 3, 9: 1}, 4) == pytest.approx(expected)
    assert renyi_efficiency({7: 3, 9: 1}, 4) == pytest.approx(0.31596, abs=1e-5)
    shannon = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(4)
    assert renyi_efficiency({7: 3, 9: 1, 8: 0}, 4, alpha=1) == pytest.approx(shannon)


def test_token_counts_and_decode_errors():
    assert token_counts([[1, 2], [2, 2]]) == {1: 1, 2: 3}
    tok = tokfx.train(["x"], vocab_size=516, alphabet="cjk")
    h3_alone, h2_alone = 384, 256
    # Each output is decoded on its own: an h2 at the end of one is not completed by the next.
    assert decode_errors(tok, [[h3_alone], tok.encode("众"), [512, h2_alone], [0xFF, 0x41]]) == 3


def test_undefined_metrics_are_refused():
    with pytest.raises(ValueError, match="empty text"):
        base_symbols_per_char("", CJK)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        renyi_efficiency({1: 3}, 1)
    with pytest.raises(ValueError, match="no tokens"):
        renyi_efficiency({}, 10)
