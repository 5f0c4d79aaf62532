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


def read_hf_unigram(path) -> dict:
    """A byte-level Unigram tokenizer.json (as tokenizers' UnigramTrainer over a ByteLevel
    pre-tokenizer writes it, or as hf_unigram_tokenizer_json does) as Tokenizer arguments:
    `tokens` (bytes by id; a special token's entry holds its text), `scores` (None for special
    tokens), `special_tokens` {text: id} and `pattern` ("gpt2" for ByteLevel's own regex, else
    the regex of a Split before a ByteLevel without its regex). Anything else is refused with a
    ValueError naming the file: another model, a normalizer, byte fallback, a piece outside
    GPT-2's byte alphabet, a byte missing from the vocabulary."""
    import json

    from tokfx.formats.gpt2 import unspell

    def refuse(why: str):
        raise ValueError(f"{path}: not a byte-level Unigram tokenizer.json: {why}")

    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        refuse(f"not JSON ({exc})")
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        refuse("no model")
    model = doc["model"]
    if model.get("type") != "Unigram":
        refuse(f"its model is {model.get('type')!r}")
    if model.get("byte_fallback"):
        refuse("byte_fallback is set")
    if doc.get("normalizer") is not None:
        refuse("it has a normalizer")
    pre = doc.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    kinds = [step.get("type") for step in steps if isinstance(step, dict)]
    if kinds == ["ByteLevel"] and steps[0].get("use_regex", True) and not steps[0].get("add_prefix_space"):
        pattern = "gpt2"
    elif (kinds == ["Split", "ByteLevel"] and not steps[1].get("use_regex", True)
          and not steps[1].get("add_prefix_space") and steps[0].get("behavior") == "Isolated"
          and not steps[0].get("invert") and isinstance(steps[0].get("pattern"), dict)
          and "Regex" in steps[0]["pattern"]):
        pattern = steps[0]["pattern"]["Regex"]
        from tokfx.pre_tokenizers.patterns import PATTERNS
        # A named pattern as our export spells it is read back as its name.
        pattern = next((name for name, rx in PATTERNS.items() if oniguruma_pattern(rx) == pattern), pattern)
    else:
        refuse(f"its pre-tokenizer is {kinds} (expected ByteLevel, or Split then ByteLevel,"
               " without a prefix space)")
    specials = {t["content"]: t["id"] for t in doc.get("added_tokens") or [] if t.get("special")}
    vocab = model.get("vocab")
    if not isinstance(vocab, list) or not vocab:
        refuse("no vocab")
    tokens, scores = [], []
    for i, entry in enumerate(vocab):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], (int, float))):
            refuse(f"vocab entry {i} is not [piece, score]")
        piece, score = entry
        if specials.get(piece) == i:
            tokens.append(piece.encode("utf-8"))
            scores.append(None)
            continue
        try:
            tokens.append(unspell(piece))
        except KeyError:
            refuse(f"piece {i} ({piece!r}) is not spelled in GPT-2's byte alphabet")
        scores.append(float(score))
    if any(not 0 <= i < len(vocab) or vocab[i][0] != text for text, i in specials.items()):
        refuse("a special token is not its own vocab entry")
    present = {t[0] for t, s in zip(tokens, scores) if s is not None and len(t) == 1}
    if len(present) < 256:
        refuse(f"byte {min(set(range(256)) - present):#04x} has no piece of its own")
    return {"tokens": tokens, "scores": scores, "special_tokens": specials, "pattern": pattern}
