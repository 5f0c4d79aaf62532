"""Hugging Face `tokenizers` normalizers, read from a tokenizer.json's "normalizer" object, each
exactly as `tokenizers` rewrites the text (src/normalizers/): the ids depend on the text alone,
so the alignment tracking `tokenizers` does beside it is not needed.

`huggingface_normalizer(spec, field)` builds one from its JSON (already parsed, untrusted: every
fault a ValueError naming the field, which the reader turns into a TokenizerFileError); a type or
option that is not here is refused by name, never approximated.

Characters are classified as `tokenizers` classifies them: Rust's `char::is_whitespace` (the
White_Space property; Python's `str.isspace` differs on U+001C-U+001F), and the tables of the
crates it uses (tokfx.normalizers.tokenizers_categories, Unicode 8.0 and 9.0). Its NFC, NFD, NFKC
and NFKD are Unicode 9.0's: Python's (newer) are the same on every character 9.0 normalizes
(Unicode's normalization stability), and a character that only newer Unicode decomposes,
combines or composes is left as it is, as 9.0 leaves an unassigned one (`normalize_9`).
Lowercase is Rust's char::to_lowercase, whose tables are newer than Python's 3.11 (14.0): a
capital assigned since Unicode 14 is not lowered here (none is in a released tokenizer's
vocabulary that we know of).
"""
from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from functools import lru_cache

import regex

from tokfx._char_map import char_map, first_member
from tokfx.normalizers import tokenizers_categories as crates
from tokfx.normalizers.code_point_sets import bitmap, code_point_bitmap
from tokfx.normalizers.huggingface_components import components
from tokfx.normalizers.precompiled import precompiled_step
from tokfx.normalizers.surrogates import utf8_encodable

# Rust's char::is_whitespace: the White_Space property (`regex`'s \s for str patterns).
WHITESPACE = regex.compile(r"\s")
_LEADING_SPACE = regex.compile(r"\A\s+")
_TRAILING_SPACE = regex.compile(r"\s+\Z")
# BertNormalizer's clean_text: NUL, U+FFFD and the crate's "other" categories (Cc Cf Co) but tab,
# newline and return are dropped; its whitespace (tab, newline, return, White_Space) becomes " ".
_BERT_DROPPED = regex.compile(rf"[\x00\ufffd{crates.character_class(crates.OTHER)}--[\t\n\r]]", regex.V1)
_NONSPACING_MARK = regex.compile(f"[{crates.character_class(crates.NONSPACING_MARK)}]")
_MARK = regex.compile(f"[{crates.character_class(crates.MARK)}]")
# BertNormalizer's handle_chinese_chars: its CJK ideograph blocks, padded with spaces. These
# classes are mapped by tokfx._char_map (one pass in C), as bitmaps built from these regexes.
_BERT_CJK = regex.compile("[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f"
                          "\U0002b740-\U0002b81f\U0002b920-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f]")


def lowercase(text: str) -> str:
    """Each character lowered alone, as Rust's char::to_lowercase: Python's str.lower differs
    only in writing a word-final capital sigma as a final sigma."""
    return text.replace("\u03a3", "\u03c3").lower()


_NONE = b""  # the empty bitmap: no character


def strip_accents(text: str) -> str:
    """StripAccents: every combining mark (Unicode 9.0's Mark) removed (no decomposition:
    that is NFD's)."""
    return char_map(text, code_point_bitmap(_MARK), _NONE, _NONE)


@lru_cache(maxsize=1)
def _unknown_to_9() -> tuple[regex.Pattern, bytes]:
    """The characters that Python's Unicode normalizes (a combining class, a decomposition, or a
    place in one) and Unicode 9.0 does not, as a class and a bitmap: built once, on first use
    (0.3 s)."""
    known = {c for first, last in crates.NORMALIZING for c in range(first, last + 1)}
    normalizing = set()
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        decomposition = unicodedata.decomposition(char)
        if unicodedata.combining(char) or decomposition:
            normalizing.add(code)
            normalizing.update(int(part, 16) for part in decomposition.split() if not part.startswith("<"))
    unknown = sorted(normalizing - known)
    return regex.compile("[" + "".join(regex.escape(chr(c)) for c in unknown) + "]"), bitmap(unknown)


def normalize_9(form: str, text: str) -> str:
    """unicodedata.normalize(form, text) as Unicode 9.0 has it: the runs between characters only
    a newer Unicode normalizes are normalized apart, those characters left as they are. A text
    that Python's Unicode finds normalized already, 9.0 leaves as it is too: it orders and
    composes the characters it knows as Python does, and takes the others for starters, which
    only block what Python's would have combined or reordered."""
    if unicodedata.is_normalized(form, text):  # most text: a quick check in C
        return text
    unknown, unknown_bits = _unknown_to_9()
    if first_member(text, unknown_bits) < 0:
        return unicodedata.normalize(form, text)
    out, done = [], 0
    for match in unknown.finditer(text):
        out.append(unicodedata.normalize(form, text[done:match.start()]))
        out.append(match.group())
        done = match.end()
    out.append(unicodedata.normalize(form, text[done:]))
    return "".join(out)


class HuggingFaceNormalizer:
    """normalize(text) as the tokenizer.json's normalizer rewrites it; `spec`: its JSON, kept to
    be written again (tokfx.json)."""

    def __init__(self, spec: dict, steps: list[Callable[[str], str]], description: str):
        self.spec, self._steps, self.description = spec, steps, description

    def normalize(self, text: str) -> str:
        text = utf8_encodable(text)
        for step in self._steps:
            text = step(text)
        return text

    def denormalize(self, text: str) -> str:
        return text  # decoding is the tokenizer.json decoder's (tokfx.formats.huggingface)

    def __eq__(self, other) -> bool:
        return isinstance(other, HuggingFaceNormalizer) and self.spec == other.spec

    def __hash__(self) -> int:
        return hash(self.description)


