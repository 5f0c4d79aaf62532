"""Hugging Face `tokenizers` pre-tokenizers, read from a tokenizer.json's "pre_tokenizer" object:
the pieces a text is cut into before the model sees them, exactly as `tokenizers` cuts them
(src/pre_tokenizers/, src/tokenizer/pattern.rs).

Each step maps the pieces so far to new ones; a piece is (text, whether it starts the text) (the
Metaspace prepend scheme "first" asks). `Split` keeps what lies between matches, as `tokenizers`
does, then groups by its behaviour. After a `ByteLevel` step the pieces are spelled in GPT-2's
byte alphabet, as `tokenizers` spells them, so a step after it sees what it sees; the model gets
their bytes back.

A pre-tokenizer made only of steps with a native form runs natively, each step over the pieces
of the one before (`native_steps`, over UTF-8 bytes and piece ends): Isolated Splits whose
regexes are named patterns and a ByteLevel (without its own regex, or with it: GPT-2's pattern)
in the native splitter, the steps that split at one class of characters (BertPreTokenizer,
Punctuation, Digits, WhitespaceSplit, a Split of `[0-9]` written k times) in
tokfx.pre_tokenizers.class_split, over bytes after a ByteLevel (each byte one spelled
character), and a Metaspace before any ByteLevel whose prepend scheme is "always" or "never"
(its spaces replaced over the bytes, its cut a class split). Any other pre-tokenizer runs here,
in Python: the twin of the native one.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable
from itertools import accumulate

import regex

from tokfx._class_split import MAX_GROUP
from tokfx._pretokenize import FAST_PATTERNS, piece_ends
from tokfx._pretokenize import split as native_split
from tokfx.normalizers.huggingface_components import components
from tokfx.normalizers.tokenizers_categories import PUNCTUATION, character_class
from tokfx.pre_tokenizers.byte_level import spell, unspell
from tokfx.pre_tokenizers.class_split import NativeStep, class_split_step
from tokfx.pre_tokenizers.patterns import pattern_for_isolated_split
from tokfx.pre_tokenizers.sequence import sequence_piece_ends
from tokfx.pre_tokenizers.user_pattern import UserPattern

Piece = tuple[str, bool]  # (text, starts the text)
Step = Callable[[list[Piece]], list[Piece]]

_ASCII_PUNCTUATION = regex.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# What Rust's char methods and tokenizers' helpers test, as regexes over one character.
_IS_WHITESPACE = r"\s"  # char::is_whitespace (White_Space)
# is_ascii_punctuation || is_punctuation (the unicode_categories crate's, Unicode 8.0)
_IS_PUNCTUATION = f"[{_ASCII_PUNCTUATION}{character_class(PUNCTUATION)}]"
_IS_NUMERIC = r"\p{N}"  # char::is_numeric
# A Split regex of one ASCII digit written k times (Falcon's [0-9][0-9][0-9]): split natively.
_DIGIT_GROUP = regex.compile(r"(?:\[0-9\])+|\[0-9\]\{([1-9][0-9]?)\}")
# ByteLevel's own regex (GPT-2's): the named pattern gpt2 is the same alternation.
_BYTE_LEVEL_PATTERN = "gpt2"
BEHAVIOURS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")


class HuggingFacePreTokenizer:
    """The pieces of a normalized chunk, as the tokenizer.json's pre-tokenizer cuts it.
    `spec`: its JSON (None: no pre-tokenizer), kept to be written again."""

    def __init__(self, spec: dict | None, field: str = "pre_tokenizer"):
        self.spec = spec
        self.byte_level = False  # a ByteLevel step spells the pieces
        self.names: list[str] = []
        self._steps: list[Step] = []
        # The native form of each step, in order; None if a step has none.
        self.native_steps: list[NativeStep] | None = []
        self.then_split: list[str] = []  # split_where_no_token_spans
        if spec is not None:
            for step, where in components(spec, field, "pretokenizers", "pre-tokenizers"):
                self._add(step, where)

    @property
    def description(self) -> str:
        return " > ".join(self.names) or "none"

    def _add(self, spec: dict, field: str) -> None:
        kind = spec["type"]
        build = _STEPS.get(kind)
        if build is None:
            raise ValueError(f"{field}: the pre-tokenizer {kind!r} is not supported (tokfx reads"
                             f" {', '.join(sorted(_STEPS))}, Sequence)")
        step, native, shown = build(self, spec, field)
        self.names.append(shown)
        self._steps.append(step)
        self.native_steps = None if native is None or self.native_steps is None else [*self.native_steps, native]

    def pieces(self, text: str, at_start: bool) -> list[str]:
        """The pieces of one normalized chunk (`at_start`: it begins the text), as `tokenizers`
        spells them (GPT-2's byte alphabet after a ByteLevel)."""
        pieces = [(text, at_start)] if text else []
        for step in self._steps:
            pieces = [p for p in step(pieces) if p[0]]
        return [p for p, _ in pieces]

    def encoder_input(self, text: str, at_start: bool) -> tuple[bytes, array]:
        """(bytes, exclusive piece ends) of one normalized chunk for the segmenter."""
        if self.native_steps is not None:
            data = text.encode("utf-8")
            ends = array("q", [len(data)] if data else [])
            for step in self.native_steps:
                data, ends = step(data, ends)
            return data, sequence_piece_ends(data, self.then_split, ends)
        pieces = self.pieces(text, at_start)
        encoded = [unspell(p) for p in pieces] if self.byte_level else [p.encode("utf-8") for p in pieces]
        data = b"".join(encoded)
        return data, sequence_piece_ends(data, self.then_split, array("q", accumulate(map(len, encoded))))

    def split_where_no_token_spans(self, name: str) -> None:
        """Cut the pieces further with the named pattern `name`, natively: for a model that the
        reader knows has no token across its cuts, so that each piece segments alone as the
        whole would (a BPE over one long piece is slower than over many short ones)."""
        self.then_split = [name]


def _behaviour(spec: dict, field: str) -> str:
    behaviour = spec.get("behavior")
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"{field}.behavior: expected one of {', '.join(BEHAVIOURS)}, got {behaviour!r}")
    return behaviour


