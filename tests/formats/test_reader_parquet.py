"""The Parquet reader (tokfx.formats.readers.parquet), against pyarrow itself: the documents are
the rows `pyarrow.parquet.read_table` gives, in order, whether a file is read whole or in its
row-group ranges; bad input is a Rejection naming the file and row, or the whole file."""
import io
import random
import uuid
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokfx.formats.documents import CorpusError, Document
from tokfx.formats.readers import ReadOptions, read_documents, reader_for
from tokfx.formats.readers import parquet
from tokfx.formats.readers.parquet import READER, balanced_ranges
from tokfx.formats.readers.policy import CollectingPolicy

TEXTS = [f"document {i}: " + "é文 " * (i % 5) + "word " * (i % 13) for i in range(60)] + ["", " \n"]


def fineweb(texts) -> pa.Table:
    """FineWeb's columns, the text and id among them."""
    n = len(texts)
    return pa.table({
        "text": pa.array(texts, pa.string()),
        "id": [f"<urn:uuid:{uuid.UUID(int=i)}>" for i in range(n)],
        "dump": ["CC-MAIN-2024-10"] * n,
        "url": [f"https://example.com/{i}" for i in range(n)],
        "date": ["2024-02-21T12:00:00Z"] * n,
        "file_path": ["s3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/x.warc.gz"] * n,
        "language": ["en"] * n,
        "language_score": pa.array([0.5 + i / (2 * n) for i in range(n)], pa.float64()),
        "token_count": pa.array([len((t or "").split()) for t in texts], pa.int64()),
    })


def parquet_bytes(table: pa.Table, row_group_size: int = 7, **writer) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=row_group_size, **writer)
    return buffer.getvalue()


def read(data: bytes, name="f.parquet", part=None, **options) -> list:
    return list(READER.read(io.BytesIO(data), name, ReadOptions(**options), part))


def oracle(data: bytes, name="f.parquet", id_field="id") -> list[Document]:
    """The documents by pyarrow: read_table's rows in order, each named by its row or id."""
    rows = pq.read_table(io.BytesIO(data)).to_pylist()
    return [Document(f"{name}:{r}" if id_field is None else str(row[id_field]), row["text"],
                     f"{name}:{r}") for r, row in enumerate(rows, start=1)]


def row_groups(data: bytes) -> int:
    return pq.ParquetFile(io.BytesIO(data)).metadata.num_row_groups


DATA = parquet_bytes(fineweb(TEXTS))


def test_the_documents_are_pyarrows_rows_in_order_with_their_ids():
    assert row_groups(DATA) == 9
    assert read(DATA, id_field="id") == oracle(DATA)
    assert [d.text for d in read(DATA, id_field="id")] == TEXTS


def test_without_an_id_field_a_document_is_named_by_its_row_in_the_file():
    assert read(DATA) == oracle(DATA, id_field=None)
    assert read(DATA)[-1] == Document(f"f.parquet:{len(TEXTS)}", " \n", f"f.parquet:{len(TEXTS)}")


def test_the_text_and_id_columns_are_named_by_the_options():
    table = pa.table({"key": pa.array([7, 8], pa.int64()), "body": ["x", "y"]})
    assert read(parquet_bytes(table), text_field="body", id_field="key") == [
        Document("7", "x", "f.parquet:1"), Document("8", "y", "f.parquet:2")]
    assert read(parquet_bytes(table), text_field="body", id_field="body") == [
        Document("x", "x", "f.parquet:1"), Document("y", "y", "f.parquet:2")]


