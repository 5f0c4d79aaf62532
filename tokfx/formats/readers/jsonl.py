"""JSON-lines documents: one JSON object per line, its text in a field (`text` by default) and
optionally its id in another. The usual names: .jsonl, .json, .ndjson, each plain, .gz or .zst.

Bad input is a Rejection naming the file and line: a line that is not JSON, a missing or
non-string text field, text that is not valid UTF-8; a truncated or corrupt compressed file
is a Rejection of the whole file, and so are a file with no bytes and a file that is one JSON
document (an array, or an object over several lines: a .json file often is), told by its first
line rather than rejected line by line as "not JSON". A compressed stream cannot be
split: a file is read from its start, whole.

A record is read by tokfx._json_fields.FieldScanner, which checks the whole line and decodes
only the fields a document needs (json.loads decoded every field: most of reading's time); a
line it does not surely read as json.loads does goes to json.loads, so the documents and the
rejections are json.loads's own.
"""
from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from functools import partial
from typing import BinaryIO

import pyarrow as pa
import zstandard

from tokfx._json_fields import FieldScanner
from tokfx.formats.documents import Document, Rejection, Texts
from tokfx.formats.readers.compression import iter_blocks, iter_lines
from tokfx.formats.readers.kept_fields import SAMPLE_RECORDS, json_type, json_values
from tokfx.formats.readers.reader import Reader, ReadOptions, ReadRange


def _document(record, options: ReadOptions, source: str, scanned: bool = False) -> Document | str:
    """The document of one parsed JSON record, or the reason it is rejected. `scanned`: the
    record's fields were read by the FieldScanner, whose strings are UTF-8 (it leaves a lone
    surrogate to json.loads): no need to encode the text to know."""
    text_field, id_field = options.text_field, options.id_field
    if not isinstance(record, dict) or text_field not in record:
        return f"no {text_field!r} field"
    text = record[text_field]
    if not isinstance(text, str):
        return f"field {text_field!r} is {type(text).__name__}, not a string"
    if not scanned:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            # A JSON escape of a lone surrogate: valid JSON, but no UTF-8 text.
            return "not valid UTF-8 (lone surrogate)"
    fields = json_values(record, options.keep) if options.keep else ()
    if isinstance(fields, str):
        return fields
    if id_field is None:
        return Document(source, text, source, fields)
    if id_field not in record or record[id_field] is None:
        return f"no {id_field!r} field"
    return Document(str(record[id_field]), text, source, fields)


def _field_scanner(options: ReadOptions) -> FieldScanner | None:
    """What reads the fields a document needs from a record without json.loads decoding the
    rest; None for a field name that is no UTF-8 (a surrogate from the command line), which
    json.loads alone then reads."""
    names = (options.text_field, *((options.id_field,) if options.id_field is not None else ()),
             *(name for name, _ in options.keep))
    try:
        return FieldScanner(names)
    except UnicodeEncodeError:
        return None


def _record(line: bytes, scanner: FieldScanner | None) -> tuple[object, bool]:
    """The record on a line as far as a document needs it, and whether the scanner read it: its
    needed fields where the scanner reads the line (a value other than a string comes as its
    JSON text), else json.loads's whole record; json.loads's errors for a line that is no JSON."""
    fields = scanner.fields(line) if scanner is not None else None
    if fields is None:
        return json.loads(line), False
    for name, value in fields.items():
        if not isinstance(value, str):
            fields[name] = json.loads(value)
    return fields, True


