"""A byte-level BPE (or Unigram) vocabulary as a Hugging Face `tokenizers` tokenizer.json (as a dict).

Pipeline: split with the pre-tokenization regex (each match its own piece), spell each piece's
bytes with GPT-2's byte alphabet, apply the BPE merges; special tokens are added tokens, which
`tokenizers` cuts out of the text before any of that.
"""
import regex

from tokfx.formats.gpt2 import spell

# Oniguruma (the regex engine of tokenizers, Ruby syntax) reads `X{1,3}+` as `(X{1,3})+`, not as
# the possessive interval that `regex` and tiktoken's patterns (cl100k) mean; an atomic group
# `(?>X{1,3})` means the same in both engines.
_POSSESSIVE_INTERVAL = regex.compile(r"""
    (?P<atom> \\[pP]\{[^}]*\} | \\. | \[ (?:\\.|[^\]\\])* \]
            | (?P<group> \( (?:[^()\\]|\\.|(?&group))* \) ) | [^\\\[\](){}|] )
    (?P<interval> \{ \d+ (?:,\d*)? \} ) \+
""", regex.VERBOSE)


def hf_tokenizer_json(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]],
                      special_tokens: dict[str, int], pattern: str) -> dict:
    """Ids in `vocab` that belong to special tokens are taken from `special_tokens` instead."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": token_id, "content": content, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for content, token_id in sorted(special_tokens.items(), key=lambda item: item[1])
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": oniguruma_pattern(pattern)}, "behavior": "Isolated",
                 "invert": False},
                # use_regex=False: the Split above already did GPT-2's split (or the user's).
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            # False: a piece that is itself a token still goes through the merges, as in our encoder.
            "ignore_merges": False,
            "vocab": model_vocab(vocab, special_tokens),
            "merges": [[spell(left), spell(right)] for left, right in merges],
        },
    }


def hf_unigram_tokenizer_json(vocab: dict[int, bytes], scores: list[float | None],
                              special_tokens: dict[str, int], pattern: str) -> dict:
    """The same pipeline around a `Unigram` model: every id's spelled token with its log
    probability (special tokens under their text, scored 0; `tokenizers` never segments into
    them, as added tokens are cut out first). Its Viterbi is our likelihood segmenter's
    (bench/bench_unigram.py, tests/formats/test_interop.py)."""
    doc = hf_tokenizer_json(vocab, [], special_tokens, pattern)
    spelled = {token_id: spelling for spelling, token_id in model_vocab(vocab, special_tokens).items()}
    doc["model"] = {"type": "Unigram", "unk_id": None, "byte_fallback": False,
                    "vocab": [[spelled[i], 0.0 if scores[i] is None else scores[i]] for i in range(len(vocab))]}
    return doc


def model_vocab(vocab: dict[int, bytes], special_tokens: dict[str, int]) -> dict[str, int]:
    """Spelled tokens -> ids, special tokens included under their own text: `tokenizers` keeps an
    added token's id only when the model vocabulary already maps its text to that id."""
    special_ids = set(special_tokens.values())
    spelled = {}
    for token_id in sorted(vocab):
        if token_id in special_ids:
            continue
        spelling = spell(vocab[token_id])
        if spelling in spelled:
            raise ValueError(f"tokens {spelled[spelling]} and {token_id} are both {vocab[token_id]!r}")
        spelled[spelling] = token_id
    for content, token_id in special_tokens.items():
        if spelled.get(content, token_id) != token_id:
            raise ValueError(f"special token {content!r} (id {token_id}) is spelled like token "
                             f"{spelled[content]}; tokenizer.json cannot tell them apart")
        spelled[content] = token_id
    return dict(sorted(spelled.items(), key=lambda item: item[1]))


def oniguruma_pattern(pattern: str) -> str:
    """pattern (for the `regex` package) spelled so that tokenizers' Oniguruma splits alike."""
    return _POSSESSIVE_INTERVAL.sub(r"(?>\g<atom>\g<interval>)", pattern)


# A WordPiece model's word limit: longer words are one unk token in tokenizers (default 100).
# Ours has none; this is beyond any pre-token tokfx reads.
WORDPIECE_MAX_CHARS = 1 << 62


def hf_wordpiece_tokenizer_json(vocab: dict[int, bytes], special_tokens: dict[str, int], pattern: str) -> dict:
    """The same pipeline around a `WordPiece` model for a vocabulary that segments with
    `greedy`: tokenizers' WordPiece takes the longest vocabulary entry that prefixes the rest of
    the word, left to right, as our greedy does (given every token fits its max_width), with no
    continuing-subword prefix (""), no word limit (WORDPIECE_MAX_CHARS) and the spelled byte 0
    as its unk token, never used as every byte is a token."""
    doc = hf_tokenizer_json(vocab, [], special_tokens, pattern)
    doc["model"] = {"type": "WordPiece", "unk_token": spell(b"\x00"), "continuing_subword_prefix": "",
                    "max_input_chars_per_word": WORDPIECE_MAX_CHARS,
                    "vocab": model_vocab(vocab, special_tokens)}
    return doc
