"""Hugging Face tokenizer.json files loaded by tokfx against `tokenizers` itself, the oracle: the
same ids for `encode(text, add_special_tokens=False)` (and with `encode_special_tokens` for
tokfx's encode_ordinary) and the same decode, on fuzz and on the corpora; saved as tokfx.json and
exported back to tokenizer.json with the same ids; every refused component one line naming it."""
from __future__ import annotations

import base64
import json
import pickle
import random
import re
from pathlib import Path

import fastjsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Regex
from tokenizers import Tokenizer as Reference
from tokenizers import normalizers

import tokfx
from tokfx import Tokenizer
from conftest import ASSIGNED, corpus_text
from huggingface_files import SHAPES, sentencepiece_unigram, write_shape
from tokfx.normalizers.huggingface import huggingface_normalizer

# Pieces that stress what each stage decides: added-token look-alikes and neighbours,
# whitespace runs, digits, contractions, combining marks, scripts, emoji sequences.
_PIECES = ["<|endoftext|>", "<|endoftext|", "<|im_start|>", "<tool_call>", "<s>", "</s>", "<unk>", "<mask>",
           "word", "words", " word ", "[CLS]", ">>TITLE<<", "<fim_prefix>", "<|begin_of_text|>", "Hello",
           "ΣΑΣ", "σας", "   ", "\t\t", " \n\n ", "\r\n", "\u00a0", "\u3000", "12345", "٣٤٥", "don't", "I'LL",
           "e\u0301", "caf\u00e9", "ß", "ﬁ", "中文字", "ひらがな", "カタカナ", "한국어", "👩‍👩‍👧", "🇫🇷", "\u200d",
           "▁", "▁▁", "...", "!?", "$%^", "_", "a", "Z"]
TEXTS = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(ASSIGNED, max_size=6)), max_size=12).map("".join)


@pytest.fixture(scope="module", params=sorted(SHAPES))
def shape(request, tmp_path_factory):
    """(name, reference tokenizer, tokfx tokenizer) of one tokenizer.json shape."""
    path = write_shape(request.param, tmp_path_factory.mktemp(request.param))
    reference = Reference.from_file(str(path))
    return request.param, reference, Tokenizer.load(path)


def _same(reference: Reference, tok: Tokenizer, text: str) -> None:
    expected = reference.encode(text, add_special_tokens=False).ids
    assert tok.encode(text) == expected, text
    assert tok.encode_to_array(text).tolist() == expected
    assert tok.decode(expected) == reference.decode(expected, skip_special_tokens=False), text
    reference.encode_special_tokens = True
    try:
        assert tok.encode_ordinary(text) == reference.encode(text, add_special_tokens=False).ids, text
        assert tok.encode_to_array(text, ordinary=True).tolist() == tok.encode_ordinary(text)
    finally:
        reference.encode_special_tokens = False


@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_fuzz_gives_the_ids_and_text_of_tokenizers(shape, text):
    _, reference, tok = shape
    _same(reference, tok, text)


_CORPORA = ["english/wikitext2_test.txt", "chinese/shuihu.txt", "korean/nsmc_reviews_4M.txt",
            "sentencepiece/wagahaiwa_nekodearu.txt"]


def test_corpora_give_the_ids_of_tokenizers(shape):
    _, reference, tok = shape
    rng = random.Random(0)
    for name in _CORPORA:
        text = corpus_text(name)[:400_000]
        for start in rng.sample(range(len(text)), 150):
            _same(reference, tok, text[start:start + rng.randint(1, 2000)])


def test_what_was_loaded_is_said(shape):
    name, reference, tok = shape
    assert tok.source["format"] == "huggingface" and len(tok.source["sha256"]) == 64
    assert tok.vocab_size == reference.get_vocab_size(with_added_tokens=True)
    if name in ("llama2", "mistral", "llama3"):
        assert tok.framing.add_bos and tok.bos_id == reference.encode("x").ids[0]
    if name in ("bert-like", "bert-wordpiece"):
        ids = reference.encode("x").ids
        assert (tok.bos_id, tok.eos_id) == (ids[0], ids[-1])
    if name in ("t5-unigram", "unigram-byte-fallback"):
        assert not tok.framing.add_bos and tok.framing.add_eos and tok.eos_id == reference.encode("x").ids[-1]


