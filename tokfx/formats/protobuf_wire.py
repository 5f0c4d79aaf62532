"""The protobuf wire format, the little of it that sentencepiece's `.model` files need: a message
is a sequence of fields, each a key varint (field number << 3 | wire type) and a value of that
wire type. Read as untrusted input: every fault is one TokenizerFileError naming the file and
the field, and every loop advances through the bytes, so reading is linear in their size.

https://protobuf.dev/programming-guides/encoding/
"""
from __future__ import annotations

import struct
from collections.abc import Mapping

from tokfx.formats.untrusted import TokenizerFileError

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
MAX_VARINT_BYTES = 10  # 64 bits, 7 per byte
_FIXED_SIZE = {I64: 8, I32: 4}
_FIXED_NAME = {I64: "fixed64", I32: "fixed32"}


class MessageReader:
    """The fields of one message in `data`, as (number, wire type, value): an int for a varint,
    bytes for the other wire types; a group (deprecated, never in a .model file) is skipped
    whole and given as (number, SGROUP, None). `path` and `names` ({number: name}) name the
    field in errors: `m.model: pieces[12].score: truncated fixed32`."""

    def __init__(self, data: bytes, source: str, path: str, names: Mapping[int, str]):
        self.data, self.source, self.path, self.names = data, source, path, names

    def field_name(self, number: int) -> str:
        name = self.names.get(number, f"field {number}")
        return f"{self.path}.{name}" if self.path else name

    def fail(self, number: int | None, message: str):
        field = self.field_name(number) if number is not None else (self.path or None)
        raise TokenizerFileError(self.source, field, message)

    def __iter__(self):
        data, pos, end = self.data, 0, len(self.data)
        while pos < end:
            key, pos = self._varint(pos, None, "field key varint")
            number, wire_type = key >> 3, key & 7
            if number == 0 or number >= 1 << 29:
                self.fail(None, f"field number {number} at byte {pos}: not a valid field number")
            if wire_type == VARINT:
                value, pos = self._varint(pos, number, "varint")
            elif wire_type == LEN:
                length, pos = self._varint(pos, number, "length varint")
                if length > end - pos:
                    self.fail(number, f"length {length:,} runs past the end of the data ({end - pos:,} bytes left)")
                value, pos = data[pos:pos + length], pos + length
            elif wire_type in _FIXED_SIZE:
                size = _FIXED_SIZE[wire_type]
                if size > end - pos:
                    self.fail(number, f"truncated {_FIXED_NAME[wire_type]}")
                value, pos = data[pos:pos + size], pos + size
            elif wire_type == SGROUP:
                value, pos = None, self._skip_group(pos, number)
            elif wire_type == EGROUP:
                self.fail(number, "group end without its group start")
            else:
                self.fail(number, f"wire type {wire_type} does not exist")
            yield number, wire_type, value

    def _varint(self, pos: int, number: int | None, what: str) -> tuple[int, int]:
        data = self.data
        if pos < len(data) and data[pos] < 0x80:  # the usual one-byte case
            return data[pos], pos + 1
        value = shift = 0
        for i in range(pos, min(pos + MAX_VARINT_BYTES, len(data))):
            byte = data[i]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value & 0xFFFF_FFFF_FFFF_FFFF, i + 1
            shift += 7
        if len(data) - pos >= MAX_VARINT_BYTES:
            self.fail(number, f"{what} longer than {MAX_VARINT_BYTES} bytes")
        self.fail(number, f"truncated {what}")

    def _skip_group(self, pos: int, number: int) -> int:
        """The position after the group that starts at `pos` (its nested groups too, kept on a
        stack rather than by recursion)."""
        end, open_groups = len(self.data), [number]
        while open_groups:
            if pos >= end:
                self.fail(number, "truncated group")
            key, pos = self._varint(pos, number, "field key varint")
            inner, wire_type = key >> 3, key & 7
            if wire_type == VARINT:
                _, pos = self._varint(pos, number, "varint")
            elif wire_type == LEN:
                length, pos = self._varint(pos, number, "length varint")
                if length > end - pos:
                    self.fail(number, f"length {length:,} runs past the end of the data")
                pos += length
            elif wire_type in _FIXED_SIZE:
                pos += _FIXED_SIZE[wire_type]
            elif wire_type == SGROUP:
                open_groups.append(inner)
            elif wire_type == EGROUP:
                if open_groups.pop() != inner:
                    self.fail(number, f"group end {inner} does not close the open group")
            else:
                self.fail(number, f"wire type {wire_type} does not exist")
        return pos


def signed64(value: int) -> int:
    """A varint's 64 bits as a signed int (int32 and enum fields write -1 as 10 bytes)."""
    return value - (1 << 64) if value >= 1 << 63 else value


# --- writing ------------------------------------------------------------------------------------
def varint(value: int) -> bytes:
    """The varint of `value`; a negative int as its 64-bit two's complement, as protobuf writes
    int32 fields."""
    value &= 0xFFFF_FFFF_FFFF_FFFF
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_field(number: int, value: int) -> bytes:
    return varint(number << 3 | VARINT) + varint(value)


def bytes_field(number: int, value: bytes) -> bytes:
    return varint(number << 3 | LEN) + varint(len(value)) + value


def string_field(number: int, value: str) -> bytes:
    return bytes_field(number, value.encode("utf-8"))


def float_field(number: int, value: float) -> bytes:
    return varint(number << 3 | I32) + struct.pack("<f", value)
