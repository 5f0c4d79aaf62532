"""The native form of Hugging Face's pre-tokenizers that split at the characters of one class
(BertPreTokenizer, Punctuation, Digits, WhitespaceSplit, a Split of `[0-9]` written k times):
tokfx._class_split over (data, piece ends), with the class as a bitmap built from the same regex
that the Python twin (tokfx.pre_tokenizers.huggingface) matches, so both test the same class."""
from __future__ import annotations

from array import array
from collections.abc import Callable
from functools import lru_cache

import regex

from tokfx._class_split import class_split
from tokfx.normalizers.code_point_sets import bitmap, code_point_bitmap
from tokfx.pre_tokenizers.byte_level import spell

NativeStep = Callable[[bytes, array], tuple[bytes, array]]


@lru_cache(maxsize=None)
def class_members(test: str, byte_units: bool) -> bytes:
    """The bitmap of the characters that the one-character regex `test` matches: over code
    points, or with `byte_units` over the bytes whose GPT-2 spelling it matches (after a
    ByteLevel step each byte is one character)."""
    compiled = regex.compile(test)
    if byte_units:
        return bitmap((b for b in range(256) if compiled.fullmatch(spell(bytes([b])))), 256)
    return code_point_bitmap(compiled)


def class_split_step(test: str, behaviour: str, byte_units: bool, group: int = 1) -> NativeStep:
    """The step that cuts each piece at the matches of `test` written `group` times."""
    members = class_members(test, byte_units)
    return lambda data, ends: class_split(data, ends, members, byte_units, group, behaviour)