def test_only_the_text_and_id_columns_are_read_a_batch_at_a_time(monkeypatch):
    calls = []
    iter_batches = pq.ParquetFile.iter_batches

    def spy(self, *args, **kwargs):
        calls.append(kwargs)
        return iter_batches(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    read(DATA, id_field="id")
    read(DATA)
    assert [c["columns"] for c in calls] == [["text", "id"], ["text"]]
    assert all(c["batch_size"] == parquet._BATCH_ROWS for c in calls)


class ReadSeekTell:
    """A file with nothing but read, seek, tell and `closed` (as a Beam FileSystems file is
    used), that counts the bytes read."""
    closed = False

    def __init__(self, data: bytes):
        self._file, self.bytes_read = io.BytesIO(data), 0

    def read(self, size=-1):
        data = self._file.read(size)
        self.bytes_read += len(data)
        return data

    def seek(self, offset, whence=0):
        return self._file.seek(offset, whence)

    def tell(self):
        return self._file.tell()


def _hex_texts(rows: int, chars: int) -> list[str]:
    """Texts that do not compress, so a file's bytes are its texts' bytes."""
    noise = random.Random(0).randbytes(rows * chars // 2).hex()
    return [noise[i * chars:(i + 1) * chars] for i in range(rows)]


@pytest.mark.parametrize("rows_per_group", [100, 3000], ids=["row-groups", "pages"])
def test_a_file_is_streamed_through_read_seek_and_tell(monkeypatch, rows_per_group):
    # 3 MB of text in 30 row groups, or in one row group of 64 KB pages (no dictionary page,
    # which is read whole): the first document comes before most of the file is read.
    monkeypatch.setattr(parquet, "_BATCH_ROWS", 10)
    data = parquet_bytes(fineweb(_hex_texts(3000, 1000)), row_group_size=rows_per_group,
                         use_dictionary=False, data_page_size=1 << 16, write_batch_size=64)
    assert len(data) > 3_000_000
    raw = ReadSeekTell(data)
    documents = READER.read(raw, "f.parquet", ReadOptions(id_field="id"), None)
    first = next(documents)
    assert raw.bytes_read < len(data) / 2
    assert [first, *documents] == oracle(data)


def test_ranges_read_only_their_row_groups():
    data = parquet_bytes(fineweb(_hex_texts(3000, 1000)), row_group_size=100)
    ranges = READER.ranges(ReadSeekTell(data), 3, ReadOptions())
    assert ranges == [(0, 10), (10, 20), (20, 30)]
    raw = ReadSeekTell(data)
    assert [d.text for d in READER.read(raw, "f.parquet", ReadOptions(), ranges[1])] == \
        [d.text for d in oracle(data)[1000:2000]]
    assert raw.bytes_read < len(data) / 2


def test_ranges_cover_every_row_group_once_and_read_like_the_whole_file(monkeypatch):
    monkeypatch.setattr(parquet, "_BATCH_ROWS", 3)  # batches that cross the row groups' edges
    whole = read(DATA)
    for id_field in (None, "id"):
        for parts in range(1, row_groups(DATA) + 3):
            ranges = READER.ranges(io.BytesIO(DATA), parts, ReadOptions())
            assert len(ranges) == min(parts, row_groups(DATA))
            assert [g for first, end in ranges for g in range(first, end)] == list(range(row_groups(DATA)))
            assert all(first < end for first, end in ranges)
            in_parts = [d for r in ranges for d in read(DATA, part=r, id_field=id_field)]
            assert in_parts == read(DATA, id_field=id_field) == oracle(DATA, id_field=id_field)
    assert whole == oracle(DATA, id_field=None)


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(st.text(max_size=40), min_size=1, max_size=40),
       row_group_size=st.integers(1, 9), batch_rows=st.integers(1, 6), parts=st.integers(1, 8))
def test_random_texts_read_whole_and_in_ranges_as_pyarrow_reads_them(texts, row_group_size,
                                                                       batch_rows, parts):
    data = parquet_bytes(fineweb(texts), row_group_size)
    with mock.patch.object(parquet, "_BATCH_ROWS", batch_rows):
        assert read(data, id_field="id") == oracle(data)
        ranges = READER.ranges(io.BytesIO(data), parts, ReadOptions())
        assert [g for first, end in ranges for g in range(first, end)] == list(range(row_groups(data)))
        assert [d for r in ranges for d in read(data, part=r)] == oracle(data, id_field=None)


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(1, 1000), min_size=1, max_size=30), parts=st.integers(1, 40))
def test_balanced_ranges_cover_the_items_in_at_most_parts_ranges_of_about_equal_sums(sizes, parts):
    ranges = balanced_ranges(sizes, parts)
    assert [i for first, end in ranges for i in range(first, end)] == list(range(len(sizes)))
    assert all(first < end for first, end in ranges) and len(ranges) <= parts
    # Each cut lies within half an item of its share of the sum, so each range is its share
    # give or take one item.
    share = sum(sizes) / parts
    assert all(abs(sum(sizes[first:end]) - share) <= max(sizes) for first, end in ranges)


def test_equal_row_groups_make_as_many_ranges_as_parts():
    assert balanced_ranges([10] * 8, 3) == [(0, 3), (3, 5), (5, 8)]
    assert balanced_ranges([10] * 8, 8) == [(g, g + 1) for g in range(8)]
    assert balanced_ranges([10] * 3, 5) == [(0, 1), (1, 2), (2, 3)]
    assert balanced_ranges([1, 1, 100, 1, 1], 2) == [(0, 3), (3, 5)]


@pytest.mark.parametrize("column", [pa.array(TEXTS, pa.large_string()),
                                    pa.array(TEXTS, pa.string()).dictionary_encode()],
                         ids=["large_string", "dictionary"])
def test_large_and_dictionary_encoded_strings_are_text(column):
    data = parquet_bytes(pa.table({"text": column}))
    assert read(data) == read(parquet_bytes(pa.table({"text": TEXTS})))
    assert [d.text for d in read(data)] == TEXTS


def _not_utf8(values: list[bytes]) -> pa.Array:
    """A string column holding the bytes as they are (Arrow does not check them), as a Parquet
    file written by another tool may."""
    binary = pa.array(values, pa.binary())
    return pa.StringArray.from_buffers(len(binary), binary.buffers()[1], binary.buffers()[2])


def _corrupt_last_row_group(data: bytes) -> bytes:
    """The bytes of the text column's pages in the last row group flipped; the footer is intact."""
    column = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(row_groups(data) - 1).column(0)
    start = column.dictionary_page_offset or column.data_page_offset
    return (data[:start] + bytes(b ^ 0x55 for b in data[start:start + column.total_compressed_size])
            + data[start + column.total_compressed_size:])


