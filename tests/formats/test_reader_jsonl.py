"""The JSON-lines reader (tokfx.formats.readers.jsonl): .jsonl, .json, .ndjson, each plain, .gz or
.zst, in any case."""
import gzip
import io
import json

import pytest
import zstandard

from tokfx.formats.documents import Document, Rejection
from tokfx.formats.readers import ReadOptions
from tokfx.formats.readers.jsonl import READER

DOCS = [{"text": "first doc"}, {"text": "второй 文書"}, {"text": ""}]


def _jsonl(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def _read(data: bytes, name: str = "c.jsonl", **options) -> list:
    return list(READER.read(io.BytesIO(data), name, ReadOptions(**options), None))


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst", ".json", ".json.gz",
                                    ".json.zst", ".ndjson", ".ndjson.gz", ".ndjson.zst", ".JSONL",
                                    ".Json.GZ", ".ndjson.ZST"])
def test_reads_every_format(suffix):
    data = _jsonl(DOCS)
    if suffix.lower().endswith(".gz"):
        data = gzip.compress(data)
    elif suffix.lower().endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    name = f"c{suffix}"
    assert _read(data, name) == [Document(f"{name}:{i}", d["text"], f"{name}:{i}")
                                 for i, d in enumerate(DOCS, start=1)]


def test_multi_frame_zst_is_read_whole():
    c = zstandard.ZstdCompressor()
    data = c.compress(_jsonl(DOCS[:1])) + c.compress(_jsonl(DOCS[1:]))
    assert [d.text for d in _read(data, "multi.jsonl.zst")] == [d["text"] for d in DOCS]


def test_blank_lines_are_no_documents_but_are_counted_as_lines():
    data = b'{"text": "a"}\n\n   \n{"text": "b"}\n'
    assert [(d.text, d.source) for d in _read(data)] == [("a", "c.jsonl:1"), ("b", "c.jsonl:4")]


def test_the_text_and_id_fields():
    data = _jsonl([{"body": "x", "key": 7}, {"body": "y", "key": "k2"}])
    assert _read(data, text_field="body", id_field="key") == [
        Document("7", "x", "c.jsonl:1"), Document("k2", "y", "c.jsonl:2")]


@pytest.mark.parametrize("line, reason", [
    (b"{not json\n", "not JSON (Expecting property name enclosed in double quotes)"),
    (b'{"other": 1}\n', "no 'text' field"),
    (b'["text"]\n', "no 'text' field"),
    (b'{"text": 5}\n', "field 'text' is int, not a string"),
    (b'{"text": "\xff"}\n', "not valid UTF-8"),
    (b'{"text": "\\ud800"}\n', "not valid UTF-8 (lone surrogate)"),
    # Valid JSON, perhaps, but more than json.loads reads: a traceback before.
    (b'{"text": "a", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", "JSON nested too deeply to read"),
    (b'{"text": "a", "x": ' + b"7" * 5000 + b"}\n",
     "a number too long to read (Exceeds the limit (4300 digits) for integer string conversion)"),
])
def test_a_bad_record_is_a_rejection_naming_its_line(line, reason):
    items = _read(_jsonl(DOCS[:1]) + line + _jsonl(DOCS[1:2]), "bad.jsonl")
    assert items[0].text == DOCS[0]["text"] and items[2].text == DOCS[1]["text"]
    assert items[1] == Rejection("bad.jsonl", 2, reason)
    assert items[1].message == f"bad.jsonl:2: {reason}" and not items[1].whole_file


def test_a_record_without_its_id_is_rejected():
    assert _read(_jsonl([{"text": "x", "id": None}]), id_field="id") == [
        Rejection("c.jsonl", 1, "no 'id' field")]


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_a_truncated_compressed_file_is_rejected_whole_after_what_it_read(suffix):
    data = _jsonl(DOCS * 200)
    data = gzip.compress(data) if suffix.endswith(".gz") else zstandard.ZstdCompressor().compress(data)
    items = _read(data[: len(data) // 2], f"cut{suffix}")
    *documents, last = items
    assert all(isinstance(d, Document) for d in documents)
    assert last.file == f"cut{suffix}" and last.line is None and last.whole_file
    assert last.reason.startswith(f"truncated or corrupt after line {len(documents)} (")


@pytest.mark.parametrize("data", [b"", gzip.compress(b""), zstandard.ZstdCompressor().compress(b"")],
                         ids=["jsonl", "gz", "zst"])
def test_an_empty_file_is_rejected_whole(data):
    name = "empty.jsonl" if data == b"" else "empty.jsonl.gz" if data[:2] == b"\x1f\x8b" else "empty.jsonl.zst"
    assert _read(data, name) == [Rejection(name, None, "empty file", whole_file=True)]


def test_a_file_of_blank_lines_has_no_documents_and_is_not_empty():
    assert _read(b"\n\n") == []


ARRAY = "a JSON array, not JSON lines (one object per line)"
SPREAD = "JSON over several lines, not JSON lines (one object per line)"


@pytest.mark.parametrize("data, reason", [
    (json.dumps(DOCS).encode(), ARRAY),                             # one line
    (json.dumps(DOCS, indent=2).encode(), ARRAY),                   # pretty-printed
    (b"\n  \n" + json.dumps(DOCS, indent=1).encode(), ARRAY),       # after blank lines
    (json.dumps({"text": "a", "id": 1}, indent=2).encode(), SPREAD),
    (b'{"text": "a",\n "id": 1}\n', SPREAD),
    (b'{"text":\n "a"}\n' + _jsonl(DOCS), SPREAD),
])
def test_one_json_document_is_rejected_whole_not_line_by_line(data, reason):
    assert _read(data, "c.json") == [Rejection("c.json", None, reason, whole_file=True)]
    assert _read(gzip.compress(data), "c.JSON.gz") == [Rejection("c.JSON.gz", None, reason, whole_file=True)]


def test_a_broken_first_record_is_a_rejection_of_its_line_only():
    # Cut inside a string (a pretty-printed object's first line never is), or not JSON at all.
    for first in (b'{"text": "cut off\n', b'{not json}\n', b'{"text": "\xff"\n',
                  b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", b'{"x": ' + b"7" * 5000 + b"}\n"):
        items = _read(first + _jsonl(DOCS), "c.json")
        assert [type(i) for i in items] == [Rejection, Document, Document, Document]
        assert items[0].line == 1 and not items[0].whole_file


def test_only_the_first_record_tells_a_json_document():
    items = _read(_jsonl(DOCS[:1]) + b"[1, 2]\n{\n", "c.jsonl")
    assert items[1:] == [Rejection("c.jsonl", 2, "no 'text' field"),
                         Rejection("c.jsonl", 3, "not JSON (Expecting property name enclosed in double quotes)")]
