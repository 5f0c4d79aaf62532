"""The native form of Hugging Face's pre-tokenizers that split at the characters of one class
(BertPreTokenizer, Punctuation, Digits, WhitespaceSplit, a Split of `[0-9]` written k times):
tokfx._class_split over (data, piece ends), with the class as a bitmap built from the same regex
that the Python twin (tokfx.pre_tokenizers.huggingface) matches, so both test the same class."""
from __future__ import annotations

from array import array
from collections.abc import Callable
from functools import lru_cache

import regex

from tokfx._class_split import CODE_POINTS, class_split
from tokfx.pre_tokenizers.byte_level import spell

NativeStep = Callable[[bytes, array], tuple[bytes, array]]
_SURROGATES = range(0xD800, 0xE000)


@lru_cache(maxsize=1)
def _every_code_point() -> str:
    """Every code point but the surrogates, in order (index i is code point i, or i + 0x800
    past the surrogates)."""
    return "".join(map(chr, range(_SURROGATES.start))) + "".join(map(chr, range(_SURROGATES.stop, CODE_POINTS)))


@lru_cache(maxsize=None)
def class_members(test: str, byte_units: bool) -> bytes:
    """The bitmap of the characters that the one-character regex `test` matches: over code
    points, or with `byte_units` over the bytes whose GPT-2 spelling it matches (after a
    ByteLevel step each byte is one character)."""
    compiled = regex.compile(test)
    if byte_units:
        members = [b for b in range(256) if compiled.fullmatch(spell(bytes([b])))]
        bits = bytearray(256 // 8)
    else:
        gap = len(_SURROGATES)
        members = [i if i < _SURROGATES.start else i + gap
                   for match in regex.finditer(f"(?:{test})+", _every_code_point()) for i in range(*match.span())]
        bits = bytearray(CODE_POINTS // 8)
    for code in members:
        bits[code >> 3] |= 1 << (code & 7)
    return bytes(bits)


def class_split_step(test: str, behaviour: str, byte_units: bool, group: int = 1) -> NativeStep:
    """The step that cuts each piece at the matches of `test` written `group` times."""
    members = class_members(test, byte_units)
    return lambda data, ends: class_split(data, ends, members, byte_units, group, behaviour)
