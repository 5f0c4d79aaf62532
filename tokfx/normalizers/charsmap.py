"""sentencepiece's precompiled charsmap (NormalizerSpec.precompiled_charsmap), decoded into its
rules {key: replacement}. Untrusted input (it comes inside a downloaded `.model` file): a
malformed blob is one TokenizerFileError, and decoding is bounded by tokfx.limits.

The blob (src/normalizer.cc, Normalizer::EncodePrecompiledCharsMap):

    uint32 (little-endian)  the size in bytes of the trie that follows
    the trie                a darts-clone double array of uint32 units over the keys' UTF-8
    the pool                the replacements, each ended by a NUL byte; a key's value in the
                            trie is the offset of its replacement in the pool

A unit (third_party/darts_clone/darts.h, DoubleArrayUnit): bit 31 set makes it a value unit
whose low 31 bits are the value; else bits 0-7 are its label, bit 8 says a key ends here, and
bits 10-31 an offset (shifted left 8 more when bit 9 is set). sentencepiece's lookup
(commonPrefixSearch) starts at unit 0; from the unit at `pos`, `base = pos ^ offset`, the byte
`c` leads to the unit at `base ^ c` if that unit's label is `c` (a value unit's label keeps bit
31, so it never matches a byte), and a key ending there has its value in the unit at that
unit's own base. The builder shares identical subtrees, so the trie is a graph without cycles,
not a tree: sentencepiece's nmt_nfkc holds 225,276 keys in 44,800 units.

Keys and replacements must be UTF-8 (sentencepiece's builder makes them from text; one that is
not would make sentencepiece cut characters apart), and each one's bytes are whole characters.
"""
from __future__ import annotations

import re
import struct
import sys
from array import array
from bisect import bisect_left

from tokfx.errors import TokenizerFileError
from tokfx.limits import (MAX_CHARSMAP_BYTES, MAX_CHARSMAP_DECODED_BYTES, MAX_CHARSMAP_KEY_BYTES,
                          MAX_CHARSMAP_RULES, MAX_CHARSMAP_TRIE_NODES)

_VALUE_UNIT = 1 << 31
_HAS_LEAF = 1 << 8


def decode_charsmap(blob: bytes, source: str, field: str = "normalizer_spec.precompiled_charsmap"
                    ) -> dict[str, str]:
    """The rules {key: replacement} of a precompiled charsmap; TokenizerFileError(source, field,
    ...) for a malformed one."""
    def fail(message: str):
        raise TokenizerFileError(source, field, message)

    if len(blob) > MAX_CHARSMAP_BYTES:
        fail(f"{len(blob):,} bytes: at most {MAX_CHARSMAP_BYTES:,}")
    if len(blob) <= 4:
        fail(f"{len(blob)} bytes: shorter than its header")
    (trie_size,) = struct.unpack_from("<I", blob)
    if trie_size == 0 or trie_size % 4 or trie_size > len(blob) - 4:
        fail(f"a trie of {trie_size:,} bytes: expected a positive multiple of 4 within the"
             f" {len(blob) - 4:,} bytes after the header")
    units = array("I", blob[4:4 + trie_size])
    if sys.byteorder == "big":
        units.byteswap()
    pool = blob[4 + trie_size:]
    keys, offsets = _keys(units, fail)
    replacements = _replacements(pool, set(offsets), fail)
    return dict(zip(_texts(keys, fail), map(replacements.__getitem__, offsets)))


def _keys(units: array, fail) -> tuple[list[bytes], list[int]]:
    """(keys, their values): the trie walked from unit 0, every path once."""
    size = len(units)
    by_base = {}  # base -> the units that some byte leads to from that base
    for i, unit in enumerate(units):
        if not unit & _VALUE_UNIT:
            by_base.setdefault(i ^ (unit & 0xFF), []).append(i)
    bases = [i ^ (unit >> 10) << ((unit & 1 << 9) >> 6) for i, unit in enumerate(units)]
    below = [by_base.get(base, ()) for base in bases]
    labels = [bytes((unit & 0xFF,)) for unit in units]
    keys, values, walked, key_bytes = [], [], 0, 0
    stack = [(0, b"")]
    while stack:
        i, key = stack.pop()
        walked += 1
        if walked > MAX_CHARSMAP_TRIE_NODES:
            fail(f"more than {MAX_CHARSMAP_TRIE_NODES:,} nodes on the trie's paths")
        if len(key) > MAX_CHARSMAP_KEY_BYTES:
            fail(f"a key longer than {MAX_CHARSMAP_KEY_BYTES:,} bytes (a loop?)")
        if key and units[i] & _HAS_LEAF:
            if bases[i] >= size:
                fail(f"unit {i}: its value is past the end of the trie")
            keys.append(key)
            values.append(units[bases[i]] & (_VALUE_UNIT - 1))
            key_bytes += len(key)
            if key_bytes > MAX_CHARSMAP_DECODED_BYTES:
                fail(f"its keys would take more than {MAX_CHARSMAP_DECODED_BYTES:,} bytes")
        stack += [(j, key + labels[j]) for j in below[i]]
    if len(keys) > MAX_CHARSMAP_RULES:
        fail(f"{len(keys):,} rules: at most {MAX_CHARSMAP_RULES:,}")
    return keys, values


def _replacements(pool: bytes, offsets: set[int], fail) -> dict[int, str]:
    """{offset: the NUL-terminated string there} for each offset used."""
    nuls = [match.start() for match in re.finditer(b"\0", pool)]  # bisected: a find could scan far
    replacements, total = {}, 0
    for offset in sorted(offsets):
        if offset >= len(pool):
            fail(f"a value {offset:,} points past the end of the {len(pool):,}-byte pool")
        i = bisect_left(nuls, offset)
        end = nuls[i] if i < len(nuls) else -1
        if end < 0:
            fail(f"the replacement at {offset:,} has no NUL after it")
        total += end - offset
        if total > MAX_CHARSMAP_DECODED_BYTES:
            fail(f"its replacements would take more than {MAX_CHARSMAP_DECODED_BYTES:,} bytes")
        replacements[offset] = _text(pool[offset:end], fail, f"the replacement at {offset:,}")
    return replacements


def _texts(keys: list[bytes], fail) -> list[str]:
    """The keys decoded, in one call when all are UTF-8 (0xFF, never in UTF-8, separates them)."""
    try:
        texts = b"\xff".join(keys).decode("utf-8", "surrogateescape").split("\udcff")
        if len(texts) == len(keys):
            "".join(texts).encode("utf-8")  # fails on a surrogate escaping an invalid byte
            return texts
    except UnicodeEncodeError:
        pass
    return [_text(key, fail, "a key") for key in keys]


def _text(raw: bytes, fail, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(f"{what} is not UTF-8 at byte {exc.start}: {raw[:16]!r}")
