"""A byte-level BPE (or Unigram) vocabulary as a Hugging Face `tokenizers` tokenizer.json (as a dict).

Pipeline: split with the pre-tokenization regex (each match its own piece), spell each piece's
bytes with GPT-2's byte alphabet, apply the BPE merges; special tokens are added tokens, which
`tokenizers` cuts out of the text before any of that.
"""
import math

import regex

from tokfx.pre_tokenizers.byte_level import spell, spelled_merges

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
            "vocab": (spelled := model_vocab(vocab, special_tokens)),
            "merges": [[left, right] for left, right in spelled_merges(
                merges, {vocab[i]: spelling for spelling, i in spelled.items() if spelling not in special_tokens})],
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
    the regex of a Split before a ByteLevel without its regex). The file is untrusted input
    (tokfx.formats.untrusted: bounded size and depth, exact types); anything else is refused
    with a TokenizerFileError naming the file and field: another model, a normalizer, byte
    fallback, a piece outside GPT-2's byte alphabet, a byte missing from the vocabulary."""
    from tokfx.pre_tokenizers.byte_level import unspell
    from tokfx.formats.untrusted import Fields, read_json_file, shown
    from tokfx.limits import MAX_PATTERN_CHARS, MAX_SPECIAL_TOKEN_BYTES, MAX_SPECIAL_TOKENS, MAX_TOKEN_SYMBOLS, MAX_TOKENS
    from tokfx.pre_tokenizers.patterns import PATTERNS

    f = Fields(str(path))

    def refuse(field: str | None, why: str):
        f.fail(field, f"not a byte-level Unigram tokenizer.json: {why}")

    doc = f.object(read_json_file(path), "", ("model",), None)
    model = f.object(doc["model"], "model", ("type", "vocab"), None)
    if model["type"] != "Unigram":
        refuse("model.type", f"its model is {shown(model['type'])}")
    if model.get("byte_fallback"):
        refuse("model.byte_fallback", "byte_fallback is set")
    if doc.get("normalizer") is not None:
        refuse("normalizer", "it has a normalizer")
    pre = f.object(doc.get("pre_tokenizer") or {}, "pre_tokenizer", (), None)
    steps = f.list(pre.get("pretokenizers"), "pre_tokenizer.pretokenizers", 8) if pre.get("type") == "Sequence" \
        else [pre]
    steps = [f.object(step, f"pre_tokenizer.pretokenizers[{i}]", (), None) for i, step in enumerate(steps)]
    kinds = [step.get("type") for step in steps]
    if kinds == ["ByteLevel"] and steps[0].get("use_regex", True) is True and not steps[0].get("add_prefix_space"):
        pattern = "gpt2"
    elif (kinds == ["Split", "ByteLevel"] and steps[1].get("use_regex", True) is False
          and not steps[1].get("add_prefix_space") and steps[0].get("behavior") == "Isolated"
          and not steps[0].get("invert") and isinstance(steps[0].get("pattern"), dict)
          and "Regex" in steps[0]["pattern"]):
        pattern = f.str(steps[0]["pattern"]["Regex"], "pre_tokenizer.pretokenizers[0].pattern.Regex",
                        MAX_PATTERN_CHARS)
        # A named pattern as our export spells it is read back as its name.
        pattern = next((name for name, rx in PATTERNS.items() if oniguruma_pattern(rx) == pattern), pattern)
    else:
        refuse("pre_tokenizer", f"its pre-tokenizer is {shown(kinds)} (expected ByteLevel, or Split then"
                                " ByteLevel, without a prefix space)")
    specials = {}
    for i, token in enumerate(f.list(doc.get("added_tokens") or [], "added_tokens", MAX_SPECIAL_TOKENS)):
        token = f.object(token, f"added_tokens[{i}]", ("content", "id"), None)
        if token.get("special") is True:
            content = f.str(token["content"], f"added_tokens[{i}].content", MAX_SPECIAL_TOKEN_BYTES)
            specials[content] = f.int(token["id"], f"added_tokens[{i}].id", 0, MAX_TOKENS - 1)
    vocab = f.list(model["vocab"], "model.vocab", MAX_TOKENS)
    if not vocab:
        refuse("model.vocab", "no vocab")
    tokens, scores = [], []
    for i, entry in enumerate(vocab):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and type(entry[1]) in (int, float) and math.isfinite(entry[1])):
            refuse(f"model.vocab[{i}]", f"expected [piece, finite score], got {shown(entry)}")
        piece, score = entry
        if specials.get(piece) == i:
            tokens.append(piece.encode("utf-8"))
            scores.append(None)
            continue
        if len(piece) > MAX_TOKEN_SYMBOLS:
            refuse(f"model.vocab[{i}]", f"a piece of {len(piece):,} characters: at most {MAX_TOKEN_SYMBOLS:,}")
        try:
            tokens.append(unspell(piece))
        except KeyError:
            refuse(f"model.vocab[{i}]", f"piece {shown(piece)} is not spelled in GPT-2's byte alphabet")
        scores.append(float(score))
    if any(not 0 <= i < len(vocab) or vocab[i][0] != text for text, i in specials.items()):
        refuse("added_tokens", "a special token is not its own vocab entry")
    present = {t[0] for t, s in zip(tokens, scores) if s is not None and len(t) == 1}
    if len(present) < 256:
        refuse("model.vocab", f"byte {min(set(range(256)) - present):#04x} has no piece of its own")
    return {"tokens": tokens, "scores": scores, "special_tokens": specials, "pattern": pattern}


def hf_byte_fallback_bpe_json(pieces: list[str | None], merges: list[tuple[int, int, int]],
                              special_tokens: dict[str, int], control_tokens: dict[str, int],
                              pattern: str) -> dict:
    """A sentencepiece-style BPE (chars alphabet, spaces as U+2581 with a dummy one in front of
    the text, sentencepiece's whitespace rules alone) as tokenizer.json: `pieces` by id, each
    token's text, "<0xE4>" for a fallback byte (None for special and control tokens). Control
    tokens are in the vocabulary only, so that `tokenizers` never finds them in text; special
    tokens are added tokens."""
    vocab = {piece: i for i, piece in enumerate(pieces) if piece is not None}
    vocab.update(special_tokens)
    vocab.update(control_tokens)
    doc = hf_tokenizer_json({}, [], special_tokens, pattern)
    # tokenizers has no exact equal of the dummy U+2581: its Metaspace adds one to the text's
    # first piece (not after a special token, as sentencepiece), but not when the text starts
    # with a space or U+2581, nor when it starts with a special token, where sentencepiece does.
    # (A Prepend normalizer would also give the text after each special token one.)
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
        {"type": "Split", "pattern": {"Regex": oniguruma_pattern(pattern)}, "behavior": "Isolated",
         "invert": False},
    ]}
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ]}
    doc["model"].update(byte_fallback=True, fuse_unk=True, unk_token="<unk>" if "<unk>" in control_tokens else None,
                        vocab=vocab, merges=[[pieces[left], pieces[right]] for left, right, _ in merges])
    return doc
