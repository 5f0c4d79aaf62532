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

# Qwen 2, 2.5 and 3, as their tokenizer.json's Split spells it: Llama 3's with single digits.
QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Mistral's tekken, as tekken.json's config.pattern spells it: o200k without the contraction
# suffixes, single digits.
TEKKEN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*""",
        r"""\p{N}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Hugging Face's Split with behaviour Isolated: each match is a piece, and so is the text
# between two matches (a gap). The Split regexes, as tokenizer.json spells them; the named
# patterns below find the same pieces, gaps included (a covering form of R: R|(?:(?!R)[\s\S])+,
# or a simpler equal one; tests/pre_tokenizers/test_hf_splits.py proves each equal).
DIGITS_1_3_SPLIT = r"""\p{N}{1,3}"""
CJK_RUNS_SPLIT = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"  # [一-龥\u3040-ゟ゠-ヿ]+: kana and most CJK ideographs
# DeepSeek V3's third Split, as its tokenizer.json spells it (a JSON string that reads the same as
# a Python literal): its \r\n are the characters CR and LF, not the regex escapes.
DEEPSEEK_SPLIT = ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                  "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")
# DeepSeek V3 splits with these three in turn, each over the pieces of the one before
# (tokfx.pre_tokenizers.sequence), then ByteLevel without its own regex.
DEEPSEEK_V3_SPLITS = ("digits-1-3", "cjk-runs", "deepseek")

# \p{N}{1,3} matches wherever a number character starts, so the gaps are the runs of others.
DIGITS_1_3 = r"""\p{N}{1,3}|\P{N}+"""
# The same for the run of CJK characters.
CJK_RUNS = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+|[^\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
# DEEPSEEK_SPLIT matches at every character but one of [^\s\p{L}\p{M}\p{P}\p{S}] (numbers,
# controls, format and unassigned characters...) that is not followed by [\p{L}\p{M}] (which it
# would prefix): a gap is a run of those.
DEEPSEEK = DEEPSEEK_SPLIT + r"""|(?:[^\s\p{L}\p{M}\p{P}\p{S}](?![\p{L}\p{M}]))+"""
# Hugging Face's Digits(individual_digits=True) (StarCoder): every number character (Rust's
# char::is_numeric, \p{N}) alone, the text between them whole.
DIGITS = r"""\p{N}|\P{N}+"""

# The Split regex of each named pattern that is an Isolated Split with its gaps kept
# (pattern_for_isolated_split reads a Split in a tokenizer file back as its name).
ISOLATED_SPLITS = {
    "digits-1-3": DIGITS_1_3_SPLIT,
    "cjk-runs": CJK_RUNS_SPLIT,
    "deepseek": DEEPSEEK_SPLIT,
    "digits": r"""\p{N}""",
}

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
    "qwen2": QWEN2,
    "tekken": TEKKEN,
    "digits-1-3": DIGITS_1_3,
    "cjk-runs": CJK_RUNS,
    "deepseek": DEEPSEEK,
    "digits": DIGITS,
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
NO_NEWLINE_SPLIT = frozenset({"space", "digit", "space-digit", "sentencepiece", "none", "digits-1-3",
                              "cjk-runs", "digits"})
# Patterns whose text is normalized first: the normalizer each implies (tokfx.normalizers).
NORMALIZED = {"sentencepiece": "sentencepiece"}


def pattern_for_regex(regex: str) -> str:
    """The name of the named pattern whose regex is exactly `regex` (so that a tokenizer file
    spelling a known pattern runs in the native splitter), else `regex` itself."""
    return next((name for name, source in PATTERNS.items() if source == regex), regex)


def pattern_for_isolated_split(regex: str) -> str:
    """The name of the named pattern whose pieces are those of a Hugging Face Split of `regex`
    with behaviour Isolated (the text between matches kept): one of ISOLATED_SPLITS, or one whose
    regex is exactly `regex` (every named pattern's matches cover any text, so that Split keeps
    no gaps); else `regex` itself."""
    name = next((name for name, split in ISOLATED_SPLITS.items() if split == regex), None)
    return name if name is not None else pattern_for_regex(regex)
