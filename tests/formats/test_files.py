import json

import pytest
import tokenizers

import tokfx
from conftest import CORPUS_FILES, corpus_path, fixture_path
from tokfx import Tokenizer
from tokfx.formats.tokfx_json import tokenizer_hash

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    texts = [fixture_path("corpus.en").read_text(encoding="utf-8"),
             "你好，世界！你好吗？世界很大。" * 50, "🙂🙃 emoji 🙂🙂 " * 30]
    tok = tokfx.train(texts, vocab_size=1200, special_tokens=[EOT, "<pad>"])
    directory = tmp_path_factory.mktemp("tok")
    tok.save(directory)
    return tok, directory


def test_save_load_round_trip_is_exact(trained, tmp_path):
    tok, directory = trained
    loaded = Tokenizer.load(directory)
    assert loaded.vocab == tok.vocab and loaded.merge_ids == tok.merge_ids
    assert loaded.special_tokens == tok.special_tokens and loaded.pattern == tok.pattern
    loaded.save(tmp_path)
    assert (tmp_path / "tokfx.json").read_bytes() == (directory / "tokfx.json").read_bytes()
    assert tokenizer_hash(loaded) == tokenizer_hash(tok)


def test_saved_files(trained):
    _, directory = trained
    assert sorted(p.name for p in directory.iterdir()) == ["merges.txt", "tokenizer.json",
                                                           "tokfx.json", "vocab.json"]


def test_gpt2_files_round_trip(trained):
    tok, directory = trained
    again = Tokenizer.from_gpt2_files(directory / "vocab.json", directory / "merges.txt",
                                      [EOT, "<pad>"])
    assert again.vocab == tok.vocab and again.merges == tok.merges
    assert again.special_tokens == tok.special_tokens


def _texts():
    yield fixture_path("address.txt").read_text(encoding="utf-8")
    yield fixture_path("german.txt").read_text(encoding="utf-8")
    yield f"two{EOT}docs<pad> and  spaces \n\n 12345 ünïcödé 你好 🙂"
    for name in CORPUS_FILES:
        path = corpus_path(name)
        yield path.read_bytes().decode("utf-8")[:200_000]


def test_hugging_face_export_encodes_identically(trained):
    tok, directory = trained
    hf = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    for text in _texts():
        assert hf.encode(text).ids == tok.encode(text)


def test_a_custom_pattern_round_trips(tmp_path):
    tok = tokfx.train(["some text  here\n and more text"], vocab_size=270, pattern=r"\S+|\s+")
    tok.save(tmp_path)
    loaded = Tokenizer.load(tmp_path)
    assert loaded.pattern == r"\S+|\s+"
    assert loaded.encode("text here") == tok.encode("text here")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("merges"), "missing 'merges'"),
    (lambda d: d["tokens"].__setitem__(3, [256]), r"tokens\[3\]\[0\]: 256 is outside 0\.\.255"),
    (lambda d: d["tokens"].__setitem__(3, []), r"tokens\[3\]: 0 items: expected 1\.\."),
    (lambda d: d["tokens"].__setitem__(3, "x"), r"tokens\[3\]: expected an array or null, got \"x\""),
    (lambda d: d["tokens"].__setitem__(3, [-1]), r"tokens\[3\]\[0\]: -1 is outside 0\.\.255"),
    (lambda d: d["merges"].__setitem__(0, [1, 2, 3]), r"merges\[0\]: token 3 is not token 1 \+ token 2"),
    (lambda d: d.__setitem__("format_version", 99), "format_version"),
])
def test_broken_files_are_refused_with_a_clear_error(trained, tmp_path, edit, message):
    _, directory = trained
    doc = json.loads((directory / "tokfx.json").read_text(encoding="utf-8"))
    edit(doc)
    (tmp_path / "tokfx.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(tokfx.TokenizerFileError, match=message) as info:
        Tokenizer.load(tmp_path)
    assert str(info.value).startswith(str(tmp_path / "tokfx.json") + ": ")


def test_foreign_and_truncated_files_are_refused(trained, tmp_path):
    _, directory = trained
    with pytest.raises(tokfx.TokenizerFileError, match="neither a tokfx.json.*from_gpt2_files"):
        Tokenizer.load(directory / "vocab.json")
    with pytest.raises(tokfx.TokenizerFileError, match="tiktoken rank file.*from_tiktoken"):
        (tmp_path / "ranks.tiktoken").write_text("IQ== 0\nIg== 1\n")
        Tokenizer.load(tmp_path / "ranks.tiktoken")
    with pytest.raises(tokfx.TokenizerFileError, match="not a tokenizer file tokfx reads"):
        (tmp_path / "merges.txt").write_text("#version: 0.2\nh e\n")
        Tokenizer.load(tmp_path / "merges.txt")
    (tmp_path / "tokfx.json").write_bytes((directory / "tokfx.json").read_bytes()[:100])
    with pytest.raises(ValueError, match="not JSON"):
        Tokenizer.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        Tokenizer.load(tmp_path / "nowhere")
