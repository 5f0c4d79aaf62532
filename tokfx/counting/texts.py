"""Counting over texts in memory: pre-tokens (what every trainer learns from) and lines (what
SaGe's context="line" learns from besides)."""
from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

import regex

from tokfx._count_table import CountTable, count_pieces
from tokfx.counting.pretoken_counter import PretokenCounter
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.normalizers.surrogates import utf8_encodable
from tokfx.special_tokens import SpecialTokens

_LINE = regex.compile(rb"[^\n]*\n|[^\n]+")


def count_pretokens(texts: Iterable[str] | str, pattern: str = "gpt2",
                    special_tokens: Sequence[str] = ()) -> dict[bytes, int]:
    """{pre-token bytes: occurrences} over `texts` (one string or an iterable of strings), in
    order of first occurrence."""
    counter = PretokenCounter(PreTokenizer(pattern, special_tokens), CountTable())
    for text in [texts] if isinstance(texts, str) else texts:
        counter.add(text)
    return counter.flush().to_dict()


def count_lines_into(text: str, counts, specials: SpecialTokens) -> None:
    """Add the line counts of `text` into `counts` (a CountTable or a dict): a line is a chunk
    between special tokens (left out) cut after every "\\n", the "\\n" kept at its end."""
    for chunk, special in specials.split(text):
        if not special:
            data = chunk.encode("utf-8")
            count_pieces(counts, data, array("q", [line.end() for line in _LINE.finditer(data)]))


def count_lines(texts: Iterable[str] | str, special_tokens: Sequence[str] = ()) -> dict[bytes, int]:
    """{line bytes: occurrences} over `texts` (count_lines_into)."""
    specials = SpecialTokens(special_tokens)
    counts = CountTable()
    for text in [texts] if isinstance(texts, str) else texts:
        count_lines_into(utf8_encodable(text), counts, specials)
    return counts.to_dict()