def _unreadable(exc: RecursionError | ValueError) -> str:
    """Why json.loads could not read a line that may well be JSON: arrays or objects nested
    deeper than its recursion goes, or an integer longer than int() reads (a ValueError naming
    sys.get_int_max_str_digits' limit). A hostile line either way, rejected as any bad record."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    return f"a number too long to read ({str(exc).split(':')[0]})"


def _one_json_document(line: bytes) -> str | None:
    """Why a file whose first non-blank line is `line` is one JSON document, not JSON lines; None
    when it is not. An array starts with "["; an object spread over lines is cut off at the end
    of its first line (a line cut inside a string is a broken record instead: JSON strings hold
    no newlines, so a pretty-printed object's first line never ends inside one)."""
    text = line.strip()
    if text.startswith(b"["):
        return "a JSON array, not JSON lines (one object per line)"
    if text.startswith(b"{"):
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.pos >= len(exc.doc):
                return "JSON over several lines, not JSON lines (one object per line)"
        except (UnicodeDecodeError, RecursionError, ValueError):
            pass  # the line's own rejection says why
    return None


def _lines_and_texts(raw: BinaryIO, name: str, scanner: FieldScanner) -> Iterator[tuple[int, bytes | Texts]]:
    """The file's lines numbered, as enumerate(iter_lines(raw, name), 1) gives them, except that
    after its first line that is not blank, the lines that scanner.texts_utf8 reads come as
    Texts, a chunk's at once, numbered by the last of them."""
    line_no, started = 0, False
    for block in iter_blocks(raw, name):
        at = 0
        while at < len(block):
            if started:
                data, ends, at, read = scanner.texts_utf8(block, at)
                line_no += read
                if ends:
                    yield line_no, Texts(data, ends)
                if at == len(block):
                    break
            end = block.find(b"\n", at) + 1 or len(block)
            line = block[at:end]
            line_no, at = line_no + 1, end
            started = started or bool(line.strip())
            yield line_no, line


def read_jsonl(raw: BinaryIO, name: str, options: ReadOptions,
               part: ReadRange | None = None, utf8: bool = False) -> Iterator[Document | Rejection | Texts]:
    """Each record of an open JSON-lines file as a Document or a Rejection, streamed (the file
    is read whole: `part` is always None, this format has no ranges). With `utf8` (READER's
    `read_texts`), where a document needs nothing but its text (no id field, no kept fields),
    the records that the scanner reads come as Texts, the UTF-8 of their texts, a chunk of the
    file at a time (FieldScanner.texts_utf8), in file order with the other items: counting
    encoded each text back to UTF-8, and then read a line a call (bench/README.md, "Counting
    reads UTF-8" and "Counting reads a chunk at a time").

    A file that ends early or is corrupt ends with a Rejection of the whole file; so does a
    file with no bytes at all. A file that is one JSON document is rejected whole instead of
    read. Blank lines are not documents.
    """
    line_no = 0
    first = True
    scanner = _field_scanner(options)
    texts = utf8 and scanner is not None and options.id_field is None and not options.keep
    try:
        for line_no, line in (_lines_and_texts(raw, name, scanner) if texts
                              else enumerate(iter_lines(raw, name), start=1)):
            if isinstance(line, Texts):
                yield line
                continue
            if not line.strip():
                continue
            if first and (reason := _one_json_document(line)):
                yield Rejection(name, None, reason, whole_file=True)
                return
            first = False
            try:
                record, scanned = _record(line, scanner)
            except UnicodeDecodeError:
                yield Rejection(name, line_no, "not valid UTF-8")
                continue
            except json.JSONDecodeError as exc:
                yield Rejection(name, line_no, f"not JSON ({exc.msg})")
                continue
            except (RecursionError, ValueError) as exc:
                yield Rejection(name, line_no, _unreadable(exc))
                continue
            doc = _document(record, options, f"{name}:{line_no}", scanned)
            yield doc if isinstance(doc, Document) else Rejection(name, line_no, doc)
    except (EOFError, OSError, zlib.error, zstandard.ZstdError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        yield Rejection(name, None, f"truncated or corrupt after line {line_no} ({exc})",
                        whole_file=True)
        return
    if line_no == 0:
        yield Rejection(name, None, "empty file", whole_file=True)


def json_field_types(raw: BinaryIO, name: str, options: ReadOptions, names: tuple[str, ...]) -> dict:
    """{field: its type (kept_fields.json_type)} for the fields of `names` that the first
    SAMPLE_RECORDS records of the file hold: its first value's, except that a number field
    with any fraction among them is double (JSON has one kind of number: 0 and 0.5 are one
    field's values). A file that cannot be read tells nothing (reading it rejects it)."""
    found: dict = {}
    records = 0
    try:
        for line in iter_lines(raw, name):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, _unreadable: its rejection says so
                continue
            records += 1
            if isinstance(record, dict):
                for field in names:
                    kind = json_type(record.get(field))
                    if kind is not None and (field not in found or (found[field] == pa.int64() and kind == pa.float64())):
                        found[field] = kind
            # An integer field is looked at further, for a fraction.
            if (len(found) == len(names) and pa.int64() not in found.values()) or records >= SAMPLE_RECORDS:
                break
    except (EOFError, OSError, zlib.error, zstandard.ZstdError):
        pass
    return found


READER = Reader("jsonl", tuple(name + compressed for name in (".jsonl", ".json", ".ndjson")
                              for compressed in ("", ".gz", ".zst")), read_jsonl,
                field_types=json_field_types, read_texts=partial(read_jsonl, utf8=True))
