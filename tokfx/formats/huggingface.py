"""A Hugging Face `tokenizers` tokenizer.json read as a tokfx tokenizer, with `tokenizers`' ids
(`encode(text, add_special_tokens=False)`) and decode.

What a tokenizer.json says maps onto tokfx's stages as follows:

- `added_tokens` -> the tokenizer's special tokens (every added token, special or not, is one:
  it has an id of its own and is cut out of the text first), matched with their flags by
  tokfx.pre_tokenizers.added_tokens; `encode_ordinary` leaves the `special: true` ones as text;
- `normalizer` -> tokfx.normalizers.huggingface, applied to each piece between the raw added
  tokens, as `tokenizers` does;
- `pre_tokenizer` -> tokfx.pre_tokenizers.huggingface;
- `model` -> tokens and merges: a `BPE` behind a `ByteLevel` pre-tokenizer is byte-level BPE
  over the bytes alphabet; a `BPE` with `byte_fallback` (the sentencepiece exports: Llama 2,
  Mistral, Gemma) is BPE over the chars alphabet of its one-character tokens, its `<0xXX>` tokens
  the fallback bytes. Merges by rank (a pair listed twice ranks where it is listed last, as
  `tokenizers`' map keeps it); `ignore_merges` emits a piece that is a token whole; a BPE over
  characters with a `continuing_subword_prefix`, an `end_of_word_suffix` or an unknown token
  (tokfx.formats.huggingface_bpe), a `WordPiece`, `WordLevel` or `Unigram` runs as its own encoder (the `huggingface` segmenter,
  tokfx.formats.huggingface_models), its JSON kept with the text stages, its tokens the texts
  of its entries over the chars alphabet of their characters;
- `decoder` -> `HuggingFaceText.decode`, over the tokens as `tokenizers` spells them;
- `post_processor` -> the Framing (BOS / EOS for one sequence), never applied by encode; a
  `tokenizer_config.json` beside the file (transformers') names the BOS / EOS where the
  post-processor does not;
- `truncation` and `padding` are never applied (a corpus is encoded whole).

Anything else is refused on load with one TokenizerFileError naming the field: never
approximated. The file is untrusted input (tokfx.formats.untrusted: bounded size and depth).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from tokfx.alphabet import BYTES, Alphabet
from tokfx.formats.huggingface_bpe import BPEModel, runs_as_own_model
from tokfx.formats.huggingface_models import MODELS, huggingface_model
from tokfx.formats.untrusted import Fields, TokenizerFileError, read_json_file, shown
from tokfx.limits import MAX_SPECIAL_TOKEN_BYTES, MAX_SPECIAL_TOKENS, MAX_TOKEN_SYMBOLS, MAX_TOKENS
from tokfx.normalizers.huggingface_components import components
from tokfx.pre_tokenizers.added_tokens import AddedToken, AddedTokens
from tokfx.pre_tokenizers.byte_level import spell, unspell
from tokfx.special_tokens import Framing

# The parts of a tokenizer.json that tokfx.json keeps to rebuild the text stages, and the model
# too where it is one that runs as its own encoder (MODELS: tokfx.formats.huggingface_models).
KEPT = ("added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder")
KEPT_MODEL = "model"
_BYTE_TOKEN = "<0x{:02X}>"
_SPANS_A_SPACE = re.compile("[^\u2581]\u2581")


def is_huggingface(doc: object) -> bool:
    """Whether a parsed JSON document is a tokenizer.json (what `tokenizers` serializes)."""
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict) and "added_tokens" in doc


class HuggingFaceText:
    """The text stages of a tokenizer.json: added tokens, normalizer, pre-tokenizer, and its
    decoder. `segments(text, ordinary)` gives what the segmenter encodes: (added token content,
    None, None) or (None, bytes, piece ends)."""

    def __init__(self, spec: dict, source: str = "tokenizer.json"):
        """`spec`: the KEPT parts of a tokenizer.json (checked: any fault a TokenizerFileError
        naming `source` and the field)."""
        # Imported when a tokenizer.json's text stages are read, not with tokfx: their tables
        # (tokenizers_categories) are 5 MB of a trainer's peak memory (bench/README.md, issue 26).
        from tokfx.normalizers.huggingface import huggingface_normalizer
        from tokfx.pre_tokenizers.huggingface import HuggingFacePreTokenizer

        self.spec = spec
        try:
            self.normalizer = None if spec.get("normalizer") is None else huggingface_normalizer(spec["normalizer"])
            self.pre_tokenizer = HuggingFacePreTokenizer(spec.get("pre_tokenizer"))
            self.added = AddedTokens(_added_tokens(spec.get("added_tokens") or [], source),
                                     self.normalizer.normalize if self.normalizer else None)
            self._decode = _decoder(spec.get("decoder"), "decoder")
            self.framing = framing_of(spec.get("post_processor"), Fields(source),
                                      {t.content for t in self.added.tokens})
            # None: a BPE, whose tokens and merges the Tokenizer's bpe segmenter runs.
            self.model = (None if spec.get(KEPT_MODEL) is None
                          else _own_model(spec[KEPT_MODEL], self.pre_tokenizer.byte_level))
        except ValueError as exc:
            if isinstance(exc, TokenizerFileError):
                raise
            field, _, message = str(exc).partition(": ")
            raise TokenizerFileError(source, field, message) from None

    @property
    def description(self) -> str:
        return self.pre_tokenizer.description

    def segments(self, text: str, ordinary: bool = False) -> Iterator[tuple]:
        for part, token, begins in self.added.split(text, keep_special=ordinary):
            if token is not None:
                yield token.content, None, None
            else:
                data, ends = self.pre_tokenizer.encoder_input(part, begins)
                yield None, data, ends

    def fit(self, tokenizer) -> None:
        """What the model allows the text stages to do faster, the same ids: for BPE over
        characters, when no token holds U+2581 after another character, a cut before each run of
        U+2581 (the sentencepiece pattern) is where no merge reaches, and spares BPE a piece as
        long as the text (the sentencepiece exports have no pre-tokenizer)."""
        if tokenizer.alphabet.name != "chars" or tokenizer.segmenter != "bpe":
            return
        reserved = set(tokenizer.special_tokens.values()) | set(tokenizer.control_tokens.values())
        texts = [tokenizer.alphabet.decode(t) for i, t in enumerate(tokenizer.tokens) if i not in reserved]
        if not any(_SPANS_A_SPACE.search(t) for t in texts):
            self.pre_tokenizer.split_where_no_token_spans("sentencepiece")

    def decode(self, pieces: list[str]) -> str:
        """The text of the tokens spelled as `tokenizers` spells them (`pieces`), through the
        tokenizer.json's decoder (none: joined with spaces, as `tokenizers` does)."""
        return self._decode(pieces)