def huggingface_normalizer(spec: dict, field: str = "normalizer") -> HuggingFaceNormalizer:
    steps, names = [], []
    for step, where in components(spec, field, "normalizers", "normalizers"):
        _add_step(step, where, steps, names)
    return HuggingFaceNormalizer(spec, steps, " > ".join(names) or "none")


def _flag(spec: dict, key: str, field: str, default: bool | None = None) -> bool | None:
    value = spec.get(key, default)
    if not (isinstance(value, bool) or (value is None and default is None)):
        raise ValueError(f"{field}.{key}: expected true or false, got {value!r}")
    return value


def _text(spec: dict, key: str, field: str) -> str:
    value = spec.get(key)
    if not isinstance(value, str) or len(value) > 1024:
        raise ValueError(f"{field}.{key}: expected a string of at most 1,024 characters")
    return value


def _add_step(spec: dict, field: str, steps: list, names: list) -> None:
    kind = spec["type"]
    names.append(kind)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        steps.append(lambda text, form=kind: normalize_9(form, text))
    elif kind == "Lowercase":
        steps.append(lowercase)
    elif kind == "StripAccents":
        steps.append(strip_accents)
    elif kind == "Strip":
        left, right = _flag(spec, "strip_left", field, False), _flag(spec, "strip_right", field, False)
        if left:
            steps.append(lambda text: _LEADING_SPACE.sub("", text))
        if right:
            steps.append(lambda text: _TRAILING_SPACE.sub("", text))
    elif kind == "Prepend":
        prefix = _text(spec, "prepend", field)
        steps.append(lambda text: prefix + text if text else text)
    elif kind == "Replace":
        steps.append(_replace(spec, field))
    elif kind == "BertNormalizer":
        steps.extend(_bert(spec, field))
    elif kind == "Precompiled":
        steps.append(precompiled_step(spec, field))
    else:
        raise ValueError(f"{field}: the normalizer {kind!r} is not supported (tokfx reads NFC, NFD,"
                         " NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, Prepend, BertNormalizer,"
                         " Precompiled, Sequence)")


# A Regex of literal characters (any but the metacharacters, or one of them escaped), each
# optionally with a greedy ?, *, + or {m}, {m,}, {m,n}.
_SIMPLE_REGEX = regex.compile(r"""(?:(?:[^\\.^$|?*+()\[\]{}]|\\[\\.^$|?*+()\[\]{}\- ])
                                      (?:[?*+]|\{\d{1,3}(?:,\d{0,3})?\})?)+""", regex.VERBOSE)


def _replace(spec: dict, field: str) -> Callable[[str], str]:
    pattern, content = spec.get("pattern"), _text(spec, "content", field)
    if isinstance(pattern, dict) and set(pattern) == {"String"} and isinstance(pattern["String"], str):
        old = pattern["String"]
        if not old:  # tokenizers' empty string pattern matches nothing
            return lambda text: text
        return lambda text: text.replace(old, content)
    if (isinstance(pattern, dict) and set(pattern) == {"Regex"} and isinstance(pattern["Regex"], str)
            and _SIMPLE_REGEX.fullmatch(pattern["Regex"]) and not regex.fullmatch(pattern["Regex"], "")):
        # Literal characters with greedy quantifiers, never matching the empty text: Oniguruma
        # and `regex` find the same leftmost matches; content is inserted as it is (no groups).
        try:
            compiled = regex.compile(pattern["Regex"])
        except regex.error as exc:
            raise ValueError(f"{field}.pattern.Regex: {exc}") from None
        if "\\" not in content:  # a template without a backslash is literal text: no call per match
            return lambda text: compiled.sub(content, text)
        return lambda text: compiled.sub(lambda _: content, text)
    raise ValueError(f"{field}.pattern: tokfx reads a Replace of a {{\"String\": ...}} pattern, or of a"
                     " {\"Regex\": ...} of literal characters and quantifiers that cannot match the empty"
                     " text (another runs in Oniguruma, whose matches tokfx does not reproduce)")


def _bert(spec: dict, field: str) -> list[Callable[[str], str]]:
    lower = _flag(spec, "lowercase", field, True)
    accents = spec.get("strip_accents")
    if accents is not None and not isinstance(accents, bool):
        raise ValueError(f"{field}.strip_accents: expected true, false or null, got {accents!r}")
    steps = []
    clean, chinese = _flag(spec, "clean_text", field, True), _flag(spec, "handle_chinese_chars", field, True)
    if clean or chinese:
        # One pass: clean_text drops its characters, then blanks whitespace; the CJK padded
        # are neither.
        dropped, spaced = (code_point_bitmap(_BERT_DROPPED), code_point_bitmap(WHITESPACE)) if clean else (_NONE, _NONE)
        padded = code_point_bitmap(_BERT_CJK) if chinese else _NONE
        steps.append(lambda text: char_map(text, dropped, spaced, padded))
    if lower if accents is None else accents:
        nonspacing = code_point_bitmap(_NONSPACING_MARK)
        steps.append(lambda text: char_map(normalize_9("NFD", text), nonspacing, _NONE, _NONE))
    if lower:
        steps.append(lowercase)
    return steps