def _bool(spec: dict, key: str, field: str, default: bool) -> bool:
    value = spec.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{field}.{key}: expected true or false, got {value!r}")
    return value


def split_spans(text: str, matches: list[tuple[int, int]], behaviour: str,
                invert: bool = False) -> list[tuple[int, int]]:
    """tokenizers' NormalizedString::split: the text cut at `matches` (non-overlapping (start,
    end) in order), the gaps kept as unmatched parts, then grouped by `behaviour`."""
    parts, at = [], 0
    for start, end in matches:
        if start == end:
            continue  # an empty match cuts nothing (its empty part would be dropped)
        if at < start:
            parts.append((at, start, invert))
        parts.append((start, end, not invert))
        at = end
    if at < len(text):
        parts.append((at, len(text), invert))
    kept: list[list[int]] = []  # [start, end]
    previous = False
    if behaviour == "MergedWithNext":
        for start, end, is_match in reversed(parts):
            if is_match and not previous and kept:
                kept[-1][0] = start
            else:
                kept.append([start, end])
            previous = is_match
        kept.reverse()
    else:
        for start, end, is_match in parts:
            if behaviour == "Removed" and is_match:
                continue
            if kept and ((behaviour == "Contiguous" and is_match == previous)
                         or (behaviour == "MergedWithPrevious" and is_match and not previous)):
                kept[-1][1] = end
            else:
                kept.append([start, end])
            previous = is_match
    return [(start, end) for start, end in kept]


def _pattern_step(self: HuggingFacePreTokenizer, name: str) -> NativeStep | None:
    """The native split of the named pattern `name`, if the step sees text (a pattern over the
    text a ByteLevel spelled is not that pattern over its bytes)."""
    if self.byte_level or name not in FAST_PATTERNS:
        return None
    return lambda data, ends: (data, piece_ends(data, name, ends))