def _own_model(spec: object, byte_level: bool):
    """The encoder of a model that runs as its own (the `huggingface` segmenter)."""
    if isinstance(spec, dict) and spec.get("type", "BPE" if "merges" in spec else None) == "BPE":
        return BPEModel(spec, byte_level)
    return huggingface_model(spec, byte_level)


def _added_tokens(entries: object, source: str) -> list[AddedToken]:
    f = Fields(source)
    tokens = []
    for i, entry in enumerate(f.list(entries, "added_tokens", MAX_SPECIAL_TOKENS)):
        field = f"added_tokens[{i}]"
        entry = f.object(entry, field, ("id", "content"), ("special", "single_word", "lstrip", "rstrip",
                                                            "normalized"))
        flags = {}
        for key in ("special", "single_word", "lstrip", "rstrip", "normalized"):
            value = entry.get(key, key == "normalized" and not entry.get("special", False))
            if not isinstance(value, bool):
                f.fail(f"{field}.{key}", f"expected true or false, got {shown(value)}")
            flags[key] = value
        content = f.str(entry["content"], f"{field}.content", MAX_SPECIAL_TOKEN_BYTES)
        tokens.append(AddedToken(content, f.int(entry["id"], f"{field}.id", 0, MAX_TOKENS - 1), **flags))
    return tokens


