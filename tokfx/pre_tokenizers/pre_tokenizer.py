"""Pre-tokenization: normalize text (only where the pattern or the tokenizer has a normalizer,
tokfx.normalizers), split it on special tokens, then split each chunk with a named pattern.

Special tokens never reach training: counting drops them, `Tokenizer.encode` emits their ids.
Built-in patterns run in the native splitter (`tokfx._pretokenize`, exactly equal to the `regex`
package); user patterns run in a native matcher where they have the GPT shape, else in `regex`,
bounded in time and checked for coverage (`user_pattern`).
"""
from __future__ import annotations

from array import array
from collections.abc import Sequence

import regex

from tokfx._pretokenize import FAST_PATTERNS
from tokfx._pretokenize import matcher as native_matcher
from tokfx._pretokenize import piece_ends as native_piece_ends
from tokfx._pretokenize import split as native_split
from tokfx.pre_tokenizers.boundaries import is_not_space, is_safe_newline
from tokfx.normalizers import named_normalizer
from tokfx.pre_tokenizers.patterns import NO_NEWLINE_SPLIT, NORMALIZED, PATTERNS
from tokfx.pre_tokenizers.user_pattern import checked_user_pattern
from tokfx.special_tokens import SpecialTokens

_PLAIN_WORD = regex.compile(r"[A-Za-z0-9_-]+")


def resolve_pattern(pattern: str) -> tuple[str | None, str]:
    """(name, regex source) of a built-in pattern name or a user regex.

    A bare word that is not a built-in name is refused rather than taken as a regex: a typo in a
    pattern name would otherwise silently pre-tokenize with a literal. A regex is checked as
    `user_pattern` says (bounded compile, a probe of coverage and backtracking).
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str (a pattern name or a regex), got {type(pattern).__name__}")
    if pattern in PATTERNS:
        return pattern, PATTERNS[pattern]
    if _PLAIN_WORD.fullmatch(pattern):
        raise ValueError(f"unknown pattern name {pattern!r}; known: {', '.join(sorted(PATTERNS))}"
                         " (or pass a regular expression)")
    checked_user_pattern(pattern)
    return None, pattern


class PreTokenizer:
    """Normalization, special-token split, then pattern split, over one text at a time.

    `normalizer`: an object with `normalize(text) -> text` (tokfx.normalizers); default: the
    one the pattern implies (`NORMALIZED`), else none. Special tokens are found in the
    normalized text, as sentencepiece finds its user-defined symbols.
    """

    def __init__(self, pattern: str = "gpt2", special_tokens: Sequence[str] = (), normalizer=None):
        self.pattern_name, self.pattern_regex = resolve_pattern(pattern)
        self.specials = SpecialTokens(special_tokens)
        self._native = self.pattern_name in FAST_PATTERNS
        self._user = None if self._native else checked_user_pattern(self.pattern_regex)
        name = NORMALIZED.get(self.pattern_name)
        self.implied_normalizer = None if name is None else named_normalizer(name)
        self.normalizer = self.implied_normalizer if normalizer is None else normalizer

    def normalized(self, text: str) -> str:
        return text if self.normalizer is None else self.normalizer.normalize(text)

    def chunks(self, text: str):
        """(chunk, is special token) over the normalized text."""
        return self.specials.split(self.normalized(text))

    def utf8_chunks(self, text: str):
        """chunks(text), each ordinary chunk as UTF-8 (a special token stays its text). Without
        special tokens, the one chunk as the normalizer writes it: sentencepiece's core writes
        UTF-8, and its str, then encoded again, cost a fifth of encoding English."""
        if not self.specials:
            return [(self.normalized_utf8(text), False)]
        return [(chunk if special else chunk.encode("utf-8"), special) for chunk, special in self.chunks(text)]

    def normalized_utf8(self, text: str) -> bytes:
        """normalized(text) as UTF-8."""
        return text.encode("utf-8") if self.normalizer is None else self.normalizer.normalize_utf8(text)

    def piece_ends(self, data: bytes, chunk_ends: array | None = None) -> array:
        """Exclusive end offsets (in bytes) of the pieces of UTF-8 `data` without specials; with
        `chunk_ends`, of each chunk data[:e0], data[e0:e1], ... split alone (as the native
        splitter's `piece_ends`)."""
        if self._native:
            return native_piece_ends(data, self.pattern_name, chunk_ends)
        return self._user.piece_ends(data, chunk_ends)

    @property
    def matcher(self):
        """The native splitter of a built-in pattern, for CountTable.add_pretokens (a capsule:
        made on each call, so that a PreTokenizer still pickles); None for a user pattern."""
        return native_matcher(self.pattern_name) if self._native else None

    def safe_cut(self, text: str, force: bool = False) -> int:
        """An index where `text` can be cut and both halves encoded apart with the same result.

        The last newline between two non-space characters (unless the pattern keeps newlines
        inside pieces: `NO_NEWLINE_SPLIT`), else the start of the last special token; 0 if there
        is none. With `force`, when there is none, in the last ordinary chunk, the latest end of a
        piece before its last two that ends in a non-space character (exact for the built-in
        patterns: a piece that ends in one never looked past it, nor did those before it).
        """
        chunks = list(self.specials.split(text))
        offset = len(text)
        for chunk, special in reversed(chunks):
            offset -= len(chunk)
            if special:
                return offset
            pos = -1 if self.pattern_name in NO_NEWLINE_SPLIT else chunk.rfind("\n", 0, len(chunk) - 1)
            while pos > 0:
                if is_safe_newline(chunk[pos - 1], chunk[pos + 1]):
                    return offset + pos + 1
                pos = chunk.rfind("\n", 0, pos)
            if force:
                data = chunk.encode("utf-8")
                # Before the last two pieces, after a piece that ends in a non-space character:
                # no piece up to there looked past it. A whitespace piece may have: "  0 " is
                # " ", " ", "0", " " under llama3, as \s+(?!\S) saw the "0", but "  " alone is
                # one piece.
                for end in reversed(self.piece_ends(data)[:-2]):
                    if is_not_space(data[max(0, end - 4):end].decode("utf-8", "ignore")[-1:]):
                        return offset + len(data[:end].decode("utf-8"))
                force = False
        return 0

    def pieces(self, text: str) -> list[bytes]:
        """The pre-tokens of `text` as UTF-8 bytes, special tokens left out."""
        out: list[bytes] = []
        for chunk, special in self.chunks(text):
            if special:
                continue
            if self._native:
                out.extend(native_split(chunk.encode("utf-8"), self.pattern_name))
            else:
                out.extend(p.encode("utf-8") for p in self._user.findall(chunk))
        return out
