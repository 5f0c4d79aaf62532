"""A tokenizer pickles (multiprocessing, the pipeline's workers): the copy is the same tokenizer,
its canonical tokfx.json byte for byte and its ids on real text, whatever trained it and over
whichever alphabet. (Loaded files: tests/formats/test_huggingface.py, against `tokenizers`.)"""
from __future__ import annotations

import pickle

import pytest

import tokfx
from conftest import fixture_path
from tokfx.formats import tokfx_json
from tokfx.formats.tokfx_json import tokenizer_json_bytes

LINES = fixture_path("corpus.en").read_text(encoding="utf-8").splitlines()[:400]
TEXT = "\n".join(LINES[:50]) + " 中文字 ひらがな 한국어 👩‍👩‍👧 <|endoftext|> x"
CASES = {
    "bpe bytes": dict(algorithm="bpe", vocab_size=400),
    "bpe cjk": dict(algorithm="bpe", vocab_size=700, alphabet="cjk"),
    "bpe chars": dict(algorithm="bpe", vocab_size=400, alphabet="chars", pattern="sentencepiece"),
    "scaffold-bpe": dict(algorithm="scaffold-bpe", vocab_size=400),
    "unigram bytes": dict(algorithm="unigram", vocab_size=400),
    "unigram chars": dict(algorithm="unigram", vocab_size=400, alphabet="chars", pattern="sentencepiece"),
    "wordpiece": dict(algorithm="wordpiece", vocab_size=400),
    "pathpiece": dict(algorithm="pathpiece", vocab_size=400),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_pickled_tokenizer_is_the_same_tokenizer(name):
    tokenizer = tokfx.train(LINES, special_tokens=["<|endoftext|>"], **CASES[name])
    for original in (tokenizer, tokenizer.with_segmenter("greedy") if name == "bpe bytes" else tokenizer):
        copy = pickle.loads(pickle.dumps(original))
        assert tokenizer_json_bytes(copy) == tokenizer_json_bytes(original)
        assert copy.encode(TEXT) == original.encode(TEXT)
        assert copy.decode(copy.encode(TEXT)) == original.decode(original.encode(TEXT))


@pytest.mark.parametrize("algorithm, alphabet", [("unigram", "chars"), ("bpe", "bytes"), ("bpe", "chars")])
def test_saved_tokfx_json_is_the_canonical_bytes(algorithm, alphabet, tmp_path, monkeypatch):
    # save writes tokfx.json a part at a time (write_tokenizer_json; long lists in slices, here
    # of 7 items and of the default size): the bytes tokenizer_json_bytes makes whole, and
    # hashes, with non-ASCII text, scores and merges.
    text = fixture_path("corpus.en").read_text(encoding="utf-8")[:20_000] + "猫坐在垫子上。\n" * 20
    tok = tokfx.train(text, algorithm, vocab_size=500, alphabet=alphabet, special_tokens=["<|终|>"])
    for size in (tokfx_json.JSON_SLICE, 7):
        monkeypatch.setattr(tokfx_json, "JSON_SLICE", size)
        tok.save(tmp_path / str(size))
        assert (tmp_path / str(size) / "tokfx.json").read_bytes() == tokenizer_json_bytes(tok)