def _split_step(find: Callable[[str], list[tuple[int, int]]], behaviour: str, invert: bool = False) -> Step:
    def step(pieces: list[Piece]) -> list[Piece]:
        out = []
        for text, at_start in pieces:
            for start, end in split_spans(text, find(text), behaviour, invert):
                out.append((text[start:end], at_start and start == 0))
        return out
    return step


def _regex_finder(source: str, flags: int = 0) -> Callable[[str], list[tuple[int, int]]]:
    compiled = regex.compile(source, flags)
    return lambda text: [m.span() for m in compiled.finditer(text)]


def _user_regex_finder(source: str, field: str) -> Callable[[str], list[tuple[int, int]]]:
    """A user regex bounded as tokfx.pre_tokenizers.user_pattern bounds it (compile size, a
    timeout on every run), without its coverage rule: a Split keeps what lies between matches."""
    try:
        return UserPattern(source).spans
    except ValueError as exc:
        raise ValueError(f"{field}: {exc}") from None


def _byte_level(self: HuggingFacePreTokenizer, spec: dict, field: str):
    prefix = _bool(spec, "add_prefix_space", field, True)
    use_regex = _bool(spec, "use_regex", field, True)
    native = None if prefix else _pattern_step(self, _BYTE_LEVEL_PATTERN) if use_regex else _unchanged(self)
    self.byte_level = True

    def step(pieces: list[Piece]) -> list[Piece]:
        if prefix:
            pieces = [(p if p.startswith(" ") else " " + p, s) for p, s in pieces]
        if use_regex:
            pieces = _gpt2_split(pieces)
        return [(spell(p.encode("utf-8")), s) for p, s in pieces]

    return step, native, f"ByteLevel(add_prefix_space={prefix}, use_regex={use_regex})"


def _gpt2_split(pieces: list[Piece]) -> list[Piece]:
    out = []
    for text, at_start in pieces:
        parts = [p.decode("utf-8") for p in native_split(text.encode("utf-8"), _BYTE_LEVEL_PATTERN)]
        out.extend((p, at_start and i == 0) for i, p in enumerate(parts))
    return out


def _split(self: HuggingFacePreTokenizer, spec: dict, field: str):
    behaviour, invert = _behaviour(spec, field), _bool(spec, "invert", field, False)
    pattern = spec.get("pattern")
    if not (isinstance(pattern, dict) and len(pattern) == 1 and set(pattern) <= {"String", "Regex"}
            and isinstance(next(iter(pattern.values())), str)):
        raise ValueError(f"{field}.pattern: expected {{\"String\": ...}} or {{\"Regex\": ...}}")
    (kind, source), = pattern.items()
    if kind == "String":
        find = _regex_finder(regex.escape(source)) if source else (lambda text: [])
        return _split_step(find, behaviour, invert), None, f"Split({source!r}, {behaviour})"
    name = pattern_for_isolated_split(source)
    native = None
    if name != source and behaviour == "Isolated" and not invert:
        native = _pattern_step(self, name)
    elif (group := _DIGIT_GROUP.fullmatch(source)) and not invert:
        count = int(group[1]) if group[1] else len(source) // len("[0-9]")
        native = class_split_step("[0-9]", behaviour, self.byte_level, count) if count <= MAX_GROUP else None
    shown = f"Split({name if name != source else repr(source)}, {behaviour}{', invert' if invert else ''})"
    return _split_step(_user_regex_finder(source, f"{field}.pattern.Regex"), behaviour, invert), native, shown


def _char_split(self: HuggingFacePreTokenizer, test: str, behaviour: str) -> tuple[Step, NativeStep]:
    """A step that splits at each character `test` matches, and its native form."""
    return _split_step(_regex_finder(test), behaviour), class_split_step(test, behaviour, self.byte_level)


def _unchanged(self: HuggingFacePreTokenizer) -> NativeStep | None:
    """The native form of a step that leaves the pieces as they are (a ByteLevel without regex):
    none over spelled text either (a second ByteLevel spells the spelling again)."""
    return None if self.byte_level else (lambda data, ends: (data, ends))


