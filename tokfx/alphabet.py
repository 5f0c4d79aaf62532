"""Base-symbol alphabets: `bytes` (ids 0-255) and `cjk`, the remapped alphabet of docs/cjk_remap.md.

`cjk`: 0-255 raw bytes, 256-383 the h2 values, 384-511 the h3 values, then one prefix symbol per
remapped lead-byte group in increasing order. A pre-token maps to symbols on its own (it starts
with no current prefix); a symbol sequence decodes with one prefix state throughout.
"""
from __future__ import annotations

import codecs
import sys
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tokfx._alphabet import decode_symbols, map_pieces, prefix_table

DEFAULT_CJK_GROUPS = (0x39, 0x3A, 0x3B)
CJK_GROUP_RANGE = range(0x38, 0x3C)  # the groups of lead bytes E0-EF
H2_BASE, H3_BASE, PREFIX_BASE = 256, 384, 512


class DecodeError(ValueError):
    """Raised by decode(..., errors="strict"): `position` indexes the input sequence."""

    def __init__(self, position: int, reason: str):
        super().__init__(f"decode error at position {position}: {reason}")
        self.position = position
        self.reason = reason


@dataclass(frozen=True)
class Alphabet:
    name: str
    groups: tuple[int, ...] = ()

    def __post_init__(self):
        if self.name == "bytes":
            if self.groups:
                raise ValueError("the bytes alphabet takes no groups")
        elif self.name == "cjk":
            groups = tuple(sorted(set(self.groups)))
            if not groups or any(p not in CJK_GROUP_RANGE for p in groups):
                raise ValueError(f"cjk groups must be a non-empty subset of 0x38-0x3B, got "
                                 f"{[hex(p) for p in self.groups]}")
            object.__setattr__(self, "groups", groups)
            object.__setattr__(self, "_prefix_ids", prefix_table(groups))
        else:
            raise ValueError(f"unknown alphabet {self.name!r}; known: bytes, cjk")

    @classmethod
    def named(cls, name: str, cjk_groups: Sequence[int] | str | None = None) -> "Alphabet":
        """`cjk_groups`: group numbers, or hex text like "39,3a,3b" (as the command line gives
        them); None for the default groups."""
        if isinstance(cjk_groups, str):
            cjk_groups = parse_groups(cjk_groups)
        if name != "cjk" and cjk_groups is not None:
            raise ValueError(f"cjk_groups given for the {name!r} alphabet")
        return cls(name, tuple(DEFAULT_CJK_GROUPS if cjk_groups is None else cjk_groups)
                   if name == "cjk" else ())

    @property
    def size(self) -> int:
        return 256 if self.name == "bytes" else PREFIX_BASE + len(self.groups)

    def to_dict(self) -> dict:
        return {"name": "bytes"} if self.name == "bytes" else {"name": "cjk", "groups": list(self.groups)}

    @classmethod
    def from_dict(cls, doc: dict) -> "Alphabet":
        return cls(doc["name"], tuple(doc.get("groups", ())))

    # --- tokens ---------------------------------------------------------------------------
    def token(self, symbols: Sequence[int]) -> bytes | tuple[int, ...]:
        """How a Tokenizer holds a token: bytes for the byte alphabet, else a tuple of symbols."""
        return bytes(symbols) if self.name == "bytes" else tuple(symbols)

    def token_of_text(self, text: str) -> bytes | tuple[int, ...]:
        """A special token's symbols: its text mapped as one pre-token."""
        return self.token(self.symbols(text.encode("utf-8")))

    def show(self, symbols: Sequence[int]) -> str:
        """Readable symbols: runs of raw bytes as a quoted string, `P39` for a prefix, and the
        spec's 9-bit value in hex for an h2 or h3 (`P39 5E 97` is 众)."""
        if self.name == "bytes":
            return repr(bytes(symbols).decode("utf-8", errors="backslashreplace"))
        parts, raw = [], bytearray()
        for s in list(symbols) + [None]:
            if s is not None and s < H2_BASE:
                raw.append(s)
                continue
            if raw:
                parts.append(repr(raw.decode("utf-8", errors="backslashreplace")))
                raw.clear()
            if s is None:
                break
            if s < H3_BASE:
                index = s - H2_BASE
                parts.append(f"{((index >> 5) << 7) | 0x40 | (index & 0x1F):02X}")
            elif s < PREFIX_BASE:
                index = s - H3_BASE
                parts.append(f"{((index >> 6) << 8) | 0x80 | (index & 0x3F):02X}")
            else:
                parts.append(f"P{self.groups[s - PREFIX_BASE]:02X}")
        return " ".join(parts)

    # --- encoding -------------------------------------------------------------------------
    def symbols(self, piece: bytes) -> list[int]:
        """The base symbols of one pre-token."""
        return list(self.map_pieces(piece, array("q", [len(piece)]))[0])

    def map_pieces(self, data: bytes, ends) -> tuple[array, array]:
        """Base symbols of the pieces data[ends[k-1]:ends[k]]: (int32 symbols, int64 offsets),
        piece k being symbols[offsets[k]:offsets[k + 1]]."""
        if self.name == "bytes":
            return _as_int32_symbols(data), array("q", [0, *ends])
        return map_pieces(data, array("q", ends), self._prefix_ids)

    @property
    def cjk_prefix_ids(self) -> array | None:
        """What the encode core needs to remap (None for the byte alphabet)."""
        return self._prefix_ids if self.name == "cjk" else None

    # --- decoding -------------------------------------------------------------------------
    def decode(self, symbols: Sequence[int], errors: str = "replace") -> str:
        """Text of base symbols; decode errors become U+FFFD, or raise DecodeError ("strict")
        naming the index of the symbol where the first one starts."""
        return self.decode_located(symbols, errors)[0]

    def decode_errors(self, symbols: Sequence[int]) -> int:
        return self.decode_located(symbols, "replace")[1]

    def decode_located(self, symbols: Sequence[int], errors: str,
                       locate: Callable[[int], int] = int) -> tuple[str, int]:
        """(text, number of decode errors); locate turns a symbol index into the position a
        strict DecodeError names (default: the symbol index itself; a Tokenizer names the id
        holding the symbol)."""
        if errors not in ("replace", "strict"):
            raise ValueError(f"errors must be 'replace' or 'strict', got {errors!r}")
        if self.name == "bytes":
            data, marks = bytes(symbols), []
        else:
            data, marks, _ = decode_symbols(array("i", symbols), self.groups)

        def symbol_at(offset: int) -> int:
            if self.name == "bytes":
                return offset
            starts = decode_symbols(array("i", symbols), self.groups, True)[2]
            return bisect_right(starts, offset) - 1

        return utf8_text(data, marks, errors, lambda offset: locate(symbol_at(offset)), locate)


