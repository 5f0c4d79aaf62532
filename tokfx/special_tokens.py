"""Special tokens: strings cut out of the text before pre-tokenization, never trained on,
encoded as ids of their own.

One set of rules for every place that meets them (encoding, counting, cutting a .txt file into
documents, cutting a file into ranges): duplicates are dropped (the first keeps its place), and
where two overlap at one position the longer wins. Their ids follow every other token, in the
order given.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import regex

DEFAULT_SPECIAL = "<|endoftext|>"


class SpecialTokens:
    """A set of special tokens and the matchers that find them, in text and in UTF-8 bytes."""

    def __init__(self, tokens: Iterable[str] = ()):
        self.tokens: tuple[str, ...] = tuple(dict.fromkeys(tokens))
        # Longest first, so that where two overlap at one position the longer wins (of two
        # tokens matching at one position one is a prefix of the other, so ordering by
        # characters or by bytes is the same).
        ordered = sorted(self.tokens, key=lambda s: (-len(s), s))
        self._text = regex.compile("|".join(map(regex.escape, ordered))) if ordered else None
        self._bytes = regex.compile(b"|".join(regex.escape(s.encode("utf-8")) for s in ordered)) \
            if ordered else None

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tokens)

    def split(self, text: str) -> Iterator[tuple[str, bool]]:
        """(chunk, is_special) in text order; empty ordinary chunks are left out."""
        if self._text is None:
            if text:
                yield text, False
            return
        start = 0
        for match in self._text.finditer(text):
            if match.start() > start:
                yield text[start:match.start()], False
            yield match.group(), True
            start = match.end()
        if start < len(text):
            yield text[start:], False

    def spans_in_bytes(self, data: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
        """(start, end) byte offsets of the special tokens in UTF-8 `data`, from `start` on."""
        if self._bytes is not None:
            for match in self._bytes.finditer(data, start):
                yield match.span()

    @property
    def longest(self) -> int:
        """The length in bytes of the longest special token (0 for none)."""
        return max((len(s.encode("utf-8")) for s in self.tokens), default=0)

    def ids_after(self, first_id: int) -> dict[str, int]:
        """{token: id}, the ids from `first_id` on in the order the tokens were given."""
        return {name: first_id + i for i, name in enumerate(self.tokens)}


def special_tokens_or_default(tokens: Sequence[str] | None) -> list[str]:
    """The special tokens (or .txt separators) a command was given, or the default one when
    none was."""
    return list(tokens) if tokens is not None else [DEFAULT_SPECIAL]