# --- the decoder ---------------------------------------------------------------------------------
def _decoder(spec: object, field: str) -> Callable[[list[str]], str]:
    if spec is None:
        return " ".join
    chain = _decoder_chain(spec, field)

    def decode(pieces: list[str]) -> str:
        for step in chain:
            pieces = step(pieces)
        return "".join(pieces)
    return decode


def _decoder_chain(spec: object, field: str) -> list[Callable[[list[str]], list[str]]]:
    return [step for component, where in components(spec, field, "decoders", "decoders")
            for step in _decoder_steps(component, where)]


def _decoder_steps(spec: dict, field: str) -> list[Callable[[list[str]], list[str]]]:
    kind = spec["type"]
    if kind == "ByteLevel":
        return [_byte_level_decode]
    if kind == "ByteFallback":
        return [_byte_fallback_decode]
    if kind == "Fuse":
        return [lambda pieces: ["".join(pieces)]]
    if kind == "Replace":
        pattern, content = spec.get("pattern"), spec.get("content")
        if not (isinstance(pattern, dict) and set(pattern) == {"String"} and isinstance(pattern["String"], str)
                and isinstance(content, str)):
            raise ValueError(f"{field}.pattern: tokfx reads a Replace decoder of a {{\"String\": ...}} pattern only")
        old = pattern["String"]
        return [lambda pieces: [p.replace(old, content) if old else p for p in pieces]]
    if kind == "Strip":
        content, start, stop = spec.get("content"), spec.get("start"), spec.get("stop")
        if not (isinstance(content, str) and len(content) == 1 and type(start) is int and type(stop) is int
                and 0 <= start <= 1024 and 0 <= stop <= 1024):
            raise ValueError(f"{field}: expected a one-character content and small start and stop")
        return [lambda pieces: [_strip(p, content, start, stop) for p in pieces]]
    if kind == "Metaspace":
        replacement = spec.get("replacement", "\u2581")
        scheme = spec.get("prepend_scheme", "always")
        if "add_prefix_space" in spec and "prepend_scheme" not in spec:
            scheme = "always" if spec["add_prefix_space"] else "never"
        if not isinstance(replacement, str) or len(replacement) != 1 or scheme not in ("first", "always", "never"):
            raise ValueError(f"{field}: expected a one-character replacement and a prepend scheme")
        return [lambda pieces: _metaspace_decode(pieces, replacement, scheme != "never")]
    if kind == "BPEDecoder":  # src/decoders/bpe.rs: the suffix ends a word, a space but after the last
        suffix = spec.get("suffix", "</w>")
        if not isinstance(suffix, str) or len(suffix) > 64:
            raise ValueError(f"{field}.suffix: expected a string of at most 64 characters")
        return [lambda pieces: [p.replace(suffix, " " if i < len(pieces) - 1 else "") for i, p in enumerate(pieces)]]
    if kind == "WordPiece":
        prefix, cleanup = spec.get("prefix", "##"), spec.get("cleanup", True)
        if not isinstance(prefix, str) or len(prefix) > 64 or not isinstance(cleanup, bool):
            raise ValueError(f"{field}: expected a prefix of at most 64 characters and cleanup true or false")
        return [lambda pieces: _wordpiece_decode(pieces, prefix, cleanup)]
    raise ValueError(f"{field}: the decoder {kind!r} is not supported (tokfx reads ByteLevel, ByteFallback,"
                     " Fuse, Replace, Strip, Metaspace, WordPiece, BPEDecoder, Sequence)")


def _byte_level_decode(pieces: list[str]) -> list[str]:
    data = bytearray()
    for piece in pieces:
        try:
            data += unspell(piece)
        except KeyError:  # tokenizers keeps a token with a character outside the alphabet as text
            data += piece.encode("utf-8")
    return [bytes(data).decode("utf-8", "replace")]


def _byte_fallback_decode(pieces: list[str]) -> list[str]:
    out, pending = [], bytearray()

    def flush():
        if pending:
            try:
                out.append(bytes(pending).decode("utf-8"))
            except UnicodeDecodeError:  # one U+FFFD per byte token, as tokenizers writes them
                out.extend("\ufffd" * len(pending))
            pending.clear()

    for piece in pieces:
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">") and _is_hex(piece[3:5]):
            pending.append(int(piece[3:5], 16))
        else:
            flush()
            out.append(piece)
    flush()
    return out


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


