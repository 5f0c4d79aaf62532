"""The reader registry (a file's reader by its suffix), the one error policy, reading local
files through both, and the rejected-records file."""
import json

import pytest

from tokfx.formats.documents import CorpusError, Rejection
from tokfx.formats.readers import UNKNOWN, ReadOptions, jsonl, parquet, read_documents, reader_for, text
from tokfx.formats.readers.policy import FAIL, CollectingPolicy, ErrorPolicy
from tokfx.formats.rejected import rejected_beside, write_rejected

SEP = "<|endoftext|>"
KNOWN = (".jsonl, .jsonl.gz, .jsonl.zst, .json, .json.gz, .json.zst, .ndjson, .ndjson.gz, .ndjson.zst,"
         " .txt, .parquet")


@pytest.mark.parametrize("name, reader", [
    ("a.jsonl", jsonl.READER), ("dir/a.jsonl.gz", jsonl.READER), ("a.b.jsonl.zst", jsonl.READER),
    ("a.json", jsonl.READER), ("a.json.gz", jsonl.READER), ("a.json.zst", jsonl.READER),
    ("a.ndjson", jsonl.READER), ("a.ndjson.gz", jsonl.READER), ("a.ndjson.zst", jsonl.READER),
    ("A.JSONL", jsonl.READER), ("a.Json.GZ", jsonl.READER), ("a.NDJSON.Zst", jsonl.READER),
    ("a.txt", text.READER), ("gs://bucket/x.jsonl.txt", text.READER), ("a.Txt", text.READER),
    ("a.TXT", text.READER), ("a.parquet", parquet.READER), ("s3://b/000_00000.PARQUET", parquet.READER),
    ("a.txt.gz", UNKNOWN), ("a.parquet.gz", UNKNOWN), ("corpus.en", UNKNOWN), ("a.csv", UNKNOWN),
    ("README", UNKNOWN), ("a.jsonl.bz2", UNKNOWN), ("a.jsonlines", UNKNOWN), ("a.json5", UNKNOWN),
])
def test_a_file_is_read_by_the_reader_of_its_suffix_in_any_case(name, reader):
    assert reader_for(name) is reader


def test_text_and_parquet_can_be_read_in_ranges_and_nothing_else():
    assert [reader.name for reader in (jsonl.READER, text.READER, parquet.READER, UNKNOWN)
            if reader.ranges is not None] == ["text", "parquet"]


@pytest.mark.parametrize("name, suffix", [
    ("notes.md", ".md"), ("table.CSV", ".CSV"), ("a.txt.gz", ".txt.gz"), ("a.jsonl.bz2", ".jsonl.bz2"),
    ("v1.2.csv", ".csv"), ("README", "no suffix")])
def test_a_file_of_another_suffix_is_rejected_whole_naming_its_suffix(tmp_path, name, suffix):
    path = tmp_path / name
    path.write_text("plain text, but not named .txt")
    with open(path, "rb") as raw:
        assert list(reader_for(path).read(raw, str(path), ReadOptions(), None)) == [
            Rejection(str(path), None, f"not a corpus file ({suffix}): tokfx reads {KNOWN}",
                      whole_file=True)]


def test_fail_raises_the_rejection_as_one_line_and_skip_hands_it_back():
    rejection = Rejection("c.jsonl", 3, "not JSON (Expecting value)")
    with pytest.raises(CorpusError) as raised:
        FAIL.reject(rejection)
    assert str(raised.value) == "c.jsonl:3: not JSON (Expecting value)"
    assert ErrorPolicy("skip").reject(rejection) is rejection
    with pytest.raises(ValueError, match="on_error must be one of fail, skip, got 'ignore'"):
        ErrorPolicy("ignore")


def _corpus(tmp_path):
    """Three files: a .txt with a bad document, a .jsonl with a bad record, an empty .jsonl."""
    txt = tmp_path / "a.txt"
    # The bad byte is at 5 + 13 + 4 = 22, on line 1.
    txt.write_bytes(b"first" + SEP.encode() + b"bad \xff" + SEP.encode() + b"third")
    good = tmp_path / "b.jsonl"
    good.write_text('{"text": "fourth"}\n{"text": 5}\n{"text": "fifth"}\n')
    empty = tmp_path / "c.jsonl"
    empty.write_bytes(b"")
    return [txt, good, empty]


def test_read_documents_skips_and_collects_the_rejections_in_order(tmp_path):
    paths = _corpus(tmp_path)
    errors = CollectingPolicy("skip")
    texts = [d.text for d in read_documents(paths, ReadOptions(separators=(SEP,)), errors)]
    assert texts == ["first", "third", "fourth", "fifth"]
    assert errors.rejected == [
        Rejection(str(paths[0]), 1, "not valid UTF-8 at byte 22"),
        Rejection(str(paths[1]), 2, "field 'text' is int, not a string"),
        Rejection(str(paths[2]), None, "empty file", whole_file=True)]


def test_read_documents_fails_at_the_first_rejection(tmp_path):
    paths = _corpus(tmp_path)
    documents = read_documents(paths, ReadOptions(separators=(SEP,)), CollectingPolicy("fail"))
    assert next(documents).text == "first"
    with pytest.raises(CorpusError, match=rf"^{paths[0]}:1: not valid UTF-8 at byte 22$"):
        next(documents)


def test_read_documents_refuses_a_missing_file_before_reading_any(tmp_path):
    paths = _corpus(tmp_path)
    with pytest.raises(FileNotFoundError, match=f"{tmp_path / 'gone.txt'}: no such file"):
        next(read_documents([*paths, tmp_path / "gone.txt"], ReadOptions(), FAIL))
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}: not a file"):
        next(read_documents([tmp_path], ReadOptions(), FAIL))


def test_the_rejected_file_is_sorted_json_lines_with_the_counts(tmp_path):
    rejections = [Rejection("b.txt", None, "not valid UTF-8 at byte 9"),
                  Rejection("a.jsonl", 7, "not JSON (x)"),
                  Rejection("b.txt", 2, "not valid UTF-8 at byte 1"),
                  Rejection("a.jsonl", None, "truncated or corrupt after line 9 (x)", whole_file=True)]
    path = tmp_path / "out.rejected.jsonl"
    assert write_rejected(rejections, str(path)) == {"documents_rejected": 3, "files_rejected": 1}
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        {"file": "a.jsonl", "line": None, "reason": "truncated or corrupt after line 9 (x)"},
        {"file": "a.jsonl", "line": 7, "reason": "not JSON (x)"},
        {"file": "b.txt", "line": None, "reason": "not valid UTF-8 at byte 9"},
        {"file": "b.txt", "line": 2, "reason": "not valid UTF-8 at byte 1"}]
    assert write_rejected([], str(tmp_path / "none.jsonl")) == {"documents_rejected": 0, "files_rejected": 0}
    assert not (tmp_path / "none.jsonl").exists()


@pytest.mark.parametrize("output, beside", [("counts.parquet", "counts.parquet.rejected.jsonl"),
                                            ("out/tok/", "out/tok.rejected.jsonl"),
                                            ("gs://b/counts.parquet", "gs://b/counts.parquet.rejected.jsonl")])
def test_a_one_file_or_directory_output_has_its_rejected_records_beside_it(output, beside):
    assert rejected_beside(output) == beside
