import json
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tokfx
from conftest import fixture_path
from tokfx import Tokenizer
from tokfx.cli.main import main

EOT = "<|endoftext|>"


def run_cli(*args):
    # Run outside the checkout, so that the installed tokfx (with its built extensions) is used.
    return subprocess.run([sys.executable, "-m", "tokfx.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=tempfile.gettempdir())


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "tok"
    assert main(["train", str(fixture_path("tinystories_sample.txt")), "-o", str(out),
                 "--vocab-size", "300", "-q"]) == 0
    return out


def test_train_writes_a_loadable_tokenizer(tokenizer_dir):
    tok = Tokenizer.load(tokenizer_dir)
    assert tok.vocab_size == 300 and tok.special_tokens == {EOT: 299}


def test_train_without_files_uses_the_sample_corpus(tmp_path):
    result = run_cli("train", "-o", tmp_path / "tok", "--vocab-size", "400")
    assert result.returncode == 0, result.stderr
    assert "sample corpus" in result.stderr and "merges" in result.stderr
    assert Tokenizer.load(tmp_path / "tok").vocab_size == 400


def test_encode_text_and_files(tokenizer_dir, tmp_path, capsys):
    tok = Tokenizer.load(tokenizer_dir)
    assert main(["encode", str(tokenizer_dir), "--text", "Once upon a time"]) == 0
    assert json.loads(capsys.readouterr().out) == tok.encode("Once upon a time")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "a dog"}\n{"text": "a cat"}\n', encoding="utf-8")
    assert main(["encode", str(tokenizer_dir), str(corpus), "-o", str(tmp_path / "ids.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "ids.jsonl").read_text().splitlines()]
    assert [r["input_ids"] for r in rows] == [tok.encode("a dog"), tok.encode("a cat")]
    assert [r["line"] for r in rows] == [1, 2]


def test_train_and_encode_read_parquet(tokenizer_dir, tmp_path, capsys):
    # The .txt fixture's documents as a FineWeb-like Parquet file: the same tokenizer.
    documents = [d for d in fixture_path("tinystories_sample.txt").read_text("utf-8").split(EOT) if d]
    corpus = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": documents, "id": [f"doc-{i}" for i in range(len(documents))],
                             "url": ["https://example.com/"] * len(documents)}),
                   corpus, row_group_size=max(1, len(documents) // 5))
    assert main(["train", str(corpus), "--vocab-size", "300", "--output", str(tmp_path / "tok"),
                 "-q"]) == 0
    assert (tmp_path / "tok" / "tokfx.json").read_bytes() == (tokenizer_dir / "tokfx.json").read_bytes()
    assert main(["encode", str(tokenizer_dir), str(corpus), "-o", str(tmp_path / "ids.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "ids.jsonl").read_text().splitlines()]
    tok = Tokenizer.load(tokenizer_dir)
    assert [r["input_ids"] for r in rows] == [tok.encode(d) for d in documents]
    assert [r["line"] for r in rows] == list(range(1, len(documents) + 1))


def test_inspect(tokenizer_dir):
    result = run_cli("inspect", tokenizer_dir)
    assert result.returncode == 0, result.stderr
    assert "vocab size:     300 (256 bytes + 43 merges + 1 special)" in result.stdout


def test_train_chars_with_sentencepiece_files_and_inspect(tmp_path):
    out = tmp_path / "spm"
    result = run_cli("train", fixture_path("tinystories_sample.txt"), "-o", out, "--vocab-size", "330",
                     "--alphabet", "chars", "--pattern", "sentencepiece", "--character-coverage", "1")
    assert result.returncode == 0, result.stderr
    assert {p.name for p in out.iterdir()} == {"tokfx.json", "tokenizer.model", "tokenizer.json"}
    # The tokenizer has no unknown token; the .model gets one at the end, which the note says.
    assert "<unk> added as id 330" in result.stderr
    tok = Tokenizer.load(out)
    assert tok.alphabet.name == "chars" and tok.decode(tok.encode(" Once  upon")) == " Once  upon"
    shown = run_cli("inspect", out).stdout
    assert f"alphabet:       chars, {len(tok.alphabet.characters)} characters" in shown


@pytest.mark.parametrize("args, message", [
    (["train", "missing.txt"], "missing.txt: no such file"),
    (["train", "--vocab-size", "100"], "vocab size 100 is smaller than the alphabet (256)"),
    (["train", "--pattern", "gpt5"], "unknown pattern name 'gpt5'"),
    (["inspect", "nowhere"], "no such tokenizer file"),
    (["train", "--character-coverage", "0.9"], "character_coverage given for the 'bytes' alphabet"),
    (["train", "--alphabet", "chars", "--character-coverage", "2"], "character_coverage must be a number in (0, 1]"),
    (["encode", "nowhere"], "nothing to encode"),
])
def test_errors_are_one_clear_line(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("tokfx: error: ") and message in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_help_lists_the_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("train", "encode", "inspect"):
        assert command in result.stdout


def test_train_pathpiece_and_encode_with_the_saved_segmenter(tmp_path):
    out = tmp_path / "pp"
    assert main(["train", str(fixture_path("tinystories_sample.txt")), "-o", str(out), "-q",
                 "--algorithm", "pathpiece", "--vocab-size", "400", "--initial-vocab", "ngram",
                 "--initial-size", "900", "--pattern", "firstspace", "--segmenter", "pathpiece-r",
                 "--seed", "4", "--max-width", "10"]) == 0
    tok = Tokenizer.load(out)
    assert (tok.algorithm, tok.vocab_size, tok.pattern) == ("pathpiece", 400, "firstspace")
    assert (tok.segmenter, tok.segmenter_params) == ("pathpiece-r", {"max_width": 10, "seed": 4})
    assert tok.params["initial_vocab"] == "ngram" and tok.params["initial_size"] == 900
    assert sorted(p.name for p in out.iterdir()) == ["tokfx.json"]
    text = "Once upon a time, a little dog ran."
    result = run_cli("encode", out, "--text", text)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == tok.encode(text)
    result = run_cli("encode", out, "--text", text, "--segmenter", "greedy")
    assert json.loads(result.stdout) == tok.with_segmenter("greedy").encode(text)


def test_train_pathpiece_with_random_ties(tmp_path):
    """--tie-break random --seed: the construction's rounds and the saved segmenter (pathpiece-r)
    draw with that seed; the same run again writes the same file."""
    argv = ["train", str(fixture_path("tinystories_sample.txt")), "-q", "--algorithm", "pathpiece",
            "--vocab-size", "400", "--initial-vocab", "ngram", "--initial-size", "900", "--pattern",
            "space-digit", "--tie-break", "random", "--seed", "5"]
    assert main([*argv, "-o", str(tmp_path / "a")]) == 0
    assert main([*argv, "-o", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "tokfx.json").read_bytes() == (tmp_path / "b" / "tokfx.json").read_bytes()
    tok = Tokenizer.load(tmp_path / "a")
    assert (tok.segmenter, tok.segmenter_params) == ("pathpiece-r", {"max_width": 16, "seed": 5})
    assert (tok.params["tie_break"], tok.params["seed"]) == ("random", 5)
    text = fixture_path("tinystories_sample.txt").read_text(encoding="utf-8")
    expected = tokfx.train(text, "pathpiece", vocab_size=400, pattern="space-digit", initial_vocab="ngram",
                           initial_size=900, tie_break="random", seed=5)
    assert tok.tokens == expected.tokens and tok.params == expected.params
    result = run_cli("encode", tmp_path / "a", "--text", "Once upon a time in 2024, a little dog ran.")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == tok.encode("Once upon a time in 2024, a little dog ran.")


def test_pathpiece_options_that_do_not_apply_are_refused(tmp_path):
    result = run_cli("train", fixture_path("tinystories_sample.txt"), "-o", tmp_path / "t",
                     "--initial-size", "900")
    assert result.returncode == 2 and "initial_size does not apply to algorithm 'bpe'" in result.stderr
    result = run_cli("train", fixture_path("tinystories_sample.txt"), "-o", tmp_path / "t",
                     "--algorithm", "pathpiece", "--seed", "3")
    assert result.returncode == 2
    assert "seed does not apply to algorithm 'pathpiece' (it applies only with tie_break 'random')" in result.stderr


@pytest.mark.parametrize("shape, normalizer, pre_tokenizer", [
    ("llama2", "Prepend > Replace", "none"),
    ("qwen2", "NFC", "Split("),
])
def test_inspect_a_tokenizer_json(tmp_path, shape, normalizer, pre_tokenizer):
    import hashlib

    import tokenizers
    from huggingface_files import write_shape

    path = write_shape(shape, tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    result = run_cli("inspect", path)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(":", 1) for line in result.stdout.splitlines())
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert lines["loaded from"].strip() == f"{path} (huggingface, sha256 {sha})"
    assert lines["normalizer"].strip() == normalizer
    assert lines["pre-tokenizer"].strip().startswith(pre_tokenizer)
    added = hf.get_added_tokens_decoder()
    special = ", ".join(f"{t.content}={i}" for i, t in sorted(added.items()) if t.special)
    assert lines["special tokens"].strip() == special
    plain = [f"{t.content}={i}" for i, t in sorted(added.items()) if not t.special]
    assert lines.get("added tokens", "").strip() == (f"{', '.join(plain)} (not special)" if plain else "")
    # What the tokenizer's post-processor adds around one sequence, as tokenizers adds it.
    bos = hf.encode("a").ids[0] if shape == "llama2" else None
    assert lines["framing"].strip() == (f"BOS <s>={bos} (added by default), EOS none" if bos is not None
                                        else "BOS none, EOS none")
