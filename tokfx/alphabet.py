"""Base-symbol alphabets (docs/alphabets.md):

- `bytes`: ids 0-255, a pre-token's UTF-8 bytes.
- `cjk`, the remapped alphabet of docs/cjk_remap.md: 0-255 raw bytes, 256-383 the h2 values,
  384-511 the h3 values, then one prefix symbol per remapped lead-byte group in increasing order.
- `chars`: characters with byte fallback (the sentencepiece family): 0-255 the fallback bytes,
  then one symbol per covered character in code point order. A character not covered is
  spelled as its UTF-8 bytes.
- `chars-cjk`: `chars` whose fallback characters are remapped as `cjk` remaps them: 0-511 and the
  prefixes as in `cjk`, then the characters.
- `chars` with `unknown` (sentencepiece without byte fallback, T5, ALBERT): 0 the unknown symbol,
  which any character not covered becomes (decoded as the `unknown` text), then the characters.

A pre-token maps to symbols on its own (it starts with no current prefix); a symbol sequence
decodes with one prefix state throughout.
"""
from __future__ import annotations

import codecs
import struct
import sys
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

from tokfx._alphabet import character_counts, decode_symbols, map_pieces, prefix_table
from tokfx._count_table import packed_counts

DEFAULT_CJK_GROUPS = (0x39, 0x3A, 0x3B)
CJK_GROUP_RANGE = range(0x38, 0x3C)  # the groups of lead bytes E0-EF
H2_BASE, H3_BASE, PREFIX_BASE = 256, 384, 512


class DecodeError(ValueError):
    """Raised by decode(..., errors="strict"): `position` indexes the input sequence."""

    def __init__(self, position: int, reason: str):
        super().__init__(f"decode error at position {position}: {reason}")
        self.position = position
        self.reason = reason


NAMES = ("bytes", "cjk", "chars", "chars-cjk")
REMAPPED = ("cjk", "chars-cjk")  # the alphabets with groups
CHARACTERS = ("chars", "chars-cjk")  # the alphabets with characters
# sentencepiece's default: the characters that cover this share of the training text.
DEFAULT_CHARACTER_COVERAGE = 0.9995