def _strip(piece: str, content: str, start: int, stop: int) -> str:
    begin = 0
    while begin < min(start, len(piece)) and piece[begin] == content:
        begin += 1
    end = len(piece)
    while len(piece) - end < stop and end > begin and piece[end - 1] == content:
        end -= 1
    return piece[begin:end]


# WordPiece's cleanup (src/decoders/wordpiece.rs): these replacements, in this order, within
# each token (the space written before it included), never across tokens.
_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def _wordpiece_decode(pieces: list[str], prefix: str, cleanup: bool) -> list[str]:
    """Every token but the first joined to the one before with a space, unless it starts with
    `prefix` (then dropped): the prefix is tested with Rust's strip_prefix, so "" always is."""
    out = []
    for i, piece in enumerate(pieces):
        if i:
            piece = piece[len(prefix):] if piece.startswith(prefix) else " " + piece
        if cleanup:
            for old, new in _CLEANUP:
                piece = piece.replace(old, new)
        out.append(piece)
    return out


def _metaspace_decode(pieces: list[str], replacement: str, drop_first: bool) -> list[str]:
    return [p.replace(replacement, "" if i == 0 and drop_first else " ") for i, p in enumerate(pieces)]


# --- the post-processor ----------------------------------------------------------------------------
def framing_of(spec: object, f: Fields, known: set[str], field: str = "post_processor") -> Framing:
    """What the post-processor adds around one sequence (`known`: the added tokens' contents,
    which are all it may add)."""
    if spec is None:
        return Framing()
    spec = f.object(spec, field, ("type",), None)
    kind = spec["type"]
    if kind == "Sequence":
        items = f.list(spec.get("processors"), f"{field}.processors", 16)
        framings = [framing_of(item, f, known, f"{field}.processors[{i}]") for i, item in enumerate(items)]
        adding = [fr for fr in framings if fr != Framing()]
        if len(adding) > 1:
            f.fail(field, "more than one processor adds tokens")
        return adding[0] if adding else Framing()
    if kind == "ByteLevel":
        return Framing()
    if kind == "TemplateProcessing":
        single = f.list(spec.get("single"), f"{field}.single", 16)
        before, after, seen = [], [], False
        for i, piece in enumerate(single):
            piece = f.object(piece, f"{field}.single[{i}]", (), None)
            if "Sequence" in piece:
                seen = True
            elif "SpecialToken" in piece and isinstance(piece["SpecialToken"], dict):
                (after if seen else before).append(piece["SpecialToken"].get("id"))
            else:
                f.fail(f"{field}.single[{i}]", "expected a SpecialToken or the Sequence")
        if len(before) > 1 or len(after) > 1 or not seen:
            f.fail(f"{field}.single", "tokfx reads a template of at most one token before and one after"
                                      " the sequence")
        bos, eos = (before or [None])[0], (after or [None])[0]
    elif kind in ("BertProcessing", "RobertaProcessing"):
        bos, eos = (_pair_token(spec.get(key), f, f"{field}.{key}") for key in ("cls", "sep"))
    else:
        f.fail(field, f"the post-processor {shown(kind)} is not supported (tokfx reads TemplateProcessing,"
                      " BertProcessing, RobertaProcessing, ByteLevel, Sequence)")
    for name in (bos, eos):
        if name is not None and name not in known:
            f.fail(field, f"adds {shown(name)}, which is not an added token")
    return Framing(bos, eos, bos is not None, eos is not None)


def _pair_token(value: object, f: Fields, field: str) -> str:
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
        f.fail(field, f"expected [token, id], got {shown(value)}")
    return value[0]


# --- the model -----------------------------------------------------------------------------------
def huggingface_tokenizer_args(path) -> dict:
    """The Tokenizer constructor's keywords for a tokenizer.json (module docstring)."""
    source = str(path)
    doc = read_json_file(path)
    if not is_huggingface(doc):
        raise TokenizerFileError(source, None, "not a Hugging Face tokenizer.json (no \"model\" object and"
                                 " \"added_tokens\")")
    return tokenizer_args_of(doc, source)