def test_saved_and_exported_files_give_the_same_ids(shape, tmp_path):
    _, reference, tok = shape
    assert tok.save(tmp_path) is None
    schema = json.loads((Path(tokfx.__file__).parent / "schemas" / "tokfx.schema.json").read_text(encoding="utf-8"))
    fastjsonschema.compile(schema)(json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8")))
    again, exported = Tokenizer.load(tmp_path / "tokfx.json"), Reference.from_file(str(tmp_path / "tokenizer.json"))
    assert again.framing == tok.framing
    rng = random.Random(1)
    text = corpus_text("english/wikitext2_test.txt")[:100_000] + "".join(_PIECES)
    for start in rng.sample(range(len(text)), 200):
        piece = text[start:start + rng.randint(1, 300)]
        expected = reference.encode(piece, add_special_tokens=False).ids
        assert again.encode(piece) == expected
        assert exported.encode(piece, add_special_tokens=False).ids == expected


def test_a_pickled_tokenizer_gives_the_ids_of_tokenizers(shape):
    _, reference, tok = shape
    again = pickle.loads(pickle.dumps(tok))
    assert again.source == tok.source and again.framing == tok.framing
    for text in _PIECES + ["".join(_PIECES), corpus_text("english/wikitext2_test.txt")[:20_000]]:
        _same(reference, again, text)


def _edited(tmp_path, name: str, edit) -> str:
    path = write_shape(name, tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(tokfx.TokenizerFileError) as info:
        Tokenizer.load(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def _set(path: str, value):
    def edit(doc):
        *keys, last = path.split(".")
        for key in keys:
            doc = doc[int(key)] if key.isdigit() else doc[key]
        doc[int(last) if last.isdigit() else last] = value
    return edit


@pytest.mark.parametrize("name, edit, message", [
    ("qwen2", _set("normalizer", {"type": "Precompiled", "precompiled_charsmap": ""}),
     "normalizer.precompiled_charsmap: 0 bytes: shorter than its header"),
    ("qwen2", _set("normalizer", {"type": "Precompiled", "precompiled_charsmap": "not base64!"}),
     "normalizer.precompiled_charsmap: expected the charsmap in base64"),
    ("qwen2", _set("normalizer", {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "}),
     "normalizer.pattern: .*Replace of a"),
    ("qwen2", _set("normalizer", {"type": "Replace", "pattern": {"Regex": "a|b"}, "content": " "}),
     "normalizer.pattern: .*Replace of a"),
    ("qwen2", _set("normalizer", {"type": "Replace", "pattern": {"Regex": " *"}, "content": " "}),
     "normalizer.pattern: .*cannot match the empty text"),
    ("qwen2", _set("pre_tokenizer.pretokenizers.0", {"type": "UnicodeScripts"}),
     r"pre_tokenizer.pretokenizers\[0\]: the pre-tokenizer 'UnicodeScripts' is not supported"),
    ("qwen2", _set("pre_tokenizer.pretokenizers.0.behavior", "Sideways"), "behavior: expected one of"),
    ("qwen2", _set("pre_tokenizer.pretokenizers.0.pattern", {"Regex": "(a|aa)+$" * 2000}), "pattern.Regex"),
    ("qwen2", _set("model.type", "CharPiece"), "model.type: the model \"CharPiece\" is not supported"),
    ("qwen2", _set("model.dropout", 0.1), "model.dropout: is 0.1"),
    ("qwen2", _set("model.continuing_subword_prefix", "##"),
     r"model.merges\[0\]: cutting the continuing_subword_prefix's 2 bytes off 't' leaves no text"),
    ("quicktour-bpe", _set("model.end_of_word_suffix", 7), "model.end_of_word_suffix: expected null or a string"),
    ("quicktour-bpe", _set("model.merges.0", "a"), r"model.merges\[0\]: expected \"left right\""),
    ("quicktour-bpe", _set("model.fuse_unk", "yes"), "model.fuse_unk: expected true or false"),
    ("openai-gpt-like", _set("decoder.suffix", 3), "decoder.suffix: expected a string"),
    ("qwen2", _set("model.merges.5", "Ġ xyz-not-there"), r"model.merges\[5\]: \"xyz-not-there\" is not in"),
    ("qwen2", _set("added_tokens.0.id", 7), r"added_tokens\[0\].id: 7, where tokenizers gives"),
    ("qwen2", _set("added_tokens.1.lstrip", "yes"), r"added_tokens\[1\].lstrip: expected true or false"),
    ("qwen2", _set("decoder", {"type": "CTC"}), "decoder: the decoder 'CTC' is not supported"),
    ("qwen2", _set("post_processor", {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>"}},
                                                                             {"Sequence": {"id": "A"}}]}),
     "post_processor: adds \"<x>\", which is not an added token"),
    ("llama2", lambda doc: doc["model"]["vocab"].pop("<0x41>") and doc["model"]["vocab"].update({"zz": 10**5}),
     "model.vocab: its ids must be"),
    ("word-level", lambda doc: doc["model"]["vocab"].update({"zz": 10**5}), "model.vocab: its ids must be"),
    ("bert-wordpiece", _set("model.max_input_chars_per_word", -1), "model.max_input_chars_per_word: expected a"),
    ("bert-wordpiece", _set("model.continuing_subword_prefix", None), "model.continuing_subword_prefix: expected"),
    ("bert-wordpiece", _set("model.dropout", 0.1), "model.dropout: not a field of a WordPiece model"),
    ("bert-wordpiece", _set("decoder.cleanup", "yes"), "decoder: expected a prefix .* and cleanup true or false"),
    ("t5-unigram", _set("model.unk_id", 10**6), "model.unk_id: expected null or an id in 0..999"),
    ("t5-unigram", _set("model.vocab.5", ["x", "-inf"]), r"model.vocab\[5\]: expected \[piece, finite score\]"),
    ("t5-unigram", _set("model.vocab.5", ["</s>", -3.0]), r"model.vocab\[5\]: '</s>' is listed twice"),
    ("t5-unigram", _set("model.vocab.5", ["", -3.0]), r"model.vocab\[5\]: an empty token"),
    ("t5-unigram", _set("model.byte_fallback", 1), "model.byte_fallback: expected true or false"),
])
def test_each_refused_component_is_one_line_naming_it(tmp_path, name, edit, message):
    assert re.search(message, _edited(tmp_path, name, edit))


def test_a_byte_level_vocabulary_missing_a_byte_is_refused(tmp_path):
    def edit(doc):
        vocab = doc["model"]["vocab"]
        spelled = next(p for p, i in vocab.items() if i == 0)
        vocab[spelled + "\u0100\u0100"] = vocab.pop(spelled)
        doc["model"]["merges"] = []
    assert "model.vocab: byte 0x21 has no token of its own" in _edited(tmp_path, "qwen2", edit)


def test_a_directory_holding_tokenizer_json_loads_it(tmp_path):
    write_shape("qwen2", tmp_path).rename(tmp_path / "tokenizer.json")
    tok = Tokenizer.load(tmp_path)
    assert tok.source["file"] == str(tmp_path / "tokenizer.json")
    assert tok.encode("<|im_start|>hi") == Reference.from_file(str(tmp_path / "tokenizer.json")).encode(
        "<|im_start|>hi", add_special_tokens=False).ids



def test_tokenizer_config_beside_the_file_names_the_eos(tmp_path):
    write_shape("qwen2", tmp_path).rename(tmp_path / "tokenizer.json")
    assert Tokenizer.load(tmp_path).framing.eos is None
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": None, "eos_token": {"content": "<|im_end|>", "lstrip": False}}), encoding="utf-8")
    tok = Tokenizer.load(tmp_path)
    assert (tok.framing.eos, tok.framing.add_eos, tok.eos_id) == ("<|im_end|>", False, tok.special_tokens["<|im_end|>"])
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>"}), encoding="utf-8")
    with pytest.raises(tokfx.TokenizerFileError, match="tokenizer_config.json: eos_token: \"</s>\" is not an added"):
        Tokenizer.load(tmp_path)


@pytest.mark.parametrize("name, field, value, text", [
    ("bert-wordpiece", "unk_token", "[NONE]", "\u2603"),
    ("word-level", "unk_token", "<none>", "zzzzqqq"),
    ("t5-unigram", "unk_id", None, "\u2603"),
    ("quicktour-bpe", "unk_token", "[NONE]", "\u2603"),
])
def test_a_model_without_its_unknown_token_fails_where_tokenizers_fails(tmp_path, name, field, value, text):
    path = write_shape(name, tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["model"][field] = value
    path.write_text(json.dumps(doc), encoding="utf-8")
    reference, tok = Reference.from_file(str(path)), Tokenizer.load(path)
    assert tok.encode("the") == reference.encode("the", add_special_tokens=False).ids
    with pytest.raises(Exception):
        reference.encode(text, add_special_tokens=False)
    with pytest.raises(ValueError, match="has no unknown token"):
        tok.encode(text)


def _with_byte_tokens(model: dict) -> None:
    for b in range(256):
        model["vocab"].setdefault(f"<0x{b:02X}>", len(model["vocab"]))
    model["byte_fallback"] = True


@pytest.mark.parametrize("name, edit", [
    ("quicktour-bpe", lambda model: model.update(unk_token=None)),  # an unknown character is dropped
    ("quicktour-bpe", lambda model: model.update(fuse_unk=False)),
    ("quicktour-bpe", _with_byte_tokens),
    ("subword-prefix-bpe", _with_byte_tokens),  # the prefix's bytes fall back too
    ("subword-prefix-bpe", lambda model: model.update(ignore_merges=True, fuse_unk=True)),
    ("openai-gpt-like", lambda model: model.update(dropout=0.0)),
    ("llama2", lambda model: model.update(byte_fallback=False)),  # its <unk> for what it lacks
])
def test_the_options_of_a_bpe_over_characters_give_the_ids_of_tokenizers(tmp_path, name, edit):
    path = write_shape(name, tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc["model"])
    path.write_text(json.dumps(doc), encoding="utf-8")
    reference, tok = Reference.from_file(str(path)), Tokenizer.load(path)
    rng = random.Random(2)
    text = corpus_text("english/wikitext2_test.txt")[:50_000] + corpus_text("chinese/shuihu.txt")[:5_000]
    for piece in _PIECES + [text[s:s + rng.randint(1, 400)] for s in rng.sample(range(len(text)), 150)]:
        _same(reference, tok, piece + " \u2603\u2603x\u2603 " + piece)


def test_the_huggingface_segmenter_needs_the_model_it_was_read_with(tmp_path):
    tok = Tokenizer.load(write_shape("word-level", tmp_path))
    with pytest.raises(ValueError, match="only a tokenizer loaded from one has it"):
        Tokenizer(tok.tokens, [], {}, alphabet=tok.alphabet, segmenter="huggingface")
    doc = json.loads(json.dumps(tokfx.formats.tokfx_json.tokenizer_to_dict(tok)))
    doc["tokens"][5], doc["tokens"][6] = doc["tokens"][6], doc["tokens"][5]
    with pytest.raises(tokfx.TokenizerFileError, match="tokens: they are not the pieces of the tokenizer.json's model"):
        Tokenizer.from_dict(doc)


def test_a_precompiled_grapheme_takes_the_rule_of_its_shortest_key():
    """spm_precompiled's transform: a cluster under 6 bytes whose first character has a rule is
    replaced whole by that rule (Ａ + U+0301 is "A", the mark dropped), as tokenizers does; a
    longer cluster character by character."""
    charsmap = sentencepiece_unigram(False).normalizer.precompiled_charsmap
    reference = normalizers.Precompiled(charsmap)
    ours = huggingface_normalizer({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()})
    assert ours.normalize("\uff21\u0301") == "A"
    for text in ["\uff21\u0301", "\uff21\u0301\u0302\u0303", "e\u0301", "\u2460\u20dd", "ｶﾞ", "\u1100\u1161\u11a8"]:
        assert ours.normalize(text) == reference.normalize_str(text), text


@pytest.mark.parametrize("pattern", [" {2,}", "a+", r"\.{2,3}", "ab?c", "x{2}", "é+ ", r"\[\]*"])
def test_a_regex_replace_of_literals_and_quantifiers_matches_as_oniguruma_does(pattern):
    for content in ["<>", " ", "", r"\1\g<0>\\"]:  # the content is inserted as it is, backslashes too
        reference = normalizers.Replace(Regex(pattern), content)
        ours = huggingface_normalizer({"type": "Replace", "pattern": {"Regex": pattern}, "content": content})
        for text in ["a  b   c    d", "aaa bab caa", "x....y..z.", "abc ac abbc", "xxxxx", "éé é", "[]]] [[", ""]:
            assert ours.normalize(text) == reference.normalize_str(text), (pattern, content, text)
