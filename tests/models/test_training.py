import json

import pytest

import tokfx
from conftest import fixture_path
from tokfx.pre_tokenizers.byte_level import unicode_to_bytes
from tokfx.models.base import ShortVocabularyWarning

EOT = "<|endoftext|>"


def _gpt2_bytes(s: str) -> bytes:
    table = unicode_to_bytes()
    return bytes(table[c] for c in s)


def test_train_bpe_matches_the_cs336_reference_merges_and_vocab():
    vocab, merges = tokfx.train_bpe(fixture_path("corpus.en"), 500, [EOT])
    lines = fixture_path("train-bpe-reference-merges.txt").read_text(encoding="utf-8").splitlines()
    reference = [tuple(_gpt2_bytes(part) for part in line.split(" ")) for line in lines if line]
    assert len(reference) == 243
    assert merges == reference
    ref_vocab = json.loads(fixture_path("train-bpe-reference-vocab.json").read_text(encoding="utf-8"))
    expected = {EOT.encode() if k == EOT else _gpt2_bytes(k) for k in ref_vocab}
    assert set(vocab.values()) == expected
    assert len(vocab) == 500


def test_ids_are_bytes_then_merges_then_special_tokens():
    tok = tokfx.train(fixture_path("tinystories_sample.txt").read_text(encoding="utf-8"), vocab_size=280,
                      special_tokens=[EOT, "<pad>"])
    assert tok.vocab_size == 280
    assert [tok.id_to_token(i) for i in range(256)] == [bytes([b]) for b in range(256)]
    for rank, (left, right, merged) in enumerate(tok.merge_ids):
        assert merged == 256 + rank
    assert tok.special_tokens == {EOT: 278, "<pad>": 279}


def test_training_from_texts_equals_training_from_counts():
    texts = [fixture_path("tinystories_sample.txt").read_text(encoding="utf-8")]
    a = tokfx.train(texts, vocab_size=400, special_tokens=[EOT])
    b = tokfx.train(tokfx.count_pretokens(texts, "gpt2", [EOT]), vocab_size=400, special_tokens=[EOT])
    assert a.merges == b.merges and a.vocab == b.vocab


def test_a_vocab_smaller_than_the_alphabet_plus_specials_is_refused():
    with pytest.raises(ValueError, match="smaller than the alphabet"):
        tokfx.train("abc", vocab_size=256, special_tokens=[EOT])


def test_unknown_algorithm_is_refused():
    with pytest.raises(ValueError, match="unknown algorithm 'nope'; known: bpe"):
        tokfx.train("abc", algorithm="nope", vocab_size=300)


def test_training_stops_when_no_pair_is_left():
    with pytest.warns(ShortVocabularyWarning, match="^bpe: no pair left to merge: vocabulary 258 of the 1,000 asked for$"):
        tok = tokfx.train("ab", vocab_size=1000, special_tokens=[EOT])
    assert tok.merges == [(b"a", b"b")]
    assert tok.special_tokens == {EOT: 257}
