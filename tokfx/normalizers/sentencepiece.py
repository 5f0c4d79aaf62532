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

Fast path: the pieces' concatenation is built with str.replace (or a regex substitution, or
str.translate) for the one-character keys, and the rare multi-character keys and user symbols are found by regex
(every multi-character key's second character is in one small class: combining marks,
jamo...); the space rules then amount to collapsing runs of spaces and trimming, unless the
text holds a key or user symbol whose piece has two spaces in a row, when the pieces are walked
one by one (as they also are to tell whether text of spaces alone held a deleted character,
which only treat_whitespace_as_suffix shows).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from tokfx.normalizers.charsmap import decode_charsmap
from tokfx.normalizers.surrogates import utf8_encodable

SPACE_SYMBOL = "\u2581"
# A str.replace per one-character key that a text holds, up to this many keys (each pass runs
# at memory speed); past it, one pass (see _replace_chars).
MAX_REPLACE_PASSES = 16
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
        rules = decode_charsmap(charsmap, source) if charsmap else {}
        # One-character keys (one that maps to itself changes nothing); passes of str.replace
        # cannot serve when a replacement holds another key, which a later pass would replace.
        self._single = {key: value for key, value in rules.items() if len(key) == 1 and key != value}
        self._table = str.maketrans(self._single)
        self._single_finder = _char_class(self._single)
        self._chained = any(not self._single.keys().isdisjoint(value) for value in self._single.values())
        self._multi = {key: value for key, value in rules.items() if len(key) > 1}
        self._longest = max(map(len, self._multi), default=0)
        self._second_chars = {key[1] for key in self._multi}
        self._second_finder = _char_class(self._second_chars)
        symbols = sorted({s for s in user_defined_symbols if s}, key=lambda s: (-len(s), s))
        self.user_defined_symbols = tuple(symbols)
        self._user = re.compile("|".join(map(re.escape, symbols))) if symbols else None
        # Where a user symbol starts (each position, overlapping). Without rules a symbol is
        # the same pieces as its characters, unless it has a run of spaces (see _spaced).
        self._user_starts = re.compile(f"(?=(?:{self._user.pattern}))") if symbols and rules else None
        # A piece with a run of spaces keeps it (sentencepiece drops only a piece's leading
        # spaces), which the fast path's collapsing would not: text where one may be is walked
        # piece by piece.
        spaced = [key for key, value in rules.items() if "  " in value] + [s for s in symbols if "  " in s]
        self._spaced = re.compile("|".join(map(re.escape, spaced))) if spaced else None
        self._space = SPACE_SYMBOL if escape_whitespaces else " "

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
        if not text:
            return ""
        text = utf8_encodable(text)
        if self._spaced and self._spaced.search(text):
            return self._normalize_pieces(self.pieces(text))
        joined = self._apply_rules(text) if self._single or self._multi else text
        space = self._space
        dummy = space if self.add_dummy_prefix else ""
        if not self.remove_extra_whitespaces:
            body = joined.replace(" ", space) if self.escape_whitespaces else joined
            return body + dummy if self.treat_whitespace_as_suffix else dummy + body
        # Runs of spaces collapsed and leading ones cut; the trailing strip also takes the text's
        # own trailing "▁" when escaping, as sentencepiece's does.
        body = _SPACES.sub(" ", joined).lstrip(" ")
        if self.escape_whitespaces:
            body = body.replace(" ", space)
        if not self.treat_whitespace_as_suffix:
            return (dummy + body).rstrip(space)
        if not body:  # whether every piece was exactly " " decides the suffix
            return self._normalize_pieces(self.pieces(text))
        return body.rstrip(space) + dummy

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

    def _apply_rules(self, text: str) -> str:
        """The pieces' replacements joined: user symbols and multi-character keys where they
        match, one-character keys between them."""
        spans = self._spans(text)
        if not spans:
            return self._replace_chars(text)
        out, done = [], 0
        for start, end, replacement in spans:
            out.append(self._replace_chars(text[done:start]))
            out.append(replacement)
            done = end
        out.append(self._replace_chars(text[done:]))
        return "".join(out)

    def _replace_chars(self, text: str) -> str:
        """`text` with its one-character keys replaced, the fastest of three ways for what it
        holds: a str.replace per key when it holds few distinct ones, str.translate when keys
        are a quarter of it or more, else a regex substitution per key found."""
        if not self._single_finder:
            return text
        found = self._single_finder.findall(text)
        distinct = self._single.keys() & set(found)
        if not distinct:
            return text
        if len(distinct) <= MAX_REPLACE_PASSES and not self._chained:
            for char in distinct:
                text = text.replace(char, self._single[char])
            return text
        if len(found) * 4 >= len(text):
            return text.translate(self._table)
        single = self._single
        return self._single_finder.sub(lambda m: single.get(m.group(), m.group()), text)

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, replacement) of each piece that is a user symbol or a multi-character
        key, left to right: every other piece is one character."""
        starts = []
        if self._second_finder:
            seconds = self._second_chars
            starts = [m.start() - 1 for m in self._second_finder.finditer(text, 1) if m.group() in seconds]
        if self._user_starts:
            starts = sorted({*starts, *(m.start() for m in self._user_starts.finditer(text))})
        spans, done = [], 0
        for start in starts:
            if start >= done:  # not inside the piece before
                found = self._long_piece(text, start)
                if found:
                    spans.append((start, *found))
                    done = found[0]
        return spans


def _char_class(chars) -> re.Pattern | None:
    """A regex matching each of `chars`, and every character beyond U+FFFF when one of them is:
    re checks a class of BMP characters in one table lookup, but a long list of astral ones
    one by one, so the caller filters the astral matches."""
    if not chars:
        return None
    bmp = "".join(re.escape(c) for c in sorted(chars) if c <= "\uffff")
    astral = "\U00010000-\U0010ffff" if max(chars) > "\uffff" else ""
    return re.compile(f"[{bmp}{astral}]")