GOOD = ["first", "second", "third", "fourth"]
# (case, file bytes, read options, the good rows read, the rejection: its row and reason, or
# None and the start of a whole file's reason)
BAD = [
    ("null-text", parquet_bytes(pa.table({"text": ["first", None, "second"]})), {},
     ["first", "second"], (2, "'text' is null")),
    ("null-id", parquet_bytes(pa.table({"text": GOOD[:3], "id": ["a", "b", None]})), {"id_field": "id"},
     GOOD[:2], (3, "'id' is null")),
    ("text-not-utf8", parquet_bytes(pa.table({"text": _not_utf8([b"first", b"bad \xff", b"second"])})),
     {}, ["first", "second"], (2, "'text' is not valid UTF-8")),
    ("id-not-utf8", parquet_bytes(pa.table({"text": GOOD[:2], "id": _not_utf8([b"\xc3(", b"b"])})),
     {"id_field": "id"}, ["second"], (1, "'id' is not valid UTF-8")),
    ("no-text-column", parquet_bytes(pa.table({"body": TEXTS, "id": TEXTS})), {},
     [], (None, "no 'text' column (its columns: body, id)")),
    ("no-id-column", parquet_bytes(fineweb(TEXTS)), {"id_field": "key"},
     [], (None, "no 'key' column (its columns: text, id, dump, url, date, file_path, language,"
              " language_score, token_count)")),
    ("two-text-columns", parquet_bytes(pa.table([pa.array(GOOD)] * 2, names=["text", "text"])), {},
     [], (None, "2 columns named 'text'")),
    ("text-int", parquet_bytes(pa.table({"text": list(range(60))})), {},
     [], (None, "column 'text' is int64, not strings")),
    ("text-binary", parquet_bytes(pa.table({"text": pa.array([b"a"], pa.binary())})), {},
     [], (None, "column 'text' is binary, not strings")),
    ("not-parquet", b"PAR1 plain text, not Parquet\n" * 3, {},
     [], (None, "not Parquet, or truncated or corrupt (Parquet magic bytes not found")),
    ("truncated", parquet_bytes(fineweb(TEXTS))[:-100], {},
     [], (None, "not Parquet, or truncated or corrupt (")),
    ("corrupt-page", _corrupt_last_row_group(parquet_bytes(pa.table({"text": TEXTS}), 20)), {},
     TEXTS[:60], (None, "truncated or corrupt after row 60 (")),
    ("no-bytes", b"", {}, [], (None, "empty file")),
    ("no-rows", parquet_bytes(fineweb([])), {}, [], (None, "empty file")),
]


def _bad_file(tmp_path, data: bytes):
    path = tmp_path / "bad.parquet"
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("case, data, options, good, rejected", BAD, ids=[case[0] for case in BAD])
def test_skip_keeps_the_good_rows_and_rejects_the_bad_row_or_the_whole_file(
        tmp_path, monkeypatch, case, data, options, good, rejected):
    monkeypatch.setattr(parquet, "_BATCH_ROWS", 20)  # the corrupt row group is read last
    path = _bad_file(tmp_path, data)
    errors = CollectingPolicy("skip")
    assert [d.text for d in read_documents([path], ReadOptions(**options), errors)] == good
    [rejection] = errors.rejected
    line, reason = rejected
    assert (rejection.file, rejection.line, rejection.whole_file) == (path, line, line is None)
    assert rejection.reason.startswith(reason) and "\n" not in rejection.reason


@pytest.mark.parametrize("case, data, options, good, rejected", BAD, ids=[case[0] for case in BAD])
def test_fail_stops_with_one_line_naming_the_file_and_row(tmp_path, monkeypatch, case, data, options,
                                                          good, rejected):
    monkeypatch.setattr(parquet, "_BATCH_ROWS", 20)
    path = _bad_file(tmp_path, data)
    documents = read_documents([path], ReadOptions(**options), CollectingPolicy("fail"))
    with pytest.raises(CorpusError) as raised:
        list(documents)
    line, reason = rejected
    where = path if line is None else f"{path}:{line}"
    assert str(raised.value).startswith(f"{where}: {reason}") and "\n" not in str(raised.value)


WHOLE = [case for case in BAD if case[3] == []]


@pytest.mark.parametrize("case, data, options, good, rejected", WHOLE, ids=[case[0] for case in WHOLE])
def test_a_file_rejected_whole_is_rejected_once_however_it_is_cut(case, data, options, good, rejected):
    whole = read(data, **options)
    assert len(whole) == 1 and whole[0].whole_file
    for parts in (1, 2, 4):
        ranges = READER.ranges(io.BytesIO(data), parts, ReadOptions(**options))
        assert [r for part in ranges for r in read(data, part=part, **options)] == whole


def test_the_suffix_is_matched_in_any_case(tmp_path):
    path = tmp_path / "F.PARQUET"
    path.write_bytes(DATA)
    assert reader_for(path) is READER
    assert [d.text for d in read_documents([path], ReadOptions(), CollectingPolicy("fail"))] == TEXTS