BYTES = Alphabet("bytes")


def parse_groups(text: str) -> tuple[int, ...]:
    """'39,3a,3b' -> (0x39, 0x3A, 0x3B)."""
    try:
        return tuple(int(part, 16) for part in text.split(","))
    except ValueError:
        raise ValueError(f"cjk groups: expected hex groups like 39,3a,3b, got {text!r}") from None


def _as_int32_symbols(data: bytes) -> array:
    """One int32 per byte, by slice assignment into the low byte of each 4-byte slot.

    Much faster than array('i', list(data)); array('i', data) would instead reinterpret every
    4 bytes as one int.
    """
    wide = bytearray(4 * len(data))
    low_byte = 0 if sys.byteorder == "little" else 3
    wide[low_byte::4] = data
    symbols = array("i")
    symbols.frombytes(wide)
    return symbols


_replaced = threading.local()


def _count_and_replace(exc: UnicodeDecodeError):
    _replaced.count += 1
    return "\ufffd", exc.end


codecs.register_error("tokfx-count-replace", _count_and_replace)


def utf8_text(data: bytes, marks: list[tuple[int, int]], errors: str,
              locate_offset: Callable[[int], int], locate_symbol: Callable[[int], int]) -> tuple[str, int]:
    """(text, error count): UTF-8 text of data with one U+FFFD at each mark's (offset, symbol);
    invalid UTF-8 becomes U+FFFD as bytes.decode(errors="replace") does. With "strict" the first
    error raises DecodeError at locate_offset(byte offset) or locate_symbol(symbol index)."""
    parts, start = [], 0
    _replaced.count = 0
    for offset, symbol in marks + [(len(data), None)]:
        segment = data[start:offset]
        if errors == "strict":
            try:
                parts.append(segment.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise DecodeError(locate_offset(start + exc.start),
                                  f"invalid UTF-8 {segment[exc.start:exc.end]!r}") from None
        else:
            parts.append(segment.decode("utf-8", errors="tokfx-count-replace"))
        if symbol is not None:
            if errors == "strict":
                raise DecodeError(locate_symbol(symbol), "an h2 without its h3, an h3 without"
                                  " its h2, or an h2 h3 pair before any prefix symbol")
            parts.append("\ufffd")
        start = offset
    return "".join(parts), _replaced.count + len(marks)
