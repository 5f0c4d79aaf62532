"""Hugging Face added tokens: strings cut out of the text before the model sees it, each with
its id, matched as `tokenizers` matches them (src/tokenizer/added_vocabulary.rs):

- the tokens with `normalized: false` are found in the raw text; each piece between them is
  normalized alone, and the tokens with `normalized: true` (under their normalized form) are
  found in it;
- at each position the longest token wins, leftmost first (Aho-Corasick LeftmostLongest: a
  regex alternation of the tokens, longest first);
- a `single_word` token counts only between non-word characters (Rust regex's \\w); `lstrip` /
  `rstrip` take the whitespace before / after it along (not past the previous token);
- a match of a special token, when special tokens are to stay text (tokfx's
  `encode_ordinary`; `tokenizers`' `encode_special_tokens`), is left as text, and the search
  goes on after it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import regex

# Used with pos / endpos: `match(text, pos)` anchors at pos (\A would not), \Z at endpos.
_WORD_BEFORE = regex.compile(r"\w\Z")
_WORD_AFTER = regex.compile(r"\w")
_SPACE_BEFORE = regex.compile(r"\s*\Z")
_SPACE_AFTER = regex.compile(r"\s*")


@dataclass(frozen=True)
class AddedToken:
    content: str
    id: int
    special: bool
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False


class _Matcher:
    """Finds one set of added tokens, each under the string it is matched as."""

    def __init__(self, tokens: Sequence[tuple[str, AddedToken]]):
        self._by_text = dict(tokens)
        ordered = sorted(self._by_text, key=lambda s: (-len(s), s))
        self._regex = regex.compile("|".join(map(regex.escape, ordered))) if ordered else None

    def split(self, text: str, keep_special: bool) -> list[tuple[str, AddedToken | None]]:
        """(part, the token it is, or None for text) in order; empty text parts left out."""
        if self._regex is None or not text:
            return [(text, None)] if text else []
        parts, done = [], 0
        for match in self._regex.finditer(text):
            start, stop = match.span()
            token = self._by_text[match.group()]
            if keep_special and token.special:
                continue
            if token.single_word and ((start > 0 and _WORD_BEFORE.search(text, 0, start))
                                      or (stop < len(text) and _WORD_AFTER.match(text, stop))):
                continue
            if token.lstrip:
                start = max(_SPACE_BEFORE.search(text, 0, start).start(), done)
            if token.rstrip:
                stop = _SPACE_AFTER.match(text, stop).end()
            if done < start:
                parts.append((text[done:start], None))
            parts.append((text[start:stop], token))
            done = stop
        if done < len(text):
            parts.append((text[done:], None))
        return parts


class AddedTokens:
    """The added tokens of a tokenizer.json, with the normalizer their `normalized` ones are
    matched under."""

    def __init__(self, tokens: Sequence[AddedToken], normalize: Callable[[str], str] | None):
        self.tokens = tuple(tokens)
        self._normalize = normalize or (lambda text: text)
        forms: dict[str, AddedToken] = {}
        for token in self.tokens:
            form = self._normalize(token.content) if token.normalized else token.content
            key = (token.normalized, form)
            if key in forms:
                raise ValueError(f"added tokens {forms[key].content!r} and {token.content!r} are matched"
                                 f" as the same text {form!r}")
            forms[key] = token
        # How `tokenizers` decodes each: a normalized token under its normalized form.
        self.decoded = {t.content: form for (_, form), t in forms.items()}
        self._raw = _Matcher([(form, t) for (normalized, form), t in forms.items() if not normalized])
        self._normalized = _Matcher([(form, t) for (normalized, form), t in forms.items() if normalized and form])

    def split(self, text: str, keep_special: bool = False) -> Iterator[tuple[str, AddedToken | None, bool]]:
        """(normalized text, None, whether it begins the text) and (matched text, token, False)
        in order."""
        at = 0
        for raw, token in self._raw.split(text, keep_special):
            begins = at == 0
            at += len(raw)
            if token is not None:
                yield raw, token, False
                continue
            for i, (part, inner) in enumerate(self._normalized.split(self._normalize(raw), keep_special)):
                yield part, inner, begins and i == 0 and inner is None
