"""The text reader (tokfx.formats.readers.text): .txt files cut into documents at separators,
whole or in byte ranges."""
import io

from tokfx.formats.documents import Document, Rejection
from tokfx.formats.readers import ReadOptions
from tokfx.formats.readers.text import READER, split_text_documents

SEP = "<|endoftext|>"


def _read(data: bytes, separators=(SEP,), byte_range=None, name="f.txt") -> list:
    return list(READER.read(io.BytesIO(data), name, ReadOptions(separators=tuple(separators)), byte_range))


def _expected(data: bytes, name="f.txt") -> list[Document]:
    """The documents by hand: split at the separator, each named by its byte offset."""
    docs, offset = [], 0
    for piece in data.split(SEP.encode()):
        if piece:
            docs.append(Document(f"{name}@{offset}", piece.decode("utf-8"), f"{name}@{offset}"))
        offset += len(piece) + len(SEP.encode())
    return docs


DATA = SEP.join(["one", "", "twó\n", "three\nlines\n", ""]).encode() + b"tail"


def test_separators_cut_the_documents_and_belong_to_none():
    assert _read(DATA) == _expected(DATA)
    assert [d.text for d in _read(DATA)] == ["one", "twó\n", "three\nlines\n", "tail"]


def test_ranges_cut_at_separators_give_the_documents_of_the_whole_file():
    data = (SEP + "\n").join(f"document {i}\nwith two lines é" for i in range(200)).encode()
    options = ReadOptions(separators=(SEP,))
    ranges = READER.ranges(io.BytesIO(data), 10, options)
    assert len(ranges) == 10 and ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(data[start:].startswith(SEP.encode()) for start, _ in ranges[1:])
    parts = [d for r in ranges for d in _read(data, byte_range=r)]
    assert parts == _expected(data)


def test_without_separators_a_file_is_one_document_and_one_range():
    data = f"a {SEP} b\nc".encode()
    assert _read(data, separators=()) == [Document("f.txt@0", data.decode(), "f.txt@0")]
    assert READER.ranges(io.BytesIO(data), 8, ReadOptions()) == [(0, len(data))]


def test_invalid_utf8_names_file_line_and_byte():
    # The bad byte (\xc3, then "(") is on line 4 of the file ("ok", "ok", the separator, "bad"),
    # in its second document, at byte 6 + 13 + 1 + 4 = 24.
    data = b"ok\nok\n" + SEP.encode() + b"\nbad \xc3\x28\n"
    *good, rejection = _read(data)
    assert [d.text for d in good] == ["ok\nok\n"]
    assert rejection == Rejection("f.txt", 4, "not valid UTF-8 at byte 24")
    assert rejection.message == "f.txt:4: not valid UTF-8 at byte 24" and not rejection.whole_file


def test_a_range_that_does_not_start_the_file_does_not_know_its_lines():
    data = b"fine\n" + SEP.encode() + b"bad \xff" + SEP.encode() + b"fine again"
    start, bad = data.index(SEP.encode()), data.index(b"\xff")
    items = _read(data, byte_range=(start, len(data)))
    assert items == [Rejection("f.txt", None, f"not valid UTF-8 at byte {bad}"),
                     Document(f"f.txt@{len(data) - 10}", "fine again", f"f.txt@{len(data) - 10}")]
    assert not items[0].whole_file  # a document, counted as one


def test_split_text_documents_counts_lines_from_the_line_it_is_given():
    [rejection] = split_text_documents(b"a\nb\n\xc3\x28", 100, "f.txt", [], line=7)
    assert rejection == Rejection("f.txt", 9, "not valid UTF-8 at byte 104")


def test_an_empty_file_is_rejected_whole():
    assert _read(b"") == [Rejection("f.txt", None, "empty file", whole_file=True)]
    assert READER.ranges(io.BytesIO(b""), 4, ReadOptions(separators=(SEP,))) == [(0, 0)]
    assert _read(b"", byte_range=(0, 0)) == [Rejection("f.txt", None, "empty file", whole_file=True)]


def test_a_file_of_separators_only_has_no_documents_and_is_not_empty():
    assert _read((SEP * 3).encode()) == []


def test_text_ranges_cut_at_separators_give_the_documents_of_the_whole():
    sep = "<|endoftext|>"
    data = sep.join(["one", "", "twó", "three\n", ""]).encode() + b"tail"
    whole = list(split_text_documents(data, 0, "f.txt", [sep]))
    assert [d.text for d in whole] == ["one", "twó", "three\n", "tail"]
    cuts = [0] + [i for i in range(len(data)) if data.startswith(sep.encode(), i)] + [len(data)]
    parts = [d for a, b in zip(cuts, cuts[1:]) for d in split_text_documents(data[a:b], a, "f.txt", [sep])]
    assert parts == whole and all(isinstance(d, Document) for d in parts)
    assert whole[1].id == f"f.txt@{len(b'one') + 2 * len(sep)}"


def test_invalid_utf8_in_a_text_range_names_the_byte():
    [rejection] = split_text_documents(b"ok \xc3\x28", 100, "f.txt", [])
    assert rejection == Rejection("f.txt", None, "not valid UTF-8 at byte 103")