CONFIG_FILE = "tokenizer_config.json"


def tokenizer_args_of(doc: dict, source: str) -> dict:
    f = Fields(source)
    doc = f.object(doc, "", ("model",), None)
    model = f.object(doc["model"], "model", ("vocab",), None)
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind in MODELS:
        return _own_model_args(HuggingFaceText({**{key: doc.get(key) for key in KEPT}, KEPT_MODEL: model}, source), f)
    text = HuggingFaceText({key: doc.get(key) for key in KEPT}, source)
    if kind != "BPE":
        f.fail("model.type", f"the model {shown(kind)} is not supported (tokfx reads BPE, {', '.join(MODELS)})")
    if runs_as_own_model(model, text.pre_tokenizer.byte_level):
        return _own_model_args(HuggingFaceText({**text.spec, KEPT_MODEL: model}, source), f)
    if model.get("dropout") not in (None, 0, 0.0):  # tokenizers runs a dropout of 0 as none
        f.fail("model.dropout", f"is {shown(model['dropout'])}: tokfx reads BPE without dropout")
    for key in ("byte_fallback", "ignore_merges", "fuse_unk"):
        if not isinstance(model.get(key, False), bool):
            f.fail(f"model.{key}", f"expected true or false, got {shown(model[key])}")
    vocab = f.object(model["vocab"], "model.vocab", (), None)
    if len(vocab) > MAX_TOKENS:
        f.fail("model.vocab", f"{len(vocab):,} tokens: at most {MAX_TOKENS:,}")
    ids = list(vocab.values())
    if set(map(type, ids)) - {int} or sorted(ids) != list(range(len(ids))):
        f.fail("model.vocab", "its ids must be the integers 0..N-1, each once")
    pieces = [None] * len(ids)
    for piece, i in vocab.items():
        if len(piece) > MAX_TOKEN_SYMBOLS:
            f.fail("model.vocab", f"a token of {len(piece):,} characters: at most {MAX_TOKEN_SYMBOLS:,}")
        pieces[i] = piece
    added = text.added.tokens
    specials = _added_ids(added, vocab, f)
    pieces += [None] * (max(specials.values(), default=-1) + 1 - len(pieces))
    byte_level = text.pre_tokenizer.byte_level
    if byte_level:
        if model.get("byte_fallback"):
            f.fail("model.byte_fallback", "byte_fallback behind a ByteLevel pre-tokenizer, which leaves no"
                                          " byte to fall back on")
        alphabet, tokens = BYTES, _byte_level_tokens(pieces, specials, f)
    else:  # byte_fallback (runs_as_own_model took the rest)
        alphabet, tokens = _fallback_tokens(pieces, specials, f)
    merges = _merges(model.get("merges", []), vocab, f)
    params = {"ignore_merges": int(model.get("ignore_merges", False))}
    return {"tokens": tokens, "merges": merges, "special_tokens": specials, "algorithm": "bpe",
            "params": {"vocab_size": len(tokens)}, "alphabet": alphabet, "segmenter": "bpe",
            "segmenter_params": params, "pipeline": text,
            "framing": _with_config_names(text.framing, Path(source).parent / CONFIG_FILE, set(specials))}


def _with_config_names(framing: Framing, config: Path, known: set[str]) -> Framing:
    """The framing with the BOS / EOS that transformers' tokenizer_config.json beside the file
    names where the post-processor names none (most name only the BOS they add: the EOS a model
    ends documents with is in the config). Whether they are added stays the post-processor's."""
    if not config.is_file():
        return framing
    f = Fields(str(config))
    doc = f.object(read_json_file(config), "", (), None)
    names = {}
    for key in ("bos_token", "eos_token"):
        value = doc.get(key)
        if isinstance(value, dict):  # {"content": "<s>", "lstrip": ..., ...}, AddedToken's form
            value = value.get("content")
        if value is None:
            continue
        name = f.str(value, key, MAX_SPECIAL_TOKEN_BYTES)
        if name not in known:
            f.fail(key, f"{shown(name)} is not an added token of the tokenizer.json beside it")
        names[key] = name
    return Framing(framing.bos or names.get("bos_token"), framing.eos or names.get("eos_token"),
                   framing.add_bos, framing.add_eos)


