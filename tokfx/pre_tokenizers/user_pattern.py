"""A user pattern: a regex given by the caller or read from a tokenizer file, so untrusted.

Three bounds, so that no pattern hangs or exhausts memory and none silently drops text:

- compile: its length and the product of its counted repeats (tokfx.limits), checked on the
  source before the regex package compiles it (compiling cannot be interrupted);
- every run: the regex package's `timeout`, scaled with the text's length; past it, one
  ValueError naming the pattern (catastrophic backtracking, e.g. `(a|aa)+$`);
- coverage: the pieces must cover the text, as the encoder needs every byte in a piece. This is
  checked on every text the pattern splits (guaranteed: the pieces' lengths must add up to the
  text's), and probed once when the pattern is resolved, on a short text of every kind of
  character (a probe: it refuses `\\w+` when a tokenizer is built or training starts, but a
  pattern that skips only characters absent from the probe is caught on the first text holding
  one).

A pattern of the GPT shape (tokfx.pre_tokenizers.class_runs: alternatives of class runs,
contractions, `\\s+(?!\\S)`, `(?<=\\d)`, `(?=(?:\\d{3})*(?!\\d))`, assertions, repeated and
nested groups such as `(?:\\p{L}\\p{M}*)+`, atomic and named groups, the flags `i` and `s`)
runs natively instead, with the classes' code points asked of `regex`; its matches in the
probe must equal regex's, else it runs in `regex`. The native matcher counts its steps: past
a budget, or where the pattern skips a character, that call runs in `regex`, under the bounds
above.
"""
from __future__ import annotations

from array import array
from functools import cached_property, lru_cache
from itertools import accumulate, chain, islice

import regex

from tokfx._class_runs import ClassRunsMatcher
from tokfx.pre_tokenizers.class_runs import compile_class_runs, regex_version
from tokfx.limits import (MAX_PATTERN_CHARS, MAX_PATTERN_REPEATS, PATTERN_TIMEOUT_SECONDS,
                          PATTERN_TIMEOUT_SECONDS_PER_CHAR)

# Escapes go first, so that `\{3}` is no repeat and `\x{1000}`, `\p{L}` are none either.
_ESCAPE = regex.compile(r"\\(?:[pPNx]\{[^}]*\}|.)", regex.DOTALL)
# Every counted repeat, wherever it stands (inside a character class a brace is a literal: counted
# anyway, which only errs towards refusing), spaces allowed as in verbose mode.
_REPEAT = regex.compile(r"\{\s*(\d*)\s*(?:,\s*(\d*)\s*)?\}")
# Letters, digits, punctuation, spaces of every kind, controls, non-ASCII scripts, an emoji,
# and runs that make a backtracking pattern show itself.
_PROBE = ("Hello, World! It's 2024-01-01: 3.14\u00a0\u2003\u00c0 la carte \u4e2d\u6587 \u3072\u3089"
          " \u0645\u0631\u062d\u0628\u0627 \U0001f600\t\r\n\n \x00\x07\x7f\u200b\ufeff\ufffd ~`|{}[]<>\\"
          + "".join(c * 48 + "!" for c in "a1 .\n"))


def _short(pattern: str) -> str:
    """The pattern for an error message: one line, at most about 80 characters."""
    shown = repr(pattern)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _repeats(pattern: str) -> int:
    """The product of the pattern's counted repeats (each its larger bound): an upper bound on
    how many times compiling may copy a repeated literal."""
    product = 1
    for low, high in _REPEAT.findall(_ESCAPE.sub("", pattern)):
        bound = max(len(low), len(high))
        if bound > 9:
            return MAX_PATTERN_REPEATS + 1
        product *= max(int(low or 0), int(high or 0), 1)
        if product > MAX_PATTERN_REPEATS:
            return product
    return product


