"""Twin of tokfx._json_fields: the needed top-level fields of a JSON-lines record, checked whole,
or None where json.loads must read the line (see the compiled module for which lines)."""
from __future__ import annotations

import re
from array import array
from itertools import accumulate

MAX_DEPTH = 100
MAX_INT_DIGITS = 640

_SPACE = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)"')
_NUMBER = re.compile(rb"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_WORDS = (b"null", b"true", b"false", b"NaN", b"Infinity", b"-Infinity")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _space(line: bytes, i: int) -> int:
    return _SPACE.match(line, i).end()


def _string(line: bytes, i: int) -> re.Match | None:
    """The string at i, if its body is UTF-8 with no encoded surrogate (strict decoding)."""
    match = _STRING.match(line, i)
    try:
        return match if match and match[1].decode("utf-8") is not None else None
    except UnicodeDecodeError:
        return None


def _value(line: bytes, i: int, depth: int) -> int | None:
    """Where the value at i ends; None when json.loads must judge it."""
    if line[i:i + 1] == b'"':
        match = _string(line, i)
        return match.end() if match else None
    if line[i:i + 1] in (b"{", b"["):
        return _container(line, i, depth + 1) if depth < MAX_DEPTH else None
    for word in _WORDS:
        if line.startswith(word, i):
            return i + len(word)
    match = _NUMBER.match(line, i)
    if not match or (match[2] is None and match[3] is None and len(match[1]) > MAX_INT_DIGITS):
        return None
    return match.end()


def _container(line: bytes, i: int, depth: int, spans: dict | None = None) -> int | None:
    """Where the object or array at i ends; `spans`, when given, gets {key: (start, end)} of each
    member's value (a duplicate key: the last)."""
    close = b"}" if line[i:i + 1] == b"{" else b"]"
    i = _space(line, i + 1)
    if line[i:i + 1] == close:
        return i + 1
    while True:
        if close == b"}":
            key = _string(line, i) if line[i:i + 1] == b'"' else None
            if key is None:
                return None
            i = _space(line, key.end())
            if line[i:i + 1] != b":":
                return None
            i = _space(line, i + 1)
        start, i = i, _value(line, i, depth)
        if i is None:
            return None
        if spans is not None and (name := _unescape(key[1].decode("utf-8"))) is not None:
            spans[name] = (start, i)  # (a key with a lone surrogate is none of the names)
        i = _space(line, i)
        if line[i:i + 1] == close:
            return i + 1
        if line[i:i + 1] != b",":
            return None
        i = _space(line, i + 1)


def _unescape(body: str) -> str | None:
    """A checked string body decoded; None for a lone surrogate."""
    out, i = [], 0
    while (j := body.find("\\", i)) >= 0:
        out.append(body[i:j])
        kind, i = body[j + 1], j + 2
        if kind != "u":
            out.append(_ESCAPES.get(kind, kind))
            continue
        code, i = int(body[i:i + 4], 16), i + 4
        if 0xD800 <= code <= 0xDBFF and body.startswith("\\u", i) and 0xDC00 <= int(body[i + 2:i + 6], 16) <= 0xDFFF:
            code, i = 0x10000 + ((code - 0xD800) << 10) + int(body[i + 2:i + 6], 16) - 0xDC00, i + 6
        if 0xD800 <= code <= 0xDFFF:
            return None
        out.append(chr(code))
    out.append(body[i:])
    return "".join(out)


def fields(line: bytes, names) -> dict | None:
    """{name: value} of the top-level fields of `names` on the line (a duplicate key: its last
    value), a string decoded, any other value as its JSON text; None for json.loads."""
    names = list(dict.fromkeys(names))
    spans = {}
    i = _space(line, 0)
    if line[i:i + 1] != b"{" or (i := _container(line, i, 1, spans)) is None or _space(line, i) != len(line):
        return None
    found = {}
    for name in names:
        if name in spans:
            start, end = spans[name]
            text = line[start:end]
            value = _unescape(text[1:-1].decode("utf-8")) if text[:1] == b'"' else text
            if value is None:
                return None
            found[name] = value
    return found


def text_utf8(line: bytes, name: str) -> bytes | None:
    """The UTF-8 of the string value of `name` on the line; None where `fields` answers None or
    the value is absent or no string."""
    found = fields(line, [name])
    value = None if found is None else found.get(name)
    return value.encode("utf-8") if isinstance(value, str) else None


def texts_utf8(block: bytes, name: str, start: int = 0) -> tuple[bytes, array, int, int]:
    """FieldScanner([name]).texts_utf8(block, start): text_utf8 of each line of block[start:]
    up to the first that is not blank (bytes.strip leaves nothing) and has none; (the texts
    joined, their ends, the offset of that line or len(block), the lines passed)."""
    texts, at, lines = [], start, 0
    while at < len(block):
        end = block.find(b"\n", at) + 1 or len(block)
        line = block[at:end]
        if line.strip():
            text = text_utf8(line, name)
            if text is None:
                break
            texts.append(text)
        at, lines = end, lines + 1
    return b"".join(texts), array("q", accumulate(map(len, texts))), at, lines
