"""sentencepiece models without byte fallback (T5, ALBERT): a character outside the vocabulary is
the unknown piece, a run of them one unknown id, and the unknown piece decodes to " \u2047 ".
sentencepiece itself is the oracle: models it trains here (BPE and Unigram, nmt_nfkc and
identity rules) and small hand-written ones load into tokfx and encode and decode as it does,
and what tokfx saves loads back into both."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokfx
from conftest import CORPORA
from test_sentencepiece_tokenizer import SLICES, _model_file, spm_model, training_text  # noqa: F401 (a fixture)

spm = pytest.importorskip("sentencepiece")

# Characters that no training text here holds (so each is unknown), alone, in runs, next to
# spaces and to special tokens, among text of every script.
ABSENT = ["\U0001D518", "\u2C00", "\uA500\uA501", "\U0001F9FF\U0001F9FE\U0001F9FD", "\u16A0", "\u0F40\u0F41"]
TEXT = st.lists(st.one_of(
    st.characters(codec="utf-8"),  # every script, emoji, control characters
    st.sampled_from(ABSENT),
    st.sampled_from(["  ", " ", "\t", "\n", "\u3000", "▁", "<sep>", "<unk>", " \u2047 ", "\u2047", "ｶﾞ", "①",
                     "e\u0301", "the ", "众人", "吾輩", "영화", "😀", "\ufeff", "\r\n", "x"]),
), max_size=30).map("".join)


@pytest.fixture(scope="session", params=[("bpe", "nmt_nfkc"), ("bpe", "identity"), ("unigram", "nmt_nfkc"),
                                         ("unigram", "identity")], ids="-".join)
def unknown_model(request, training_text, tmp_path_factory):  # noqa: F811 (the fixture imported above)
    model_file = spm_model(tmp_path_factory.mktemp("models"), training_text, *request.param, byte_fallback=False)
    return model_file, spm.SentencePieceProcessor(model_file=model_file), tokfx.Tokenizer.from_sentencepiece(model_file)


def _same(processor, tokenizer, texts):
    """Ids and decoded text of each text, tokfx's against sentencepiece's."""
    ids = [tokenizer.encode(text) for text in texts]
    assert ids == processor.encode(texts)
    assert [tokenizer.decode(i) for i in ids] == processor.decode(ids)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_models_without_byte_fallback_encode_as_sentencepiece(unknown_model, text):
    _, processor, tokenizer = unknown_model
    _same(processor, tokenizer, [text])


def test_unknown_characters_become_the_unknown_id(unknown_model):
    """Runs of unknown characters are one id, apart where a space, a known character or a
    special token comes between (checked against sentencepiece, and that it does produce them)."""
    _, processor, tokenizer = unknown_model
    unk = processor.unk_id()
    texts = ["\u2C00", "\u2C00\u2C01\u2C02", "a\u2C00b", "\u2C00 \u2C00", "\u2C00  \u2C00", " \u2C00", "\u2C00 ",
             "\u2C00<sep>\u2C00", "<sep>\u2C00", "\u2C00<sep>", "\u2C00x\u2C00", "x \u2C00\u2C00 x", "\U0001F9FF\u2C00"]
    _same(processor, tokenizer, texts)
    assert processor.encode("\u2C00\u2C01\u2C02").count(unk) == 1  # the oracle joins the run
    assert processor.encode("\u2C00<sep>\u2C00").count(unk) == 2


def test_models_without_byte_fallback_encode_the_corpora_as_sentencepiece(unknown_model, training_text):  # noqa: F811
    _, processor, tokenizer = unknown_model
    lines = training_text.read_text(encoding="utf-8").splitlines()
    for name in SLICES:
        if (CORPORA / name).exists():
            lines += (CORPORA / name).read_text(encoding="utf-8")[-100_000:].splitlines()
    ids = [tokenizer.encode(line) for line in lines]
    assert ids == processor.encode(lines)
    sample = ids[::50]
    assert [tokenizer.decode(i) for i in sample] == processor.decode(sample)


def test_saved_and_exported_back(unknown_model, tmp_path):
    """tokfx.json (valid by its schema) loads back; tokenizer.model is the same model to
    sentencepiece: the same pieces, kinds and encoding."""
    model_file, processor, tokenizer = unknown_model
    note = tokenizer.save(tmp_path)
    assert (tmp_path / "tokenizer.model").exists() and not (tmp_path / "tokenizer.json").exists()
    assert note is None if tokenizer.segmenter != "bpe" else "no tokenizer.json" in note
    fastjsonschema = pytest.importorskip("fastjsonschema")
    schema = json.loads((Path(__file__).parents[2] / "schemas" / "tokfx.schema.json").read_text(encoding="utf-8"))
    fastjsonschema.compile(schema)(json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8")))
    loaded = tokfx.Tokenizer.load(tmp_path)
    exported = spm.SentencePieceProcessor(model_file=str(tmp_path / "tokenizer.model"))
    n = processor.get_piece_size()
    assert [exported.id_to_piece(i) for i in range(n)] == [processor.id_to_piece(i) for i in range(n)]
    for kind in ("is_unknown", "is_control", "is_unused", "is_byte"):
        assert [getattr(exported, kind)(i) for i in range(n)] == [getattr(processor, kind)(i) for i in range(n)]
    texts = ["a \u2C00\u2C01 b<sep>\U0001D518", "  \u16A0x", "众人 吾輩 영화 \uA500", "plain text"]
    _same(exported, loaded, texts)
    _same(processor, loaded, texts)


def test_the_unknown_piece_decodes_as_in_sentencepiece(unknown_model):
    """" \u2047 " as it is: first, last, twice, between pieces, next to a control piece."""
    _, processor, tokenizer = unknown_model
    unk, bos, word = processor.unk_id(), processor.bos_id(), processor.encode("the")
    for ids in ([unk], [unk, unk], [unk] + word, word + [unk], word + [unk] + word, [bos, unk] + word, []):
        assert tokenizer.decode(ids) == processor.decode(ids)


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
@pytest.mark.parametrize("fields", [{}, {"unk_surface": "<?>"}, {"unk_surface": ""}, {"unk_surface": "\u2581?\u2581"},
                                    {"treat_whitespace_as_suffix": True}], ids=str)
def test_small_models_without_byte_fallback(tmp_path, model_type, fields):
    """Hand-written models, no corpora needed: a custom unk_surface (written as it is, U+2581
    and all) and whitespace as suffix."""
    path = _model_file(tmp_path, ["▁", "a", "b", "▁a", "ab", "▁ab", "a▁"], byte_fallback=False, model_type=model_type,
                       **fields)
    processor = spm.SentencePieceProcessor(model_file=str(path))
    tokenizer = tokfx.Tokenizer.from_sentencepiece(path)
    texts = ["ab ab", "a b", "abc ☃", " ", "", "c", "cc", "c c", "  c  ", "acb", "ccab", "abcc", "☃☃ ab ☃"]
    _same(processor, tokenizer, texts)
    unk = processor.unk_id()
    for ids in ([unk], [unk, unk], [unk, 4], [4, unk], [unk, 4, unk]):
        assert tokenizer.decode(ids) == processor.decode(ids)


def test_unknown_alphabet_faults_in_tokfx_json_name_the_field(unknown_model, tmp_path):
    _, _, tokenizer = unknown_model
    tokenizer.save(tmp_path)
    saved = json.loads((tmp_path / "tokfx.json").read_text(encoding="utf-8"))
    for unknown, message in ((3, "alphabet.unknown: expected a string, got 3"),
                             ("?" * 257, "alphabet.unknown: a string of 257 characters: at most 256")):
        saved["alphabet"]["unknown"] = unknown
        (tmp_path / "tokfx.json").write_text(json.dumps(saved), encoding="utf-8")
        with pytest.raises(tokfx.TokenizerFileError, match=f": {message}"):
            tokfx.Tokenizer.load(tmp_path)
    saved["alphabet"].update(name="chars-cjk", groups=[57], unknown=" \u2047 ")
    (tmp_path / "tokfx.json").write_text(json.dumps(saved), encoding="utf-8")
    with pytest.raises(tokfx.TokenizerFileError, match="alphabet: the chars-cjk alphabet takes no unknown symbol"):
        tokfx.Tokenizer.load(tmp_path)