@dataclass(frozen=True)
class Alphabet:
    name: str
    groups: tuple[int, ...] = ()
    characters: str = ""  # chars, chars-cjk: the covered characters (sorted by code point)
    # chars only: None for byte fallback, else what the unknown symbol decodes to (sentencepiece's
    # unk_surface, " \u2047 " by default); it replaces the 256 fallback bytes as symbol 0.
    unknown: str | None = None

    def __post_init__(self):
        if self.name not in NAMES:
            raise ValueError(f"unknown alphabet {self.name!r}; known: {', '.join(NAMES)}")
        if self.name in REMAPPED:
            groups = tuple(sorted(set(self.groups)))
            if not groups or any(p not in CJK_GROUP_RANGE for p in groups):
                raise ValueError(f"cjk groups must be a non-empty subset of 0x38-0x3B, got "
                                 f"{[hex(p) for p in self.groups]}")
            object.__setattr__(self, "groups", groups)
        elif self.groups:
            raise ValueError(f"the {self.name} alphabet takes no groups")
        if self.name in CHARACTERS:
            characters = "".join(sorted(set(self.characters)))
            if len(characters) != len(self.characters) or any("\ud800" <= c <= "\udfff" for c in characters):
                raise ValueError("characters must be distinct and have UTF-8 forms (no surrogates)")
            object.__setattr__(self, "characters", characters)
        elif self.characters:
            raise ValueError(f"the {self.name} alphabet takes no characters")
        if self.unknown is not None:
            if self.name != "chars":
                raise ValueError(f"the {self.name} alphabet takes no unknown symbol (chars does)")
            if not isinstance(self.unknown, str) or any("\ud800" <= c <= "\udfff" for c in self.unknown):
                raise ValueError("unknown: the text of the unknown symbol, with a UTF-8 form (no surrogates)")
        object.__setattr__(self, "_prefix_ids", prefix_table(self.groups) if self.groups else None)
        object.__setattr__(self, "_char_ids", self._char_table() if self.name in CHARACTERS else None)

    def _char_table(self) -> array:
        """Code point -> symbol, -1 where not covered (what the cores read: symbol_map.pxd)."""
        table = array("i", [-1]) * (ord(self.characters[-1]) + 1 if self.characters else 0)
        for rank, char in enumerate(self.characters, self.char_base):
            table[ord(char)] = rank
        return table

    @classmethod
    def named(cls, name: str, cjk_groups: Sequence[int] | str | None = None, characters: str = "") -> "Alphabet":
        """`cjk_groups`: group numbers, or hex text like "39,3a,3b" (as the command line gives
        them); None for the default groups."""
        if isinstance(cjk_groups, str):
            cjk_groups = parse_groups(cjk_groups)
        if name not in REMAPPED and cjk_groups is not None:
            raise ValueError(f"cjk_groups given for the {name!r} alphabet")
        groups = tuple(DEFAULT_CJK_GROUPS if cjk_groups is None else cjk_groups) if name in REMAPPED else ()
        return cls(name, groups, characters)

    def with_characters(self, characters: str) -> "Alphabet":
        return Alphabet(self.name, self.groups, characters, self.unknown)

    @property
    def char_base(self) -> int:
        """The first character symbol (also the size of a byte-level alphabet)."""
        if self.unknown is not None:
            return 1
        return PREFIX_BASE + len(self.groups) if self.groups else 256

    @property
    def unknown_symbol(self) -> int | None:
        """The symbol of every character not covered, or None (byte fallback)."""
        return None if self.unknown is None else 0

    @property
    def size(self) -> int:
        return self.char_base + len(self.characters)

    def to_dict(self) -> dict:
        doc = {"name": self.name}
        if self.groups:
            doc["groups"] = list(self.groups)
        if self.characters:
            doc["characters"] = self.characters
        if self.unknown is not None:
            doc["unknown"] = self.unknown
        return doc

    @classmethod
    def from_dict(cls, doc: dict) -> "Alphabet":
        return cls(doc["name"], tuple(doc.get("groups", ())), doc.get("characters", ""), doc.get("unknown"))

    # --- tokens ---------------------------------------------------------------------------
    def token(self, symbols: Sequence[int]) -> bytes | tuple[int, ...]:
        """How a Tokenizer holds a token: bytes for the byte alphabet, else a tuple of symbols."""
        return bytes(symbols) if self.name == "bytes" else tuple(symbols)

    def token_of_text(self, text: str) -> bytes | tuple[int, ...]:
        """A special token's symbols: its text mapped as one pre-token."""
        return self.token(self.symbols(text.encode("utf-8")))

    def show(self, symbols: Sequence[int]) -> str:
        """Readable symbols: runs of raw bytes and characters as a quoted string (with a chars
        alphabet, fallback bytes as <0xE4>), `P39` for a prefix, and the spec's 9-bit value in
        hex for an h2 or h3 (`P39 5E 97` is 众), and `<unk>` for the unknown symbol."""
        if self.name == "bytes":
            return repr(bytes(symbols).decode("utf-8", errors="backslashreplace"))
        parts, raw = [], bytearray()
        for s in list(symbols) + [None]:
            if s is not None and (s >= self.char_base or s < H2_BASE and self.name == "cjk"):
                raw += self.characters[s - self.char_base].encode() if s >= self.char_base else bytes([s])
                continue
            if raw:
                parts.append(repr(raw.decode("utf-8", errors="backslashreplace")))
                raw.clear()
            if s is None:
                break
            if self.unknown is not None:
                parts.append("<unk>")  # the only symbol below char_base
            elif s < H2_BASE:
                parts.append(f"<0x{s:02X}>")
            elif s < H3_BASE:
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
        ends = ends if isinstance(ends, array) and ends.typecode == "q" else array("q", ends)
        if self.name == "bytes":
            return _as_int32_symbols(data), array("q", [0]) + ends
        return map_pieces(data, ends, self._prefix_ids, self._char_ids, self.size, self.unknown_symbol)

    @property
    def symbol_map(self) -> dict:
        """What an encode core needs to map bytes to symbols (symbol_map.pxd): the remap's
        prefix table, the code point -> symbol table and the unknown symbol, each None where the
        alphabet has none."""
        return {"cjk_prefix_ids": self._prefix_ids, "char_ids": self._char_ids,
                "unknown_symbol": self.unknown_symbol}

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
            data, marks, _ = decode_symbols(array("i", symbols), self.groups, False, *self._char_utf8)

        def symbol_at(offset: int) -> int:
            if self.name == "bytes":
                return offset
            starts = decode_symbols(array("i", symbols), self.groups, True, *self._char_utf8)[2]
            return bisect_right(starts, offset) - 1

        return utf8_text(data, marks, errors, lambda offset: locate(symbol_at(offset)), locate)

    def texts_between_unknowns(self, symbols: Sequence[int], errors: str = "replace") -> list[str]:
        """The texts of the runs of symbols around the unknown ones (one more text than there
        are unknown symbols), for a decoder that writes the unknown symbol its own way."""
        symbols, parts, start = array("i", symbols), [], 0
        while True:
            try:
                end = symbols.index(self.unknown_symbol, start)
            except ValueError:
                parts.append(self.decode(symbols[start:], errors))
                return parts
            parts.append(self.decode(symbols[start:end], errors))
            start = end + 1

    @cached_property
    def _char_utf8(self) -> tuple:
        """decode_symbols' char_utf8 and char_offsets (none for a byte-level alphabet), then its
        unknown_utf8 where the alphabet has an unknown symbol."""
        if self.name not in CHARACTERS:
            return ()
        encoded = [c.encode("utf-8") for c in self.characters]
        found = b"".join(encoded), array("q", [0, *accumulate(map(len, encoded))])
        return found if self.unknown is None else (*found, self.unknown.encode("utf-8"))

    def covering(self, counts: Mapping[bytes, int], coverage: float = DEFAULT_CHARACTER_COVERAGE) -> "Alphabet":
        """This chars alphabet with the characters that cover `coverage` of the characters of
        the pre-tokens `counts`, chosen as sentencepiece chooses them: by count, highest first
        (ties to the lower code point), until the chosen ones cover the share."""
        if self.name not in CHARACTERS:
            raise ValueError(f"the {self.name} alphabet has no characters to choose")
        check_character_coverage(self, coverage)
        found = character_counts(*packed_counts(counts))
        # sentencepiece holds the coverage as a float32 and compares the share covered with it.
        coverage = _float32(coverage)
        total, covered, chosen = sum(found.values()), 0, []
        for code_point, count in sorted(found.items(), key=lambda item: (-item[1], item[0])):
            if covered / total >= coverage:
                break
            covered += count
            chosen.append(chr(code_point))
        return self.with_characters("".join(chosen))


