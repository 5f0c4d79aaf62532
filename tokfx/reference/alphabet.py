"""Pure-Python twin of ext/_alphabet.pyx and ext/symbol_map.pxd: the alphabets of tokfx.alphabet.

cjk (docs/cjk_remap.md): a well-formed 3-byte character `b1 b2 b3` whose group `p = b1 >> 2` is
remapped becomes [prefix(p)] h2 h3; the prefix is written only when it differs from the
pre-token's current one. Ids: 0-255 raw bytes, 256 + index of h2, 384 + index of h3, 512 + rank
of p among the groups.

chars and chars-cjk: a covered character is its own symbol (after the byte-level ones, in code
point order); any other character is its bytes, remapped as above with groups. chars with an
unknown symbol: symbol 0 for any other character (and for each byte that is not UTF-8), the
characters from 1.
"""

H2_BASE, H3_BASE, PREFIX_BASE = 256, 384, 512


def is_remappable(b1: int, b2: int, b3: int) -> bool:
    """A well-formed 3-byte UTF-8 sequence: no overlong form (E0 80-9F) and no surrogate (ED A0-BF)."""
    return (0xE0 <= b1 <= 0xEF and 0x80 <= b2 <= 0xBF and 0x80 <= b3 <= 0xBF
            and not (b1 == 0xE0 and b2 < 0xA0) and not (b1 == 0xED and b2 >= 0xA0))


def h2_id(b1: int, b2: int) -> int:
    # h2 = (b1 & 3) << 7 | b2 >> 1 takes the 128 values 0x40-0x5F, 0xC0-0xDF, ...; rank them.
    return H2_BASE + ((b1 & 3) << 5) + ((b2 >> 1) & 0x1F)


def h3_id(b2: int, b3: int) -> int:
    # h3 = (b2 & 1) << 8 | b3 takes the 128 values 0x80-0xBF, 0x180-0x1BF.
    return H3_BASE + ((b2 & 1) << 6) + (b3 & 0x3F)


def cjk_symbols(piece: bytes, groups: tuple[int, ...]) -> list[int]:
    """The base-symbol ids of one pre-token (it starts with no current prefix)."""
    return char_symbols(piece, "", groups, covering=False)


def char_symbols(piece: bytes, characters: str, groups: tuple[int, ...], covering: bool = True,
                 unknown: bool = False) -> list[int]:
    """The base-symbol ids of one pre-token in a chars alphabet (chars-cjk with groups; with
    `unknown`, chars with an unknown symbol); with covering=False, of the cjk alphabet (or bytes,
    without groups)."""
    if unknown:
        return _unknown_char_symbols(piece, characters)
    prefix_ids = {p: PREFIX_BASE + rank for rank, p in enumerate(sorted(groups))}
    char_base = PREFIX_BASE + len(groups) if groups else H2_BASE
    char_ids = {c: char_base + rank for rank, c in enumerate(sorted(characters))}
    symbols, current, i = [], None, 0
    while i < len(piece):
        length = _utf8_length(piece, i) if covering else 0
        if length and piece[i:i + length].decode() in char_ids:
            symbols.append(char_ids[piece[i:i + length].decode()])
            i += length
            continue
        b1 = piece[i]
        if (i + 2 < len(piece) and b1 >> 2 in prefix_ids and is_remappable(*piece[i:i + 3])
                and (length == 3 or not covering)):
            if current != b1 >> 2:
                current = b1 >> 2
                symbols.append(prefix_ids[current])
            symbols += [h2_id(b1, piece[i + 1]), h3_id(piece[i + 1], piece[i + 2])]
            i += 3
        else:
            symbols += piece[i:i + max(length, 1)]
            i += max(length, 1)
    return symbols


def _unknown_char_symbols(piece: bytes, characters: str) -> list[int]:
    char_ids = {c: 1 + rank for rank, c in enumerate(sorted(characters))}
    symbols, i = [], 0
    while i < len(piece):
        length = _utf8_length(piece, i)
        symbols.append(char_ids.get(piece[i:i + length].decode(), 0) if length else 0)
        i += max(length, 1)
    return symbols


def _utf8_length(data: bytes, i: int) -> int:
    """The length of the one UTF-8 character (as Python decodes strictly) at data[i], or 0."""
    for length in range(1, min(4, len(data) - i) + 1):
        try:
            data[i:i + length].decode("utf-8")
            return length  # the shorter prefixes failed, so this is one character
        except UnicodeDecodeError:
            continue
    return 0


def cjk_bytes(symbols: list[int], groups: tuple[int, ...], characters: str = "",
              unknown: str | None = None) -> tuple[bytes, list[tuple[int, int]], list[int]]:
    """Decode base symbols with one prefix state for the whole sequence (groups: the remapped
    ones, maybe none; characters: a chars alphabet's, after the byte-level symbols, or after the
    unknown symbol 0, which writes `unknown`, when that is given).

    Returns (bytes, errors, starts): each error is (offset in the bytes where a U+FFFD belongs,
    index of the offending symbol); starts[k] is the offset of symbol k's first byte.
    """
    ordered = sorted(groups)
    char_base = PREFIX_BASE + len(ordered) if ordered else H2_BASE
    if unknown is not None:
        char_base = 1
    characters = sorted(characters)
    out, errors, starts = bytearray(), [], []
    prefix, k = None, 0
    while k < len(symbols):
        s = symbols[k]
        if not 0 <= s < char_base + len(characters):
            raise ValueError(f"symbol {s} at {k} is outside the alphabet 0..{char_base + len(characters) - 1}")
        starts.append(len(out))
        if s >= char_base:
            out += characters[s - char_base].encode()
        elif unknown is not None:
            out += unknown.encode()
        elif s < H2_BASE:
            out.append(s)
        elif s < H3_BASE:
            if k + 1 < len(symbols) and H3_BASE <= symbols[k + 1] < PREFIX_BASE and prefix is not None:
                h2, h3 = s - H2_BASE, symbols[k + 1] - H3_BASE
                out += bytes([(prefix << 2) | (h2 >> 5), 0x80 | ((h2 & 0x1F) << 1) | (h3 >> 6),
                              0x80 | (h3 & 0x3F)])
                starts.append(len(out) - 3)
                k += 1
            else:
                # An h2 with no prefix yet consumes its h3 too: the pair is one error.
                errors.append((len(out), k))
                if k + 1 < len(symbols) and H3_BASE <= symbols[k + 1] < PREFIX_BASE:
                    starts.append(len(out))
                    k += 1
        elif s < PREFIX_BASE:
            errors.append((len(out), k))
        else:
            prefix = ordered[s - PREFIX_BASE]
        k += 1
    return bytes(out), errors, starts
