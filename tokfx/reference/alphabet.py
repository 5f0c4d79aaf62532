"""Pure-Python twin of ext/_alphabet.pyx: the CJK-remapped alphabet of docs/cjk_remap.md.

A well-formed 3-byte character `b1 b2 b3` whose group `p = b1 >> 2` is remapped becomes
[prefix(p)] h2 h3; the prefix is written only when it differs from the pre-token's current one.
Ids: 0-255 raw bytes, 256 + index of h2, 384 + index of h3, 512 + rank of p among the groups.
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
    prefix_ids = {p: PREFIX_BASE + rank for rank, p in enumerate(sorted(groups))}
    symbols, current, i = [], None, 0
    while i < len(piece):
        b1 = piece[i]
        if i + 2 < len(piece) and b1 >> 2 in prefix_ids and is_remappable(*piece[i:i + 3]):
            if current != b1 >> 2:
                current = b1 >> 2
                symbols.append(prefix_ids[current])
            symbols += [h2_id(b1, piece[i + 1]), h3_id(piece[i + 1], piece[i + 2])]
            i += 3
        else:
            symbols.append(b1)
            i += 1
    return symbols


def cjk_bytes(symbols: list[int], groups: tuple[int, ...]) -> tuple[bytes, list[tuple[int, int]], list[int]]:
    """Decode base symbols with one prefix state for the whole sequence.

    Returns (bytes, errors, starts): each error is (offset in the bytes where a U+FFFD belongs,
    index of the offending symbol); starts[k] is the offset of symbol k's first byte.
    """
    ordered = sorted(groups)
    out, errors, starts = bytearray(), [], []
    prefix, k = None, 0
    while k < len(symbols):
        s = symbols[k]
        if not 0 <= s < PREFIX_BASE + len(ordered):
            raise ValueError(f"symbol {s} at {k} is outside the alphabet 0..{PREFIX_BASE + len(ordered) - 1}")
        starts.append(len(out))
        if s < H2_BASE:
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
