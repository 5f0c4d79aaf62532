"""Named pre-tokenization patterns (regex sources, for the `regex` package)."""

# GPT-2's pattern as published with the model (and used by the cs336 reference trainer).
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# cl100k_base (GPT-3.5/4), as tiktoken spells it.
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

# o200k_base (GPT-4o), as tiktoken spells it.
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Llama 3, as Meta's reference tokenizer spells it.
LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# The PathPiece paper's pre-tokenization variants (docs/algorithms.md, Pre-tokenization). Whitespace is
# regex's \s, as in the patterns above.
# FirstSpace: maximal whitespace and non-whitespace runs; a single U+0020 directly before a
# non-whitespace run moves to its front (a whitespace run gives up its last character only when
# that character is U+0020 and a non-whitespace run follows).
FIRSTSPACE = r""" ?\S+|\s+(?= \S)|\s+"""
# Space: every U+0020 is its own chunk; the text between spaces stays whole.
SPACE = r""" |[^ ]+"""
# Digit: every ASCII digit is its own chunk; the text between digits stays whole.
DIGIT = r"""[0-9]|[^0-9]+"""
# FirstSpace, then every ASCII digit split off (a space moved to the front of a digit is left
# on its own).
FIRSTSPACE_DIGIT = r"""[0-9]| ?[^\s0-9]+| (?=[0-9])|\s+(?= \S)|\s+"""
SPACE_DIGIT = r""" |[0-9]|[^ 0-9]+"""
# sentencepiece: over text whose spaces its normalizer wrote as U+2581 (with a dummy one in
# front): each run of U+2581 starts a piece, with the text up to the next run. A boundary falls
# between two characters exactly when the second is U+2581 and the first is not, so a vocabulary
# learned on these pieces never spans one, and sentencepiece, which does not pre-tokenize when
# it encodes, segments the whole text as tokfx segments its pieces.
SENTENCEPIECE = "\u2581*[^\u2581]+|\u2581+"
# None: the whole chunk (a document, or the text between two special tokens) is one piece.
NONE = r"""[\s\S]+"""

PATTERNS = {
    "gpt2": GPT2,
    "cl100k": CL100K,
    "gpt4": CL100K,
    "o200k": O200K,
    "llama3": LLAMA3,
    "firstspace": FIRSTSPACE,
    "space": SPACE,
    "digit": DIGIT,
    "firstspace-digit": FIRSTSPACE_DIGIT,
    "space-digit": SPACE_DIGIT,
    "sentencepiece": SENTENCEPIECE,
    "none": NONE,
}

# Variants that keep a newline in the same piece as its neighbours: a newline between two
# non-space characters is not a place to cut text (tokfx.pre_tokenizers.boundaries) for them.
NO_NEWLINE_SPLIT = frozenset({"space", "digit", "space-digit", "sentencepiece", "none"})
# Patterns whose text is normalized first: the normalizer each implies (tokfx.normalizers).
NORMALIZED = {"sentencepiece": "sentencepiece"}


def pattern_for_regex(regex: str) -> str:
    """The name of the named pattern whose regex is exactly `regex` (so that a tokenizer file
    spelling a known pattern runs in the native splitter), else `regex` itself."""
    return next((name for name, source in PATTERNS.items() if source == regex), regex)
