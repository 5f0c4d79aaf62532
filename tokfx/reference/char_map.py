"""Twin of tokfx._char_map: a character map over a str, by bitmaps over code points."""
from __future__ import annotations


def _has(bits: bytes, code: int) -> bool:
    return code >> 3 < len(bits) and bits[code >> 3] >> (code & 7) & 1 == 1


def char_map(text: str, dropped: bytes, spaced: bytes, padded: bytes) -> str:
    out = []
    for char in text:
        code = ord(char)
        if _has(dropped, code):
            continue
        out.append(" " if _has(spaced, code) else f" {char} " if _has(padded, code) else char)
    return "".join(out)


def first_member(text: str, members: bytes) -> int:
    return next((i for i, char in enumerate(text) if _has(members, ord(char))), -1)
