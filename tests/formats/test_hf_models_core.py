"""The native cores of the tokenizer.json models (tokfx._hf_models: WordPiece, WordLevel,
Unigram) against their pure-Python twins (the models' `tokenize`, through encode_pieces_twin), on
random vocabularies (prefixes, multi-byte characters, tied scores, unknown runs, byte fallback,
with and without a ByteLevel before the model) and on the corpora through the shapes' own files;
against `tokenizers` itself for a byte-level WordPiece and Unigram (the shapes' tests in
test_huggingface.py hold the rest to `tokenizers`)."""
from __future__ import annotations

import json
from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as Reference
from tokenizers import models, pre_tokenizers

from conftest import corpus_text
from huggingface_files import write_shape
from tokfx import Tokenizer
from tokfx.formats.huggingface_models import huggingface_model
from tokfx.pre_tokenizers.byte_level import spell

_CHARS = "ab#é中\u0301"
PIECES = st.text(_CHARS, min_size=1, max_size=4)
SCORES = st.sampled_from([-1.0, -2.0, -1.5, -3.0, 0.0])  # few values: ties


def _words(data, pieces: list[str]) -> list[str]:
    """Pre-tokens, mostly made of the vocabulary's pieces (so that most segment), some not."""
    part = st.one_of(st.sampled_from(pieces), st.text(_CHARS + "xz", min_size=1, max_size=2)) if pieces else PIECES
    return data.draw(st.lists(st.lists(part, min_size=1, max_size=4).map("".join), max_size=8))


def _input(words: list[str]) -> tuple[bytes, array]:
    encoded = [w.encode("utf-8") for w in words]
    return b"".join(encoded), array("q", accumulate(map(len, encoded)))


def _same(model, data: bytes, ends: array) -> None:
    try:
        expected = model.encode_pieces_twin(data, ends)
    except ValueError:  # the model has no unknown token for a piece: the core stops
        assert model._core.encode(data, ends) is None
        with pytest.raises(ValueError, match="has no unknown token"):
            model.encode_pieces(data, ends)
        return
    assert model.encode_pieces(data, ends) == expected
    assert model.encode_pieces(data, ends, True).tolist() == expected  # from the cache now


def _spelled(pieces: list[str], byte_level: bool) -> list[str]:
    """After a ByteLevel the entries are spelled: those of the UTF-8 of the random pieces."""
    return [spell(p.encode("utf-8")) for p in pieces] if byte_level else pieces


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(PIECES, unique=True, max_size=24), data=st.data(), limit=st.integers(0, 10),
       prefix=st.sampled_from(["##", "", "é", "\u2581"]), unknown=st.booleans(), byte_level=st.booleans(),
       level=st.booleans())
def test_wordpiece_and_wordlevel_cores_are_their_twin(pieces, data, limit, prefix, unknown, byte_level, level):
    words = _words(data, pieces)
    pieces = _spelled(pieces + [prefix + p for p in pieces[::2]], byte_level)
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces))}
    if unknown:
        vocab.setdefault("[UNK]", len(vocab))
    spec = ({"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"} if level else
            {"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]", "continuing_subword_prefix": prefix,
             "max_input_chars_per_word": limit})
    _same(huggingface_model(spec, byte_level), *_input(words))


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(st.tuples(PIECES, SCORES), unique_by=lambda e: e[0], max_size=24), data=st.data(),
       unknown=st.sampled_from([None, 0, 1]), fallback=st.booleans(), byte_level=st.booleans(),
       missing=st.sets(st.integers(0, 255), max_size=40))
def test_unigram_core_is_its_twin(pieces, data, unknown, fallback, byte_level, missing):
    words = _words(data, [p for p, _ in pieces])
    vocab = [[p, s] for p, s in zip(_spelled([p for p, _ in pieces], byte_level), (s for _, s in pieces))]
    vocab = [["<unk>", 0.0], ["<s>", 0.0]] + [e for e in vocab if e[0] not in ("<unk>", "<s>")]
    if fallback:  # all the byte tokens but `missing`
        vocab += [[f"<0x{b:02X}>", -5.0] for b in range(256) if b not in missing]
    spec = {"type": "Unigram", "vocab": vocab, "unk_id": unknown, "byte_fallback": fallback}
    _same(huggingface_model(spec, byte_level), *_input(words))


@pytest.mark.parametrize("shape", ["bert-wordpiece", "word-level", "t5-unigram", "unigram-byte-fallback"])
@pytest.mark.parametrize("relative", ["english/wikitext2_test.txt", "chinese/shuihu.txt",
                                      "korean/nsmc_reviews_4M.txt"])
def test_cores_are_their_twin_on_corpora(tmp_path, shape, relative):
    tok = Tokenizer.load(write_shape(shape, tmp_path))
    model = tok.pipeline.model
    text = corpus_text(relative)[:200_000]
    for special, data, ends in tok.pipeline.segments(text):
        if special is None:
            assert model.encode_pieces(data, ends) == model.encode_pieces_twin(data, ends)


def _byte_level_file(model, tmp_path) -> str:
    reference = Reference(model)
    reference.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    return str(path)


_BYTE_LEVEL_TEXTS = ["Hello world, 12345 don't!", "中文字 ひらがな 한국어 é", "  \n\t x²³ 👩‍👩‍👧", "aaaa bbbb abab"]


@pytest.mark.parametrize("build", [
    lambda: models.WordPiece({"[UNK]": 0, "a": 1, "##a": 2, "b": 3, "##b": 4, "Ġ": 5, "Ġa": 6, "##Ġ": 7,
                              "ä": 8, "##¸": 9, "Ã": 10, "##©": 11}, unk_token="[UNK]", max_input_chars_per_word=6),
    lambda: models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5), ("Ġ", -2.0), ("Ġa", -2.5),
                            ("ä", -3.0), ("¸", -3.0)] + [(f"<0x{b:02X}>", -6.0) for b in range(256)], 0, True),
    lambda: models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("Ġ", -2.0)], 0, False),
], ids=["wordpiece", "unigram-byte-fallback", "unigram"])
def test_byte_level_models_give_the_ids_of_tokenizers(tmp_path, build):
    path = _byte_level_file(build(), tmp_path)
    reference, tok = Reference.from_file(path), Tokenizer.load(path)
    assert json.loads(open(path, encoding="utf-8").read())["pre_tokenizer"]["type"] == "ByteLevel"
    for text in _BYTE_LEVEL_TEXTS + [corpus_text("chinese/shuihu.txt")[:3000]]:
        assert tok.encode(text) == reference.encode(text, add_special_tokens=False).ids, text