BYTES = Alphabet("bytes")


def unknown_score(scores: Sequence[float]) -> float:
    """What an uncovered character costs in a sentencepiece Unigram whose normal pieces score
    `scores`: its lattice's unknown node, float32(min score - 10) (kUnkPenalty)."""
    return _float32(_float32(min(scores)) - 10.0)


def fallback_byte_scores(scores: Sequence[float]) -> list[float]:
    """Scores of the 256 fallback bytes for a Unigram over a chars alphabet, given the other
    tokens' `scores`, so that an uncovered character costs what it costs in sentencepiece
    (unknown_score), here on the character's first byte, its continuation bytes (0x80-0xBF)
    scoring 0, which leaves a float32 sum unchanged."""
    unknown = unknown_score(scores)
    return [0.0 if 0x80 <= b < 0xC0 else unknown for b in range(256)]


def _float32(x: float) -> float:
    """x rounded to a float32, as sentencepiece holds its numbers."""
    return struct.unpack("f", struct.pack("f", x))[0]


def check_character_coverage(alphabet: Alphabet, coverage: float | None) -> None:
    """A coverage (None: the default) for a chars alphabet only, a number in (0, 1]."""
    if coverage is None:
        return
    if alphabet.name not in CHARACTERS:
        raise ValueError(f"character_coverage given for the {alphabet.name!r} alphabet (it applies to"
                         " chars and chars-cjk)")
    if isinstance(coverage, bool) or not isinstance(coverage, (int, float)) or not 0 < coverage <= 1:
        raise ValueError(f"character_coverage must be a number in (0, 1], got {coverage!r}")


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
