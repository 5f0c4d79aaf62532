"""The fields of a JSON-lines record read without json.loads (tokfx._json_fields, its twin
tokfx.reference.json_fields), and the JSON-lines reader built on them, against json.loads itself:
where the scanner answers, json.loads reads the line and its values are the scanner's; where it
does not, the reader's json.loads gives today's answer. Random records (field orders, duplicate
keys, escapes, surrogates, nesting, NaN, long integers) and broken variants of them; the real
corpora as JSON lines."""
import io
import json
import math
from unittest import mock

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ASSIGNED, CORPUS_FILES, corpus_path
from tokfx._json_fields import FieldScanner
from tokfx.formats.documents import Document, Texts
from tokfx.formats.readers import ReadOptions, compression, jsonl
from tokfx.formats.readers.jsonl import READER
from tokfx.reference.json_fields import fields as reference_fields
from tokfx.reference.json_fields import texts_utf8 as reference_texts_utf8

NAMES = ("text", "id", "url", "score")


def _same(a, b) -> bool:
    """Equal values, NaN equal to NaN, and of the same type (1 is not 1.0, nor True)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


def check_line(line: bytes, names=NAMES) -> dict | None:
    """The scanner's answer, equal to its twin's and, where it answers, to json.loads's."""
    found = FieldScanner(names).fields(line)
    assert found == reference_fields(line, names)
    if found is not None:
        record = json.loads(line)  # json.loads reads every line the scanner reads
        assert isinstance(record, dict)
        assert found.keys() == {name for name in names if name in record}
        for name, value in found.items():
            assert _same(value if isinstance(value, str) else json.loads(value), record[name])
    return found


# String pieces written as JSON writes them and as it may be written by hand.
_PIECES = st.one_of(
    st.text(ASSIGNED, max_size=8).map(lambda t: json.dumps(t, ensure_ascii=False)[1:-1]),
    st.text(max_size=4).map(lambda t: json.dumps(t)[1:-1]),  # \uXXXX, lone surrogates included
    st.sampled_from(["\\/", "\\u00E9", "\\uD83D\\uDE00", "\\ud83d\\ude00", "\\ud800", "\\udc00x",
                     "\\ud800\\ud800", "\\ud83d\\u0041", "\\u0000", "\\\\u0041", "é", "文", "😀"]),
)
_STRINGS = st.lists(_PIECES, max_size=5).map(lambda parts: '"' + "".join(parts) + '"')
_SCALARS = st.one_of(
    _STRINGS, st.sampled_from(["null", "true", "false", "NaN", "Infinity", "-Infinity", "0", "-0",
                               "1.5e3", "-2E-2", "1" * 700, "1" * 700 + ".5", "12", "3.25"]),
    st.integers(-10**20, 10**20).map(str), st.floats(allow_nan=False).map(json.dumps))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
    st.lists(st.tuples(_STRINGS, inner), max_size=3).map(
        lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}")), max_leaves=8)
_KEYS = st.one_of(st.sampled_from([f'"{name}"' for name in NAMES] + ['"te\\u0078t"', '"t\\"ext"', '"other"']),
                  _STRINGS)
_SPACE = st.sampled_from(["", " ", "\t", "  \r", "\n"])


@st.composite
def json_lines(draw) -> bytes:
    """A JSON-lines record as text (its keys in any order, some twice), sometimes broken."""
    pairs = draw(st.lists(st.tuples(_KEYS, _VALUES, _SPACE), max_size=6))
    line = draw(_SPACE) + "{" + ",".join(f"{s}{k}{s}:{s}{v}{s}" for k, v, s in pairs) + "}" + draw(_SPACE)
    data = line.encode("utf-8", "surrogatepass")  # "\ud800" written raw: bytes json reads, UTF-8 does not
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"", b",", b"}", b"]", b'"', b"\\", b"\x01", b"\xff", b"\xed\xa0\x80",
                                                 b"\xc3", b"{", b"x", b" ", b"\x00", b"\xef\xbb\xbf",
                                                 b"e", b"E", b".", b"-", b"+", b"0", b"n", b"u", b"\x7f"])) + data[at + 1:]
    return data


@settings(max_examples=1000, deadline=None)
@given(json_lines())
def test_random_records_read_as_json_loads_reads_them(line):
    check_line(line)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES + ("other", "é")),
                       st.one_of(st.text(ASSIGNED), st.integers(-10**18, 10**18), st.floats(allow_nan=False),
                                 st.booleans(), st.none(), st.lists(st.integers(), max_size=3))),
       st.booleans())
def test_what_json_dumps_writes_is_read_by_the_scanner(record, ensure_ascii):
    """Ordinary records are read by the scanner itself, json.loads not called: no stub."""
    assert check_line(json.dumps(record, ensure_ascii=ensure_ascii).encode() + b"\n") is not None


