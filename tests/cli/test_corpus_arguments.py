"""The corpus a command reads is the one named on its command line: positional corpus files,
--input patterns, or both, in every command that takes a corpus (tokfx run, count, encode
--output-dir as tokfx train and encode do); the sample corpus shipped with tokfx only when none
is named, said on the first line; tokfx encode --output-dir without a corpus is an error.

The corpus here is one whose pre-tokens are known by hand, unlike the sample corpus's."""
import json

import pytest

from pipeline_corpus import read_shards
from tokfx import Tokenizer
from tokfx.cli.main import main
from tokfx.formats.counts import read_counts

EOT = "<|endoftext|>"
# GPT-2's pattern cuts "hello world" into b"hello" and b" world".
TEXTS = ["hello world"] * 3 + ["hello"] * 2


@pytest.fixture
def corpus(tmp_path):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[:3]))
    second.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS[3:]))
    return first, second


@pytest.fixture
def tokenizer(tmp_path, corpus):
    out = tmp_path / "tok"
    assert main(["train", str(corpus[0]), "-o", str(out), "--vocab-size", "260", "-q"]) == 0
    return out


def _sources(out):
    return sorted({row["source"].rsplit(":", 1)[0] for row in read_shards(out)})


@pytest.mark.parametrize("form", ["tokenizer first", "output-dir first"])
def test_encode_output_dir_reads_the_positional_files(tmp_path, corpus, tokenizer, form):
    out = tmp_path / "out"
    head = ([str(tokenizer), "--output-dir", str(out)] if form == "tokenizer first"
            else ["--output-dir", str(out), str(tokenizer)])
    assert main(["encode", *head, str(corpus[0]), "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["inputs"] == [str(corpus[0])]
    assert manifest["totals"]["documents_written"] == 3
    assert _sources(out) == [str(corpus[0])]
    tok = Tokenizer.load(tokenizer)
    assert [row["input_ids"] for row in read_shards(out)] == [tok.encode(t) for t in TEXTS[:3]]


def test_positional_files_and_input_are_read_together(tmp_path, corpus, tokenizer):
    out = tmp_path / "out"
    assert main(["encode", str(tokenizer), str(corpus[0]), "--output-dir", str(out), "--input",
                 str(corpus[1]), "-q"]) == 0
    assert _sources(out) == sorted(map(str, corpus))
    run = tmp_path / "run"
    assert main(["run", str(corpus[1]), "--input", str(corpus[0]), "--output", str(run),
                 "--vocab-size", "260", "-q"]) == 0
    assert _sources(run) == sorted(map(str, corpus))


@pytest.mark.parametrize("form", ["positional", "--input", "--input="])
def test_count_reads_the_named_files(tmp_path, corpus, form):
    counts = tmp_path / "counts.parquet"
    named = {"positional": [str(corpus[0])], "--input": ["--input", str(corpus[0])],
             "--input=": [f"--input={corpus[0]}"]}[form]
    assert main(["count", *named, "--output", str(counts), "-q"]) == 0
    assert dict(read_counts(counts)) == {b"hello": 3, b" world": 3}


def test_encode_output_dir_without_a_corpus_is_an_error(tmp_path, tokenizer, capsys):
    out = tmp_path / "out"
    assert main(["encode", str(tokenizer), "--output-dir", str(out)]) == 2
    assert capsys.readouterr().err == ("tokfx: error: tokfx encode --output-dir: no corpus given: name its"
                                       " files after the tokenizer, or --input PATTERN\n")
    assert not out.exists()


def test_the_sample_corpus_is_read_only_when_none_is_named_and_the_first_line_says_so(tmp_path, capsys):
    assert main(["count", "--output", str(tmp_path / "counts.parquet")]) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first == ("tokfx: no corpus given: reading the sample corpus shipped with tokfx (4 files;"
                     " corpus files or --input PATTERN name yours)")


def test_an_unknown_one_dash_flag_is_an_error_not_a_corpus_file(tmp_path, corpus, capsys):
    # Beam's parser drops `-o` with a warning; its value would have become a corpus file.
    assert main(["run", str(corpus[0]), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == "tokfx: error: unknown option -o (tokfx run --help lists them)\n"
    assert not (tmp_path / "out").exists()
