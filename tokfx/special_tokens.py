"""Special tokens: strings cut out of the text before pre-tokenization, never trained on,
encoded as ids of their own.

One set of rules for every place that meets them (encoding, counting, cutting a .txt file into
documents, cutting a file into ranges): they are a list of distinct non-empty strings within
tokfx.limits (`check_special_tokens`), and where two overlap at one position the longer wins.
Their ids follow every other token, in the order given.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import regex

from tokfx.limits import MAX_SPECIAL_TOKEN_BYTES, MAX_SPECIAL_TOKENS, MAX_SPECIAL_TOKENS_TOTAL_BYTES

DEFAULT_SPECIAL = "<|endoftext|>"


@dataclass(frozen=True)
class Framing:
    """The tokens a model's own tokenizer puts around one document: `bos` and `eos` name a
    special or control token (None: the model has none), `add_bos` / `add_eos` say whether it
    adds them by default (a Hugging Face post-processor for a single sequence, sentencepiece's
    and tekken's BOS). Encoding never adds them: the pipeline does (--prepend-bos, --append-eos)."""
    bos: str | None = None
    eos: str | None = None
    add_bos: bool = False
    add_eos: bool = False

    def __post_init__(self):
        if (self.add_bos and self.bos is None) or (self.add_eos and self.eos is None):
            raise ValueError("framing: add_bos / add_eos need the bos / eos token")


class SpecialTokens:
    """A set of special tokens and the matchers that find them, in text and in UTF-8 bytes."""

    def __init__(self, tokens: Iterable[str] = ()):
        self.tokens: tuple[str, ...] = check_special_tokens(tokens)
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

    def split(self, text: str) -> Iterable[tuple[str, bool]]:
        """(chunk, is_special) in text order; empty ordinary chunks are left out."""
        if self._text is None:  # no generator: counting short lines pays for one per line
            return ((text, False),) if text else ()
        return self._split(text)

    def _split(self, text: str) -> Iterator[tuple[str, bool]]:
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


def check_special_tokens(tokens: Iterable[str]) -> tuple[str, ...]:
    """The special tokens as a tuple, or a TypeError or ValueError saying what is wrong with them:
    a bare string (it would be read as one token per character), a token that is not a string,
    empty (it would match between every two characters), given twice, not UTF-8 (a lone
    surrogate), or beyond tokfx.limits."""
    if isinstance(tokens, (str, bytes)):
        raise TypeError(f"special_tokens must be a list of strings, not a {type(tokens).__name__}:"
                        f" pass [{tokens[:64]!r}]")
    try:
        tokens = tuple(tokens)
    except TypeError:
        raise TypeError(f"special_tokens must be a list of strings, not {type(tokens).__name__}") from None
    if len(tokens) > MAX_SPECIAL_TOKENS:
        raise ValueError(f"{len(tokens):,} special tokens: at most {MAX_SPECIAL_TOKENS:,}")
    seen, total = set(), 0
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"special_tokens[{i}] must be a str, got {type(token).__name__}")
        if not token:
            raise ValueError(f"special_tokens[{i}] is empty (an empty special token would match"
                             " between every two characters)")
        try:
            size = len(token.encode("utf-8"))
        except UnicodeEncodeError:
            raise ValueError(f"special_tokens[{i}] is not valid text (a lone surrogate)") from None
        if size > MAX_SPECIAL_TOKEN_BYTES:
            raise ValueError(f"special_tokens[{i}] is {size:,} bytes long: at most {MAX_SPECIAL_TOKEN_BYTES}")
        if token in seen:
            raise ValueError(f"special_tokens[{i}] {token!r} is given twice")
        seen.add(token)
        total += size
    if total > MAX_SPECIAL_TOKENS_TOTAL_BYTES:
        raise ValueError(f"the special tokens take {total:,} bytes: at most {MAX_SPECIAL_TOKENS_TOTAL_BYTES:,}")
    return tokens


def special_tokens_or_default(tokens: Sequence[str] | None) -> list[str]:
    """The special tokens (or .txt separators) a command was given, or the default one when
    none was."""
    return list(tokens) if tokens is not None else [DEFAULT_SPECIAL]
