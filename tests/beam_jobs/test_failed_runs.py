"""Runs that fail: they leave nothing that blocks the corrected command, say "the same command
again resumes it" only when it does, and --on-error=skip cannot hide a run that wrote nothing,
or rejected more than --max-rejected allows. What the terminal says and what manifest.json
records are the same counts."""
import json

import pytest

import tokfx
from pipeline_corpus import file_identities
from tokfx.cli.main import main
from tokfx.formats.documents import CorpusError

EOT = "<|endoftext|>"
TEXTS = [f"the cat number {i} sat on the mat" for i in range(5)]


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def corpus(tmp_path):
    return _jsonl(tmp_path / "docs.jsonl", [{"body": t} for t in TEXTS])


@pytest.fixture
def tokenizer(tmp_path):
    out = tmp_path / "tok"
    tokfx.train(TEXTS, vocab_size=280, special_tokens=[EOT]).save(out)
    return out


def _lines(capsys):
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_a_wrong_text_field_then_the_corrected_command_runs(tmp_path, corpus, capsys):
    out = tmp_path / "out"
    assert main(["run", str(corpus), "--output", str(out), "--vocab-size", "280"]) == 2
    lines = _lines(capsys)
    assert lines[-1] == f"tokfx: error: {corpus}:1: no 'text' field"
    assert not [line for line in lines if "resumes" in line or "incomplete" in line]
    # The corrected command, no --overwrite.
    assert main(["run", str(corpus), "--text-field", "body", "--output", str(out), "--vocab-size", "280",
                 "-q"]) == 0
    assert json.loads((out / "manifest.json").read_text())["totals"]["documents_written"] == 5


def test_an_empty_input_then_the_corrected_command_runs(tmp_path, tokenizer, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    out = tmp_path / "out"
    assert main(["encode", str(tokenizer), str(empty), "--output-dir", str(out)]) == 2
    assert _lines(capsys) == [f"tokfx: error: {empty}: empty file"]
    good = _jsonl(tmp_path / "good.jsonl", [{"text": t} for t in TEXTS])
    assert main(["encode", str(tokenizer), str(good), "--output-dir", str(out), "-q"]) == 0
    assert (out / "manifest.json").exists()


@pytest.mark.parametrize("case", ["input matches no file", "append-eos without an EOS"])
def test_a_refused_run_leaves_no_directory(tmp_path, corpus, case, capsys):
    out = tmp_path / "out"
    if case == "input matches no file":
        args = ["run", str(tmp_path / "none-*.jsonl"), "--output", str(out)]
    else:
        no_eos = tmp_path / "no-eos"
        tokfx.train(TEXTS, vocab_size=280, special_tokens=["<pad>"]).save(no_eos)
        args = ["encode", str(no_eos), str(corpus), "--text-field", "body", "--output-dir", str(out),
                "--append-eos"]
    assert main(args) == 2
    assert len(_lines(capsys)) == 1
    assert not out.exists()


def test_a_run_that_rejects_every_document_fails_without_a_manifest(tmp_path, corpus, tokenizer, capsys):
    out = tmp_path / "out"
    assert main(["encode", str(tokenizer), str(corpus), "--output-dir", str(out), "--on-error=skip",
                 "--max-rejected", "100%"]) == 2
    lines = _lines(capsys)
    assert lines[-1] == (f"tokfx: error: no document written (read 5 documents: 0 written, 5 rejected);"
                         f" the rejected records are in {out}/rejected/rejected.jsonl")
    assert not (out / "manifest.json").exists()
    assert len((out / "rejected" / "rejected.jsonl").read_text().splitlines()) == 5
    assert not [line for line in lines if "resumes" in line]


def test_training_on_nothing_fails(tmp_path, corpus, capsys):
    expected = ("tokfx: error: nothing to train on: the corpus gave no pre-token (no document, or every"
                " one empty or rejected)")
    assert main(["run", str(corpus), "--output", str(tmp_path / "out"), "--on-error=skip", "-q"]) == 2
    assert _lines(capsys) == [expected]
    assert main(["train", str(corpus), "-o", str(tmp_path / "tok"), "--on-error=skip", "-q"]) == 2
    assert _lines(capsys)[-1] == expected
    assert not (tmp_path / "tok").exists()
    with pytest.raises(CorpusError, match="nothing to train on"):
        tokfx.train(["", ""], vocab_size=280)


def _mixed(tmp_path):
    """4 good records and 1 without a text field, and a file of no known kind."""
    records = [{"text": t} for t in TEXTS]
    records[2] = {"body": TEXTS[2]}
    data = _jsonl(tmp_path / "mixed.jsonl", records)
    (tmp_path / "notes.md").write_text("not a corpus")
    return [str(data), str(tmp_path / "notes.md")]


def test_more_rejected_than_max_rejected_fails_and_a_larger_limit_resumes(tmp_path, tokenizer, capsys):
    out = tmp_path / "out"
    args = ["encode", str(tokenizer), *_mixed(tmp_path), "--output-dir", str(out), "--on-error=skip"]
    # 1 document and 1 file of 5 + 1 read: a third, more than the default 10 %.
    assert main(args) == 2
    assert _lines(capsys)[-1] == (
        "tokfx: error: more rejected than --max-rejected 10% allows (read 5 documents: 4 written,"
        f" 1 rejected; 1 file rejected); the rejected records are in {out}/rejected/rejected.jsonl;"
        " fix the input, or raise --max-rejected")
    assert not (out / "manifest.json").exists()
    shards = file_identities(out)
    assert shards
    assert main([*args, "--max-rejected", "2"]) == 0  # a count: 2 rejected are allowed
    assert file_identities(out) == shards, "the shards of the refused run are kept"
    assert json.loads((out / "manifest.json").read_text())["config"]["max_rejected"] == "2"


def test_the_summary_and_the_manifest_count_the_same(tmp_path, tokenizer, capsys):
    out = tmp_path / "out"
    none = str(tmp_path / "none-*.jsonl")
    assert main(["encode", str(tokenizer), *_mixed(tmp_path), none, "--output-dir", str(out),
                 "--on-error=skip", "--max-rejected", "50%"]) == 0
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    assert (totals["documents_read"], totals["documents_written"], totals["documents_rejected"],
            totals["files_rejected"]) == (5, 4, 1, 2)
    assert "read 5 documents: 4 written, 1 rejected; 2 files rejected" in _lines(capsys)
    assert len((out / "rejected" / "rejected.jsonl").read_text().splitlines()) == 3


@pytest.mark.parametrize("limit", ["1.5", "-1", "150%", "ten"])
def test_a_max_rejected_that_is_no_count_or_share_is_refused(tmp_path, corpus, limit, capsys):
    with pytest.raises(SystemExit):
        main(["run", str(corpus), "--output", str(tmp_path / "out"), "--max-rejected", limit])
    assert "expected a count like 100 or a share like 10%" in capsys.readouterr().err