def text_of(scanner: FieldScanner, line: bytes, name: str = "text") -> bytes | None:
    """texts_utf8 of a block of one line (not blank): its text, or None where it stops at it;
    the twin's answer the same. `name`: the scanner's one."""
    data, ends, stop, lines = scanner.texts_utf8(line)
    assert (data, ends, stop, lines) == reference_texts_utf8(line, name)
    if not ends:
        assert (data, stop, lines) == (b"", 0, 0)
        return None
    assert (list(ends), stop, lines) == ([len(data)], len(line), 1)
    return data


@settings(max_examples=1000, deadline=None)
@given(json_lines(), st.sampled_from(NAMES))
def test_texts_utf8_reads_the_fields_string_as_utf8(line, name):
    """The one field's string as UTF-8 where `fields` reads the line (and the twin agrees);
    stopped at where `fields` answers None or the value is absent or no string."""
    line = line.replace(b"\n", b" ")  # one line: the block's lines end at b"\n"
    if not line.strip():
        return
    scanner = FieldScanner([name])
    found = scanner.fields(line)
    value = None if found is None else found.get(name)
    expected = value.encode("utf-8") if isinstance(value, str) else None
    assert text_of(scanner, line, name) == expected


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(json_lines(), st.sampled_from([b"", b" ", b"\t\r", b"\x0b", b'{"text": "a"}'])),
                max_size=8), st.integers(0, 8), st.booleans())
def test_texts_utf8_reads_a_block_of_lines_up_to_one_it_cannot(lines, first, ends_with_newline):
    """A block of lines, blank ones among them, from any line on: as its twin reads it, line by
    line; and where it stops, the line is one that `fields` does not read as a text."""
    lines = [line.replace(b"\n", b" ") for line in lines]
    block = b"\n".join(lines) + (b"\n" if ends_with_newline else b"")
    start = sum(len(line) + 1 for line in lines[:first]) if first < len(lines) else len(block)
    scanner = FieldScanner(["text"])
    data, ends, stop, read = scanner.texts_utf8(block, start)
    assert (data, ends, stop, read) == reference_texts_utf8(block, "text", start)
    assert block[start:stop].count(b"\n") == read or stop == len(block)
    if stop < len(block):
        line = block[stop:block.find(b"\n", stop) + 1 or len(block)]
        assert line.strip() and text_of(scanner, line) is None


def test_texts_utf8_refuses_a_start_outside_the_block():
    with pytest.raises(ValueError, match="outside"):
        FieldScanner(["text"]).texts_utf8(b"{}", 3)


@pytest.mark.parametrize("line, expected", [
    (b'{"text": "a\\u00e9\\n", "text": "b\xc3\xa9"}', "b\u00e9".encode()),  # the last, checked
    (b'{"text": "\\ud83d\\ude00\\/\xe6\x96\x87"}', "\U0001F600/\u6587".encode()),
    (b'{"text": "\\ud800"}', None), (b'{"text": "\xed\xa0\x80"}', None), (b'{"text": "a\xc3"}', None),
    (b'{"text": "\\u00e9\xff"}', None),  # bad UTF-8 between escapes
    (b'{"text": 1}', None), (b'{"id": "a"}', None), (b'{"text": "a",}', None),
])
def test_texts_utf8_of_lines(line, expected):
    assert text_of(FieldScanner(["text"]), line) == expected


@pytest.mark.parametrize("middle", [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x80", b"\xf4\x90\x80\x80",
                                    "\u00e9".encode(), "\u6587".encode(), "\U0001F600".encode()])
@pytest.mark.parametrize("escape", [b"", b"\\n"])
def test_texts_utf8_checks_utf8_after_and_between_ascii_runs(middle, escape):
    """ASCII is passed over a word at a time: a byte that is not UTF-8 (or a character that is)
    at every offset of a word, after and before runs of ASCII, with and without an escape (which
    checks the unescaped copy)."""
    scanner = FieldScanner(["text"])
    for before in range(0, 18):
        for after in (0, 1, 7, 8, 9, 16):
            body = escape + b"a" * before + middle + b"b" * after
            try:
                expected = json.loads(b'"' + body + b'"').encode("utf-8")
            except (UnicodeDecodeError, UnicodeEncodeError):  # not UTF-8, or a surrogate json reads
                expected = None
            line = b'{"text": "' + body + b'"}'
            assert text_of(scanner, line) == expected, (before, after)


def test_texts_utf8_needs_a_scanner_of_one_field():
    # With two, the other value's UTF-8 would go unchecked (it is checked as it is decoded).
    with pytest.raises(ValueError, match="reads one field"):
        FieldScanner(["text", "id"]).texts_utf8(b'{"text": "a", "id": "\xff"}')


@pytest.mark.parametrize("line, expected", [
    (b'{"text": "a", "text": "b"}', {"text": "b"}),  # json.loads keeps the last
    (b'{"text": "\\ud83d\\ude00 \\u00e9\\n\\/\\t"}', {"text": "\U0001F600 \u00e9\n/\t"}),
    (b'{"id": 7, "x": [1, {"y": NaN}], "text": "\xe6\x96\x87"}\r\n', {"id": b"7", "text": "\u6587"}),
    (b' {} ', {}),
    (b'{"te\\u0078t": "a", "\\ud800": 1}', {"text": "a"}),  # keys with escapes
])
def test_lines_read(line, expected):
    assert check_line(line) == expected


