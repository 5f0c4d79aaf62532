import gzip
import json

import pytest
import zstandard

from tokfx.formats.documents import CorpusError
from tokfx.formats.readers.jsonl import iter_jsonl_texts
from tokfx.formats.readers.text import read_text_file

DOCS = [{"text": "first doc"}, {"text": "второй 文書"}, {"text": ""}]


def _jsonl(records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_reads_every_format(tmp_path, suffix):
    data = _jsonl(DOCS)
    path = tmp_path / f"c{suffix}"
    if suffix.endswith(".gz"):
        data = gzip.compress(data)
    elif suffix.endswith(".zst"):
        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    assert [t for _, t in iter_jsonl_texts(path)] == [d["text"] for d in DOCS]


def test_multi_frame_zst_is_read_whole(tmp_path):
    c = zstandard.ZstdCompressor()
    path = tmp_path / "multi.jsonl.zst"
    path.write_bytes(c.compress(_jsonl(DOCS[:1])) + c.compress(_jsonl(DOCS[1:])))
    assert [t for _, t in iter_jsonl_texts(path)] == [d["text"] for d in DOCS]


@pytest.mark.parametrize("line, reason", [
    (b"{not json\n", "2: not JSON"),
    (b'{"other": 1}\n', "2: no 'text' field"),
    (b'{"text": 5}\n', "2: field 'text' is int, not a string"),
    (b'{"text": "\xff"}\n', "2: not valid UTF-8"),
])
def test_bad_records_name_file_and_line(tmp_path, line, reason):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(_jsonl(DOCS[:1]) + line)
    with pytest.raises(CorpusError, match=f"bad.jsonl:{reason}"):
        list(iter_jsonl_texts(path))


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".jsonl.zst"])
def test_truncated_compressed_file(tmp_path, suffix):
    data = _jsonl(DOCS * 200)
    data = gzip.compress(data) if suffix.endswith(".gz") else zstandard.ZstdCompressor().compress(data)
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match="truncated or corrupt"):
        list(iter_jsonl_texts(path))


def test_invalid_utf8_text_file_names_the_line(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"ok\nok\nbad \xc3\x28\n")
    with pytest.raises(CorpusError, match=r"t.txt:3: not valid UTF-8"):
        read_text_file(path)