def _own_model_args(text: HuggingFaceText, f: Fields) -> dict:
    """The Tokenizer's keywords for a model that runs as its own encoder (the `huggingface`
    segmenter): every id's token is its text (the model's entry, or the added token's content
    beyond the vocabulary) over the chars alphabet of all their characters, which the encoder
    never reads but decode and tokfx.json do."""
    pieces = text.model.pieces
    specials = _added_ids(text.added.tokens, {piece: i for i, piece in enumerate(pieces)}, f)
    beyond = {i: content for content, i in specials.items() if i >= len(pieces)}
    texts = pieces + [beyond[i] for i in range(len(pieces), len(pieces) + len(beyond))]
    alphabet = Alphabet("chars", characters="".join(sorted(set().union(*texts))))
    algorithm = {"Unigram": "unigram", "BPE": "bpe"}.get(text.spec[KEPT_MODEL].get("type", "BPE"), "wordpiece")
    return {"tokens": [alphabet.token_of_text(t) for t in texts], "merges": [], "special_tokens": specials,
            "algorithm": algorithm, "params": {"vocab_size": len(texts)}, "alphabet": alphabet,
            "segmenter": "huggingface", "pipeline": text, "framing": text.framing}


def _contents(pieces: list, specials: dict[str, int]) -> list:
    by_id = {i: content for content, i in specials.items()}
    return [by_id.get(i) for i in range(len(pieces))]


def _added_ids(added: Sequence[AddedToken], vocab: dict[str, int], f: Fields) -> dict[str, int]:
    """{content: id} of the added tokens, each checked to be the id `tokenizers` gives it: its
    vocab id when the model has its content, else the next after the vocabulary."""
    specials, next_id = {}, len(vocab)
    for i, token in enumerate(added):
        expected = vocab.get(token.content)
        if expected is None:
            expected = max(next_id, max(specials.values(), default=-1) + 1)
            next_id = expected + 1
        if token.id != expected:
            f.fail(f"added_tokens[{i}].id", f"{token.id}, where tokenizers gives {token.content!r} id {expected}")
        if token.content in specials:
            f.fail(f"added_tokens[{i}]", f"{token.content!r} is added twice")
        specials[token.content] = token.id
    if len(specials) > MAX_SPECIAL_TOKENS:
        f.fail("added_tokens", f"{len(specials):,} added tokens: at most {MAX_SPECIAL_TOKENS:,}")
    return specials


def _byte_level_tokens(pieces: list, specials: dict[str, int], f: Fields) -> list[bytes]:
    contents = _contents(pieces, specials)
    tokens = []
    for i, (piece, content) in enumerate(zip(pieces, contents)):
        if content is not None:
            tokens.append(content.encode("utf-8"))
            continue
        try:
            tokens.append(unspell(piece))
        except KeyError:
            f.fail("model.vocab", f"token {i} {shown(piece)} is not spelled in GPT-2's byte alphabet")
    singles = {t[0] for i, t in enumerate(tokens) if len(t) == 1 and contents[i] is None}
    if len(singles) < 256:
        f.fail("model.vocab", f"byte {min(set(range(256)) - singles):#04x} has no token of its own")
    return tokens


def _fallback_tokens(pieces: list, specials: dict[str, int], f: Fields) -> tuple[Alphabet, list]:
    contents = _contents(pieces, specials)
    byte_ids = {_BYTE_TOKEN.format(b): b for b in range(256)}
    missing = [b for b in range(256) if _BYTE_TOKEN.format(b) not in pieces]
    if missing:
        f.fail("model.vocab", f"byte_fallback without a token {_BYTE_TOKEN.format(missing[0])}")
    single = "".join(p for p, c in zip(pieces, contents) if c is None and len(p) == 1)
    alphabet = Alphabet("chars", characters=single)
    tokens = []
    for i, (piece, content) in enumerate(zip(pieces, contents)):
        if content is not None:
            tokens.append(alphabet.token_of_text(content))
        elif piece in byte_ids:
            tokens.append((byte_ids[piece],))
        else:
            outside = next((c for c in piece if c not in alphabet.characters), None)
            if outside is not None:
                f.fail("model.vocab", f"token {i} {shown(piece)} holds {outside!r}, which is not a token of"
                                      " its own (so BPE never reaches it)")
            tokens.append(alphabet.token_of_text(piece))
    return alphabet, tokens