@pytest.mark.parametrize("line", [
    b'{"text": "\\ud800"}',  # a lone surrogate: json.loads keeps it
    b'{"text": "a", "x": "\xed\xa0\x80"}',  # an encoded surrogate, read by json.loads
    b'{"text": "a", "n": ' + b"1" * 641 + b"}",  # int() may refuse it: json.loads says
    b'{"text": "a", "x": ' + b"[" * 101 + b"]" * 101 + b"}",
    b'\xef\xbb\xbf{"text": "a"}',  # a BOM, which json.loads skips
    b'{"text": "a\xff"}', b'{"text": "\xed\xa0\x80"}', b'{"id": "\xc3", "text": "a"}',  # a needed value's UTF-8
    b'{"text": "\xff", "text": "a"}', b'{"text": "\xed\xa0\x80", "text": "a"}',  # a value replaced is checked too
    b'["text"]', b'{"text": "a",}', b'{"text": "a"} x', b'{"text": "a", "x": "\xff"}', b'{"text": "a\x01"}',
])
def test_lines_left_to_json_loads(line):
    assert check_line(line) is None


def _read(data: bytes, scanned: bool, **options) -> list:
    with pytest.MonkeyPatch.context() as patch:
        if not scanned:  # the reader as it was: json.loads for every line
            patch.setattr(jsonl, "_field_scanner", lambda options: None)
        return list(READER.read(io.BytesIO(data), "c.jsonl", ReadOptions(**options), None))


@settings(max_examples=200, deadline=None)
@given(st.lists(json_lines(), min_size=1, max_size=8))
def test_the_reader_yields_what_json_loads_gave(lines):
    """Documents and rejections (their messages, lines) as the reader with json.loads only gave."""
    data = b"\n".join(lines) + b"\n"
    for options in ({}, {"id_field": "id"}, {"text_field": "url", "id_field": "text"},
                    {"keep": (("score", pa.float64()), ("url", pa.string()))}):
        assert _read(data, True, **options) == _read(data, False, **options)


def _texts_apart(items) -> list:
    """read_texts' items, each Texts cut into its texts (bytes: one a document)."""
    apart = []
    for item in items:
        if isinstance(item, Texts):
            assert len(item.ends) and item.ends[-1] == len(item.data)
            apart += [item.data[start:end] for start, end in zip([0, *item.ends], item.ends)]
        else:
            apart.append(item)
    return apart


@settings(max_examples=200, deadline=None)
@given(st.lists(json_lines(), min_size=1, max_size=8), st.sampled_from([1, 7, 64, 1 << 19]))
def test_read_texts_yields_the_documents_texts_as_utf8(lines, block_size):
    """READER.read_texts: each document whose record needs only its text as that text's UTF-8
    (Texts, the file a block at a time; the first record read the full way), every other item
    (rejections, documents with an id or kept fields) as `read` gives it, in file order."""
    data = b"\n".join(lines) + b"\n"
    for options in ({}, {"text_field": "url"}, {"id_field": "id"}, {"keep": (("url", pa.string()),)}):
        read = _read(data, True, **options)
        with mock.patch.object(compression, "_BLOCK_SIZE", block_size):
            texts = _texts_apart(READER.read_texts(io.BytesIO(data), "c.jsonl", ReadOptions(**options), None))
        assert len(texts) == len(read)
        only_text = "id_field" not in options and "keep" not in options
        for got, item in zip(texts, read):
            if isinstance(got, bytes):
                assert only_text and got == item.text.encode("utf-8")
            else:
                assert got == item


@pytest.mark.parametrize("relative", CORPUS_FILES)
def test_the_corpora_as_json_lines(relative):
    paragraphs = corpus_path(relative).read_text(encoding="utf-8").split("\n\n")
    data = b"".join(json.dumps({"id": i, "text": p, "meta": {"n": len(p)}}, ensure_ascii=i % 2 == 0).encode() + b"\n"
                    for i, p in enumerate(paragraphs))
    assert _read(data, True, id_field="id") == _read(data, False, id_field="id")
    # Every record is read by the scanner, none by json.loads.
    scanner = FieldScanner(("text", "id"))
    assert all(scanner.fields(line) is not None for line in data.splitlines())
    items = list(READER.read_texts(io.BytesIO(data), "c.jsonl", ReadOptions(), None))
    # The first record read the full way (it might be a whole JSON document), the others a block at a time.
    assert isinstance(items[0], Document) and all(isinstance(item, Texts) for item in items[1:])
    texts = [item.text.encode("utf-8") if isinstance(item, Document) else item for item in _texts_apart(items)]
    assert texts == [p.encode("utf-8") for p in paragraphs]
