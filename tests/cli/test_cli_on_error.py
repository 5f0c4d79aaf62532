"""Bad input in the library commands: `tokfx train` and `tokfx eval` read their files through the
one error policy (--on-error). With skip the rejected records go beside the output and the
counts add up; with fail one line names the file and line. `tokfx encode` always fails."""
import json

import pytest

import tokfx
from tokfx.cli.main import main
from tokfx.formats.tokfx_json import tokenizer_json_bytes

EOT = "<|endoftext|>"
TEXTS = [f"Once upon a time cat number {i} sat on mat {i % 7}." for i in range(40)]


def _corpus(tmp_path):
    """A .txt of 20 documents (the 6th with a byte that is not UTF-8), a .jsonl of 20 records
    (lines 3 and 6 bad) and an empty .jsonl; (paths, good texts, rejected records by hand)."""
    txt_docs = [t.encode() for t in TEXTS[:20]]
    txt_docs[5] = b"Once upon a \xff time"
    txt = tmp_path / "stories.txt"
    txt.write_bytes(EOT.encode().join(txt_docs))
    bad_byte = sum(len(d) + len(EOT) for d in txt_docs[:5]) + len(b"Once upon a ")
    lines = [json.dumps({"text": t}) for t in TEXTS[20:]]
    lines[2], lines[5] = "{not json", json.dumps({"body": TEXTS[25]})
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_text("".join(line + "\n" for line in lines))
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    good = [t for i, t in enumerate(TEXTS) if i not in (5, 22, 25)]
    rejected = [
        {"file": str(empty), "line": None, "reason": "empty file"},
        {"file": str(jsonl), "line": 3, "reason": "not JSON (Expecting property name enclosed in double quotes)"},
        {"file": str(jsonl), "line": 6, "reason": "no 'text' field"},
        {"file": str(txt), "line": 1, "reason": f"not valid UTF-8 at byte {bad_byte}"},
    ]
    return [txt, jsonl, empty], good, rejected


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_train_skip_records_the_rejections_and_trains_on_the_rest(tmp_path, capsys):
    paths, good, rejected = _corpus(tmp_path)
    out = tmp_path / "out" / "tok"
    assert main(["train", *map(str, paths), "-o", str(out), "--vocab-size", "300",
                 "--on-error=skip"]) == 0
    err = capsys.readouterr().err
    assert _records(tmp_path / "out" / "tok.rejected.jsonl") == rejected
    assert (f"tokfx train: skipped 3 rejected documents and 1 rejected files; their records are in"
            f" {tmp_path / 'out' / 'tok.rejected.jsonl'}") in err.splitlines()
    # Documents read = used + rejected: 40 = 37 + 3.
    assert f"{len(good)} documents counted" in err.splitlines() and len(good) + 3 == len(TEXTS)
    expected = tokfx.train(good, "bpe", vocab_size=300, special_tokens=[EOT])
    assert (out / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)


def test_train_fails_by_default_with_one_line_naming_file_and_line(tmp_path, capsys):
    paths, _, rejected = _corpus(tmp_path)
    out = tmp_path / "tok"
    assert main(["train", *map(str, paths), "-o", str(out), "--vocab-size", "300", "-q"]) == 2
    txt = rejected[-1]
    assert capsys.readouterr().err == f"tokfx: error: {txt['file']}:1: {txt['reason']}\n"
    assert not out.exists() and not (tmp_path / "tok.rejected.jsonl").exists()


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("tok") / "bpe"
    tokfx.train(TEXTS, "bpe", vocab_size=300, special_tokens=[EOT]).save(out)
    return out


def test_eval_skip_records_the_rejections_and_evaluates_the_rest(tmp_path, tokenizer_dir, capsys):
    paths, good, rejected = _corpus(tmp_path)
    out = tmp_path / "report"
    assert main(["eval", str(tokenizer_dir), "--corpus", *map(str, paths), "-o", str(out),
                 "--on-error=skip", "--no-plots", "-q"]) == 0
    assert _records(tmp_path / "report.rejected.jsonl") == rejected
    assert (f"tokfx eval: skipped 3 rejected documents and 1 rejected files; their records are in"
            f" {tmp_path / 'report.rejected.jsonl'}\n") in capsys.readouterr().err
    corpus = json.loads((out / "metrics.json").read_text())["corpus"]
    assert corpus["documents"] + 3 == len(TEXTS)
    assert (corpus["documents"], corpus["bytes"]) == (len(good), sum(len(t.encode()) for t in good))


def test_eval_skip_with_nothing_left_still_says_why(tmp_path, tokenizer_dir, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["eval", str(tokenizer_dir), "--corpus", str(empty), "-o", str(tmp_path / "r"),
                 "--on-error=skip", "-q"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "tokfx: error: the evaluation corpus has no documents"
    assert _records(tmp_path / "r.rejected.jsonl") == [{"file": str(empty), "line": None, "reason": "empty file"}]


def test_eval_fails_by_default_with_one_line_naming_file_and_line(tmp_path, tokenizer_dir, capsys):
    paths, _, rejected = _corpus(tmp_path)
    assert main(["eval", str(tokenizer_dir), "--corpus", *map(str, paths), "-o", str(tmp_path / "r"),
                 "-q"]) == 2
    txt = rejected[-1]
    assert capsys.readouterr().err == f"tokfx: error: {txt['file']}:1: {txt['reason']}\n"


def test_a_file_of_another_suffix_is_refused(tmp_path, capsys):
    corpus = tmp_path / "corpus.en"
    corpus.write_text("\n".join(TEXTS))
    assert main(["train", str(corpus), "-o", str(tmp_path / "tok"), "-q"]) == 2
    assert capsys.readouterr().err == (f"tokfx: error: {corpus}: not a corpus file (.en): tokfx reads"
                                       " .jsonl, .jsonl.gz, .jsonl.zst, .json, .json.gz, .json.zst,"
                                       " .ndjson, .ndjson.gz, .ndjson.zst, .txt, .parquet\n")


def test_encode_reads_a_txt_file_as_one_document_and_fails_on_bad_input(tmp_path, tokenizer_dir, capsys):
    text = EOT.join(TEXTS[:3]) + "\n"
    txt = tmp_path / "a.txt"
    txt.write_text(text)
    assert main(["encode", str(tokenizer_dir), str(txt)]) == 0
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    tok = tokfx.Tokenizer.load(tokenizer_dir)
    assert record == {"source": str(txt), "input_ids": tok.encode(text)}
    assert record["input_ids"].count(tok.special_tokens[EOT]) == 2
    paths, _, rejected = _corpus(tmp_path)
    assert main(["encode", str(tokenizer_dir), str(paths[1])]) == 2
    assert capsys.readouterr().err == f"tokfx: error: {paths[1]}:3: {rejected[1]['reason']}\n"
    assert main(["encode", str(tokenizer_dir), str(paths[2])]) == 2
    assert capsys.readouterr().err == f"tokfx: error: {paths[2]}: empty file\n"