class UserPattern:
    """A compiled user pattern whose runs are bounded in time and checked for coverage."""

    def __init__(self, pattern: str):
        if len(pattern) > MAX_PATTERN_CHARS:
            raise ValueError(f"pattern of {len(pattern):,} characters: at most {MAX_PATTERN_CHARS:,}")
        if _repeats(pattern) > MAX_PATTERN_REPEATS:
            raise ValueError(f"pattern {_short(pattern)}: its counted repeats multiply to more than"
                             f" {MAX_PATTERN_REPEATS:,}")
        try:
            self._compiled = regex.compile(pattern, regex_version(pattern))
        except (regex.error, OverflowError, RecursionError) as exc:
            raise ValueError(f"invalid pattern regex {_short(pattern)}: {exc}") from None
        self.pattern = pattern

    @cached_property
    def native(self) -> ClassRunsMatcher | None:
        """The native matcher, if the pattern has the GPT shape and it finds regex's matches in
        the probe (built on first use: asking `regex` for its classes takes a fraction of a
        second, which a pattern that fails its first bound should not pay)."""
        program = compile_class_runs(self.pattern)
        if program is None:
            return None
        matcher = ClassRunsMatcher(program)
        return matcher if matcher.spans(_PROBE.encode("utf-8")) == self._regex_spans(_PROBE) else None

    def piece_ends(self, data: bytes, chunk_ends: array | None = None) -> array:
        """Exclusive end byte offsets of the pieces of UTF-8 `data` (with `chunk_ends`, of each
        chunk data[:e0], data[e0:e1], ... alone), as findall finds them."""
        ends = None if self.native is None else self.native.piece_ends(data, chunk_ends)
        if ends is not None:
            return ends
        ends, start = array("q"), 0
        for end in [len(data)] if chunk_ends is None else chunk_ends:
            pieces = self._regex_findall(data[start:end].decode("utf-8"))
            ends.extend(islice(accumulate((len(p.encode("utf-8")) for p in pieces), initial=start), 1, None))
            start = end
        return ends

    def findall(self, text: str) -> list[str]:
        """The pieces of `text`; a ValueError if the pattern runs too long or skips a character."""
        data = text.encode("utf-8")
        ends = None if self.native is None else self.native.piece_ends(data)
        if ends is None:
            return self._regex_findall(text)
        return [data[start:end].decode("utf-8") for start, end in zip(chain((0,), ends), ends)]

    def _regex_findall(self, text: str) -> list[str]:
        timeout = PATTERN_TIMEOUT_SECONDS + len(text) * PATTERN_TIMEOUT_SECONDS_PER_CHAR
        try:
            if self._compiled.groups:  # findall would return the groups, not the whole matches
                pieces = [m.group() for m in self._compiled.finditer(text, timeout=timeout)]
            else:
                pieces = self._compiled.findall(text, timeout=timeout)
        except TimeoutError:
            raise ValueError(f"pattern {_short(self.pattern)} ran for more than {timeout:.1f} s on"
                             f" {len(text):,} characters (catastrophic backtracking?)") from None
        if sum(map(len, pieces)) != len(text):
            self._not_covered(text, timeout)
        return pieces

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of every match, as finditer finds them (no coverage rule: what a
        Hugging Face Split keeps between matches), bounded in time as findall."""
        spans = None if self.native is None else self.native.spans(text.encode("utf-8"))
        return self._regex_spans(text) if spans is None else spans

    def _regex_spans(self, text: str) -> list[tuple[int, int]]:
        timeout = PATTERN_TIMEOUT_SECONDS + len(text) * PATTERN_TIMEOUT_SECONDS_PER_CHAR
        try:
            return [m.span() for m in self._compiled.finditer(text, timeout=timeout)]
        except TimeoutError:
            raise ValueError(f"pattern {_short(self.pattern)} ran for more than {timeout:.1f} s on"
                             f" {len(text):,} characters (catastrophic backtracking?)") from None

    def _not_covered(self, text: str, timeout: float) -> None:
        at = 0
        for match in self._compiled.finditer(text, timeout=timeout):
            if match.start() != at:
                break
            at = match.end()
        raise ValueError(f"pattern {_short(self.pattern)} does not cover the text: it skips"
                         f" {text[at:at + 10]!r} at character {at} (every character must be in a"
                         " piece; end the pattern with an alternative such as |\\s+|[\\s\\S])")


@lru_cache(maxsize=64)
def checked_user_pattern(pattern: str) -> UserPattern:
    """The pattern compiled, once probed for coverage and backtracking (module docstring)."""
    user = UserPattern(pattern)
    user.findall(_PROBE)
    return user