def _whitespace(self, spec, field):
    # \w+|[^\w\s]+, kept; what lies between (whitespace) removed (Rust regex's Unicode \w).
    return _split_step(_regex_finder(r"\w+|[^\w\s]+"), "Removed", invert=True), None, "Whitespace"


def _whitespace_split(self, spec, field):
    return (*_char_split(self, _IS_WHITESPACE, "Removed"), "WhitespaceSplit")


def _bert(self, spec, field):
    by_space, space_native = _char_split(self, _IS_WHITESPACE, "Removed")
    by_punctuation, punctuation_native = _char_split(self, _IS_PUNCTUATION, "Isolated")
    return (lambda pieces: by_punctuation(by_space(pieces)),
            lambda data, ends: punctuation_native(*space_native(data, ends)), "BertPreTokenizer")


def _punctuation(self, spec, field):
    behaviour = _behaviour({"behavior": spec.get("behavior", "Isolated")}, field)
    return (*_char_split(self, _IS_PUNCTUATION, behaviour), f"Punctuation({behaviour})")


def _digits(self, spec, field):
    individual = _bool(spec, "individual_digits", field, False)
    return (*_char_split(self, _IS_NUMERIC, "Isolated" if individual else "Contiguous"),
            f"Digits(individual_digits={individual})")


def _metaspace(self, spec, field):
    replacement = spec.get("replacement", "\u2581")
    if not isinstance(replacement, str) or len(replacement) != 1:
        raise ValueError(f"{field}.replacement: expected one character, got {replacement!r}")
    scheme = spec.get("prepend_scheme", "always")
    if "add_prefix_space" in spec and "prepend_scheme" not in spec:  # files before tokenizers 0.14
        scheme = "always" if _bool(spec, "add_prefix_space", field, True) else "never"
    if scheme not in ("first", "always", "never"):
        raise ValueError(f"{field}.prepend_scheme: expected first, always or never, got {scheme!r}")
    split = _bool(spec, "split", field, True)
    cut = _split_step(_regex_finder(regex.escape(replacement)), "MergedWithNext")
    # Natively over text (a ByteLevel before it spells the spaces), where the pieces do not
    # need to know whether they start the text (the native steps are not told).
    native = None if self.byte_level or scheme == "first" else _native_metaspace(replacement, scheme == "always", split)

    def step(pieces: list[Piece]) -> list[Piece]:
        out = []
        for text, at_start in pieces:
            text = text.replace(" ", replacement)
            if not text.startswith(replacement) and (scheme == "always" or (scheme == "first" and at_start)):
                text = replacement + text
            out.append((text, at_start))
        return cut(out) if split else out

    return step, native, f"Metaspace({replacement!r}, prepend_scheme={scheme}, split={split})"


def _native_metaspace(replacement: str, prepend: bool, split: bool) -> NativeStep:
    """Metaspace over UTF-8 pieces: in each, the spaces replaced and, with `prepend`, the
    replacement put first unless it is; then with `split` each piece cut before each
    replacement (a class split, MergedWithNext)."""
    mark = replacement.encode("utf-8")
    cut = class_split_step(regex.escape(replacement), "MergedWithNext", False) if split else None

    def step(data: bytes, ends: array) -> tuple[bytes, array]:
        pieces, start = [], 0
        for end in ends:
            piece = data[start:end].replace(b" ", mark)
            if prepend and piece and not piece.startswith(mark):  # the Python step sees no empty piece
                piece = mark + piece
            pieces.append(piece)
            start = end
        data, ends = b"".join(pieces), array("q", accumulate(map(len, pieces)))
        return cut(data, ends) if cut else (data, ends)

    return step


_STEPS = {"ByteLevel": _byte_level, "Split": _split, "Whitespace": _whitespace,
          "WhitespaceSplit": _whitespace_split, "BertPreTokenizer": _bert, "Punctuation": _punctuation,
          "Digits": _digits, "Metaspace": _metaspace}
