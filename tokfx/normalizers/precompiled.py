"""Hugging Face's `Precompiled` normalizer: a sentencepiece charsmap (tokfx.normalizers.charsmap)
applied as `tokenizers` applies it (src/normalizers/precompiled.rs, with the spm_precompiled
crate's `transform`), which is not sentencepiece's longest-match rule:

- the text is cut into extended grapheme clusters (UAX #29's, as unicode-segmentation cuts
  them: not quite `regex`'s \\X, see tokfx.reference.precompiled);
- a cluster of fewer than 6 UTF-8 bytes that starts with some rule's key is replaced, whole, by the
  replacement of the shortest such key (the first of the trie's common prefix search), even
  when that key is only its first character;
- any other cluster is rewritten character by character, each by its own rule or kept.

It runs natively (tokfx._precompiled, its clusters from tokfx.normalizers.grapheme_classes);
its twin, the same rule in Python, is tokfx.reference.precompiled.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from tokfx._precompiled import PrecompiledCore
from tokfx.errors import TokenizerFileError
from tokfx.normalizers.charsmap import decode_charsmap
from tokfx.normalizers.grapheme_classes import grapheme_classes


def precompiled_step(spec: dict, field: str) -> Callable[[str], str]:
    """The step of a {"type": "Precompiled", "precompiled_charsmap": base64} normalizer."""
    return PrecompiledCore(_charsmap(spec, field), grapheme_classes()).normalize


def _charsmap(spec: dict, field: str) -> bytes:
    """The spec's charsmap, checked by decoding its rules (ValueError naming the field)."""
    value = spec.get("precompiled_charsmap")
    try:
        blob = base64.b64decode(value, validate=True) if isinstance(value, str) else None
    except binascii.Error:
        blob = None
    if blob is None:
        raise ValueError(f"{field}.precompiled_charsmap: expected the charsmap in base64")
    try:
        decode_charsmap(blob, "tokenizer.json", f"{field}.precompiled_charsmap")
    except TokenizerFileError as exc:  # named again by the tokenizer.json's reader
        raise ValueError(f"{exc.field}: {exc.message}") from None
    return blob
