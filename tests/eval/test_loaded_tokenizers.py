"""The eval metrics of tokenizers loaded from a Hugging Face tokenizer.json, against `tokenizers`
reading the same file: the token counts, the base symbols before any merge, and `tokfx eval`."""
import json

import pytest
import tokenizers

import tokfx
from huggingface_files import write_shape
from pipeline_corpus import SOURCES, paragraphs
from tokfx.cli.main import main
from tokfx.eval.metrics import base_symbols_per_char
from tokfx.eval.report import evaluate

# A byte-level BPE behind a Split and an NFC normalizer, and a character BPE with byte fallback
# behind sentencepiece's normalizer (Prepend + Replace).
SHAPES = ("qwen2", "llama2")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hf")
    paths = {name: write_shape(name, directory) for name in SHAPES}
    return paths, {name: (tokfx.Tokenizer.load(path), tokenizers.Tokenizer.from_file(str(path)))
                   for name, path in paths.items()}


@pytest.fixture(scope="module")
def documents():
    # English, Chinese and Korean: characters outside llama2's small alphabet fall back to bytes.
    return [p for source in SOURCES for p in paragraphs(source, 3_000)]


def _oracle_symbols(hf: tokenizers.Tokenizer, text: str) -> int:
    """The base symbols `tokenizers` starts its merges from: a byte-level model's pre-tokens are
    spelled one character per byte; a byte-fallback model's characters are one symbol each when
    the vocabulary holds them, else their UTF-8 bytes."""
    normalized = hf.normalizer.normalize_str(text)
    if hf.pre_tokenizer is not None:
        return sum(len(piece) for piece, _ in hf.pre_tokenizer.pre_tokenize_str(normalized))
    return sum(1 if hf.model.token_to_id(c) is not None else len(c.encode()) for c in normalized)


@pytest.mark.parametrize("name", SHAPES)
def test_base_symbols_per_char_as_tokenizers_reads_the_text(loaded, documents, name):
    tok, hf = loaded[1][name]
    for text in documents:
        assert base_symbols_per_char(text, tokenizer=tok) * len(text) == pytest.approx(_oracle_symbols(hf, text))


def test_an_added_token_is_one_base_symbol(loaded):
    tok, _ = loaded[1]["qwen2"]
    assert base_symbols_per_char("<tool_call>", tokenizer=tok) == 1 / len("<tool_call>")


def test_corpus_metrics_count_the_ids_tokenizers_gives(loaded, documents):
    report = evaluate({name: tok for name, (tok, _) in loaded[1].items()}, documents)
    for name, (tok, hf) in loaded[1].items():
        ids = [hf.encode(text, add_special_tokens=False).ids for text in documents]
        metrics = report["tokenizers"][name]["metrics"]
        assert metrics["ctc"] == sum(map(len, ids))
        assert metrics["decode_errors"] == sum(hf.decode(i).count("\ufffd") for i in ids)
        assert metrics["unused_vocabulary_share"] == pytest.approx(
            1 - len({i for row in ids for i in row} - set(tok.special_tokens.values()))
            / (tok.vocab_size - len(tok.special_tokens)))


def test_tokfx_eval_reads_tokenizer_json_files(loaded, documents, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), encoding="utf-8")
    paths = loaded[0]
    assert main(["eval", *map(str, paths.values()), "--corpus", str(corpus), "-o", str(tmp_path / "r"),
                 "--no-plots", "-q"]) == 0
    report = json.loads((tmp_path / "r" / "metrics.json").read_text())
    _, hf = loaded[1]["llama2"]
    assert report["tokenizers"]["llama2.json"]["metrics"]["ctc"] == sum(
        len(hf.encode(d, add_special_tokens=False).ids) for d in documents)
