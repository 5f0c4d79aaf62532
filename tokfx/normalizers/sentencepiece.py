"""sentencepiece's normalizer, exactly as its Normalizer::Normalize (src/normalizer.cc) does it.

Text is consumed left to right in pieces: at each position the longest user-defined symbol
there stays as it is (the model's prefix matcher, which goes before the rules), else the longest
key of the precompiled rules becomes its replacement, else one character stays. Then the
pieces' spaces (" " alone: after the rules, not tabs or U+3000) are handled: with
remove_extra_whitespaces, pieces that are exactly " " at the start are dropped and text with
nothing else normalizes to ""; a piece's leading spaces are dropped when the output so far ends
with a space (or is empty); trailing spaces are dropped (escaped, so a "▁" that the text itself
holds goes too). The dummy prefix (a space before the text, or after it with
treat_whitespace_as_suffix) comes with any text that is not empty then, and escape_whitespaces
writes every space as "▁" (U+2581).

A Python str may hold lone surrogates, which sentencepiece cannot be given: they become U+FFFD
first, as everywhere in tokfx (tokfx.normalizers.surrogates).

The core (tokfx._spm_normalize) runs this over the text's UTF-8 in C, looking keys up in the
charsmap's own double array, as sentencepiece does; `pieces` and `_normalize_pieces` here are its
pure-Python twin, over the decoded rules.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from tokfx._spm_normalize import SentencePieceNormalizerCore
from tokfx.normalizers.charsmap import decode_charsmap
from tokfx.normalizers.surrogates import replace_lone_surrogates, utf8_encodable

SPACE_SYMBOL = "\u2581"
_SPACES = re.compile("  +")


class SentencePieceNormalizer:
    """normalize(text) equals sentencepiece's normalization of text with these settings; a
    `charsmap` (NormalizerSpec.precompiled_charsmap) that is malformed raises
    TokenizerFileError naming `source`."""

    def __init__(self, charsmap: bytes = b"", add_dummy_prefix: bool = True,
                 remove_extra_whitespaces: bool = True, escape_whitespaces: bool = True,
                 treat_whitespace_as_suffix: bool = False, user_defined_symbols=(),
                 source: str = "precompiled charsmap"):
        self.charsmap = charsmap  # kept to be written again (tokfx.json, tokenizer.model)
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        rules = decode_charsmap(charsmap, source) if charsmap else {}  # checks the blob for the core
        # One-character keys (one that maps to itself changes nothing) and longer ones: the twin's.
        self._single = {key: value for key, value in rules.items() if len(key) == 1 and key != value}
        self._multi = {key: value for key, value in rules.items() if len(key) > 1}
        self._longest = max(map(len, self._multi), default=0)
        symbols = sorted({s for s in user_defined_symbols if s}, key=lambda s: (-len(s), s))
        self.user_defined_symbols = tuple(symbols)
        self._user = re.compile("|".join(map(re.escape, symbols))) if symbols else None
        self._space = SPACE_SYMBOL if escape_whitespaces else " "
        self._whitespace_only = not (self._single or self._multi or symbols)
        self._core = SentencePieceNormalizerCore(charsmap, add_dummy_prefix, remove_extra_whitespaces,
                                                 escape_whitespaces, treat_whitespace_as_suffix, symbols)

    def _settings(self) -> tuple:
        return (self.charsmap, self.add_dummy_prefix, self.remove_extra_whitespaces, self.escape_whitespaces,
                self.treat_whitespace_as_suffix, self.user_defined_symbols)

    def __eq__(self, other) -> bool:
        return isinstance(other, SentencePieceNormalizer) and self._settings() == other._settings()

    def __hash__(self) -> int:
        return hash(self._settings())

    @property
    def name(self) -> str:
        """As a NormalizerSpec names its rules: "identity" for none."""
        return "identity" if not self.charsmap else "precompiled"

    def denormalize(self, text: str | Sequence[str], unknown: str = "") -> str:
        """Decoded text as sentencepiece decodes it: U+2581 as a space, without the dummy one
        (the one it strips from the first piece's front; with treat_whitespace_as_suffix too,
        and the last piece keeps its trailing one: sentencepiece 0.2.3 decodes so). `text` may
        come as the parts between unknown pieces, each written as `unknown` (its unk_surface),
        which sentencepiece writes as it is: no U+2581 in it becomes a space, and a dummy space
        is stripped only from text around it."""
        parts = [text] if isinstance(text, str) else list(text)
        if self.escape_whitespaces:
            parts = [part.replace(SPACE_SYMBOL, " ") for part in parts]
        if not (self.add_dummy_prefix or self.remove_extra_whitespaces):
            return unknown.join(parts)
        # sentencepiece strips the space in front of a piece while it has written nothing: once,
        # or with remove_extra_whitespaces from each such piece (after an empty unknown text).
        written, stripped = [], False
        for k, part in enumerate(parts):
            if k:
                written.append(unknown)
            if part.startswith(" ") and not any(written) and (self.remove_extra_whitespaces or not stripped):
                part, stripped = part[1:], True
            written.append(part)
        return "".join(written)

    @property
    def is_identity(self) -> bool:
        """No rules: only the whitespace handling applies."""
        return not (self._single or self._multi)

    def normalize(self, text: str) -> str:
        if not self._whitespace_only:
            try:
                return self._core.normalize(text)
            except UnicodeEncodeError:
                return self._core.normalize(replace_lone_surrogates(text))
        # No rules or user symbols (tokfx's own `sentencepiece` pattern): every piece is one
        # character, so the whitespace rules are a few str operations, faster than the core's loop.
        if not text:
            return ""
        text = utf8_encodable(text)
        space = self._space
        dummy = space if self.add_dummy_prefix else ""
        if not self.remove_extra_whitespaces:
            body = text.replace(" ", space) if self.escape_whitespaces else text
            return body + dummy if self.treat_whitespace_as_suffix else dummy + body
        # Runs of spaces collapsed and leading ones cut; the trailing strip also takes the text's
        # own trailing "▁" when escaping, as sentencepiece's does.
        body = _SPACES.sub(" ", text).lstrip(" ")
        if self.escape_whitespaces:
            body = body.replace(" ", space)
        if not body:
            return ""  # spaces alone: sentencepiece drops them before the dummy prefix
        return body.rstrip(space) + dummy if self.treat_whitespace_as_suffix else (dummy + body).rstrip(space)

    def normalize_utf8(self, text: str) -> bytes:
        """normalize(text) as UTF-8: the core writes it so (what the encoders take), without the
        str that `normalize` decodes from it."""
        if self._whitespace_only:
            return self.normalize(text).encode("utf-8")
        try:
            return self._core.normalize_utf8(text)
        except UnicodeEncodeError:
            return self._core.normalize_utf8(replace_lone_surrogates(text))

    def pieces(self, text: str):
        """The replacement of each piece of `text` in order, as sentencepiece's NormalizePrefix
        consumes it."""
        i = 0
        while i < len(text):
            found = self._long_piece(text, i)
            if found:
                i, piece = found
                yield piece
            else:
                yield self._single.get(text[i], text[i])
                i += 1

    def _long_piece(self, text: str, i: int) -> tuple[int, str] | None:
        """(end, replacement) of the piece at `i` if it is longer than one character: the
        longest user symbol there, else the longest multi-character key."""
        if self._user:
            symbol = self._user.match(text, i)
            if symbol:
                return symbol.end(), symbol.group()
        for length in range(min(self._longest, len(text) - i), 1, -1):
            replacement = self._multi.get(text[i:i + length])
            if replacement is not None:
                return i + length, replacement
        return None

    def _normalize_pieces(self, pieces) -> str:
        """Normalizer::Normalize's loop over the pieces, one by one."""
        pieces = list(pieces)
        if not pieces:  # empty text
            return ""
        start = 0
        if self.remove_extra_whitespaces:
            while start < len(pieces) and pieces[start] == " ":
                start += 1
            if start == len(pieces):
                return ""
        space = self._space
        dummy = space if self.add_dummy_prefix else ""
        out = [] if self.treat_whitespace_as_suffix else [dummy]
        after_space = self.remove_extra_whitespaces
        for piece in pieces[start:]:
            if after_space:
                piece = piece.lstrip(" ")
            if piece:
                out.append(piece.replace(" ", space))
                after_space = self.remove_extra_whitespaces and piece.endswith(" ")
        normalized = "".join(out)
        if self.remove_extra_whitespaces:
            normalized = normalized.rstrip(space)
        return normalized + dummy if self.treat_whitespace_as_suffix else normalized
