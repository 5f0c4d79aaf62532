"""Hugging Face's `Precompiled` normalizer: a sentencepiece charsmap (tokfx.normalizers.charsmap)
applied as `tokenizers` applies it (src/normalizers/precompiled.rs, with the spm_precompiled
crate's `transform`), which is not sentencepiece's longest-match rule:

- the text is cut into extended grapheme clusters (unicode-segmentation's, `regex`'s \\X here);
- a cluster of fewer than 6 UTF-8 bytes that some rule's key starts is replaced, whole, by the
  replacement of the shortest such key (the first of the trie's common prefix search), even
  when that key is only its first character;
- any other cluster is rewritten character by character, each by its own rule or kept.
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

import regex

from tokfx.errors import TokenizerFileError
from tokfx.normalizers.charsmap import decode_charsmap

_GRAPHEME = regex.compile(r"\X")


def precompiled_step(spec: dict, field: str) -> Callable[[str], str]:
    """The step of a {"type": "Precompiled", "precompiled_charsmap": base64} normalizer."""
    value = spec.get("precompiled_charsmap")
    try:
        blob = base64.b64decode(value, validate=True) if isinstance(value, str) else None
    except binascii.Error:
        blob = None
    if blob is None:
        raise ValueError(f"{field}.precompiled_charsmap: expected the charsmap in base64")
    try:
        rules = decode_charsmap(blob, "tokenizer.json", f"{field}.precompiled_charsmap")
    except TokenizerFileError as exc:  # named again by the tokenizer.json's reader
        raise ValueError(f"{exc.field}: {exc.message}") from None
    longest = max(map(len, rules), default=0)

    def shortest_rule(text: str) -> str | None:
        for size in range(1, min(len(text), longest) + 1):
            found = rules.get(text[:size])
            if found is not None:
                return found
        return None

    def cluster(match: regex.Match) -> str:
        text = match.group()
        if len(text.encode("utf-8")) < 6:
            found = shortest_rule(text)
            if found is not None:
                return found
        return "".join(rules.get(c, c) for c in text)

    return lambda text: _GRAPHEME.sub(cluster, text)