def _merges(value: object, vocab: dict[str, int], f: Fields) -> list[tuple[int, int, int]]:
    """(left, right, merged) ids in rank order; a pair listed twice keeps its last place, as
    tokenizers' map of merges does."""
    items = f.list(value, "model.merges", MAX_TOKENS)
    pairs = []
    for rank, item in enumerate(items):
        if isinstance(item, str):
            parts = item.split(" ")
        elif isinstance(item, list) and all(isinstance(p, str) for p in item):
            parts = item
        else:
            parts = None
        if not parts or len(parts) != 2:
            f.fail(f"model.merges[{rank}]", f"expected \"left right\" or [left, right], got {shown(item)}")
        left, right = parts
        for part in (left, right, left + right):
            if part not in vocab:
                f.fail(f"model.merges[{rank}]", f"{shown(part)} is not in the vocabulary")
        pairs.append((vocab[left], vocab[right], vocab[left + right]))
    last = {(a, b): rank for rank, (a, b, _) in enumerate(pairs)}
    return [m for rank, m in enumerate(pairs) if last[m[:2]] == rank]


def spelled_pieces(tokenizer, decoding: bool = True) -> list[str]:
    """Every id's token as `tokenizers` spells it (what its decoder reads): added tokens by
    their content (when `decoding`, normalized ones as normalized), byte-level tokens in GPT-2's
    byte alphabet, fallback bytes as <0xXX>."""
    alphabet = tokenizer.alphabet
    decoded = tokenizer.pipeline.added.decoded if decoding and tokenizer.pipeline is not None else {}
    names = {i: decoded.get(name, name) for name, i in tokenizer.special_tokens.items()}
    out = []
    for i, token in enumerate(tokenizer.tokens):
        if i in names:
            out.append(names[i])
        elif alphabet.name == "bytes":
            out.append(spell(bytes(token)))
        elif len(token) == 1 and token[0] < alphabet.char_base:
            out.append(_BYTE_TOKEN.format(token[0]))
        else:
            out.append(alphabet.decode(token))
    return out


def huggingface_json(tokenizer) -> dict:
    """The tokenizer.json of a tokenizer loaded from one (`tokenizer.pipeline`): its text stages
    as read, its model as read when it is one of MODELS, else (BPE) rebuilt from the tokens and
    merges. The model's vocabulary is every id up
    to the last that is not an added token (added tokens beyond it get their ids from
    `tokenizers` in order, as they had them)."""
    spec = tokenizer.pipeline.spec
    if spec.get(KEPT_MODEL) is not None:  # a model that runs as its own encoder: as it was read
        return {"version": "1.0", "truncation": None, "padding": None, **spec}
    pieces = spelled_pieces(tokenizer, decoding=False)
    added = set(tokenizer.special_tokens.values())
    size = 1 + max(i for i in range(len(pieces)) if i not in added)
    fallback = tokenizer.alphabet.name != "bytes"
    unknown = "<unk>" if fallback and "<unk>" in tokenizer.special_tokens else None
    model = {"type": "BPE", "dropout": None, "unk_token": unknown, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": fallback, "byte_fallback": fallback,
             "ignore_merges": bool(tokenizer.segmenter_params.get("ignore_merges")),
             "vocab": {pieces[i]: i for i in range(size)},
             "merges": [[pieces[left], pieces[right]] for left, right, _ in tokenizer.merge_ids]}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": spec.get("added_tokens") or [],
            **{key: spec.get(key) for key in KEPT if key != "added_tokens"}, "model": model}
