"""GPT-2's byte <-> printable character table against GPT-2's own vocab.json."""
import json

from conftest import fixture_path
from tokfx.pre_tokenizers.byte_level import bytes_to_unicode, unicode_to_bytes


def test_single_byte_tokens_of_gpt2_vocab_are_the_table():
    vocab = json.loads(fixture_path("gpt2_vocab.json").read_text(encoding="utf-8"))
    single_bytes = sorted((token_id, token) for token, token_id in vocab.items() if token_id < 256)
    # GPT-2 numbers the printable bytes first, then the remapped ones in byte order.
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    byte_order = printable + [b for b in range(256) if b not in printable]
    assert [bytes_to_unicode()[b] for b in byte_order] == [token for _, token in single_bytes]


def test_space_and_newline_spellings():
    assert bytes_to_unicode()[ord(" ")] == "Ġ"
    assert bytes_to_unicode()[ord("\n")] == "Ċ"


def test_inverse():
    assert {char: b for b, char in bytes_to_unicode().items()} == unicode_to_bytes()
    assert sorted(unicode_to_bytes().values()) == list(range(256))
