"""The tokfx.json file (described by schemas/tokfx.schema.json; read as untrusted input, field by
field, within tokfx.limits: tokfx.formats.untrusted) and the interop files written beside it (GPT-2 `vocab.json` + `merges.txt`, Hugging Face `tokenizer.json`).

The functions take a tokenizer as they find it (its tokens, merges, special tokens, pattern,
alphabet, segmenter, scaffold), and build one through the constructor they are given, so that
this module does not depend on `tokfx.tokenizer`, which saves and loads through it.
"""
from __future__ import annotations

import base64
import json
import logging
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path

from tokfx.alphabet import CHARACTERS, Alphabet
from tokfx.formats.gpt2 import write_gpt2_files
from tokfx.formats.huggingface import KEPT, KEPT_MODEL, HuggingFaceText, huggingface_json
from tokfx.formats.hf_json import (hf_byte_fallback_bpe_json, hf_tokenizer_json, hf_unigram_tokenizer_json,
                                   hf_wordpiece_tokenizer_json)
from tokfx.formats.sentencepiece_model import write_sentencepiece_model
from tokfx.formats.sentencepiece_tokenizer import sentencepiece_model, sentencepiece_refusal
from tokfx.formats.untrusted import Fields, TokenizerFileError, shown
from tokfx.limits import (MAX_CHARSMAP_BYTES, MAX_PATTERN_CHARS, MAX_SPECIAL_TOKEN_BYTES, MAX_SPECIAL_TOKENS,
                          MAX_TOKEN_SYMBOLS, MAX_TOKENS, MAX_TOTAL_SYMBOLS, MAX_UNKNOWN_TEXT_CHARS, MAX_WIDTH)
from tokfx.normalizers import SentencePieceNormalizer
from tokfx.pre_tokenizers import PATTERNS, resolve_pattern
from tokfx.segmenters import SEGMENTERS
from tokfx.segmenters.scaffold_bpe import ScaffoldVocab
from tokfx.special_tokens import Framing, check_special_tokens
from tokfx.version import __version__

TOKFX_JSON = "tokfx.json"
FORMAT_VERSION = 1
log = logging.getLogger(__name__)


# The algorithms a tokfx.json may name, with the names of their parameters: filled by
# tokfx.models.registry (a layer above this one, so it hands its trainers down) when tokfx is
# imported, so that the file is checked against the trainers that exist.
ALGORITHMS: dict[str, tuple[str, ...]] = {}


def register_algorithm(name: str, param_names: Iterable[str]) -> None:
    ALGORITHMS[name] = tuple(param_names)


def tokenizer_to_dict(tokenizer, *, for_json: bool = False, entries: bool = True) -> dict:
    """The tokenizer as a parsed tokfx.json holds it. `for_json`: for json.dumps alone, the
    tokens and merges left as the tuples the tokenizer holds (json writes a tuple as a list,
    the same bytes): a list per token was a copy of them all, part of a trainer's peak memory
    when it saves (bench/README.md, issue 26). `entries=False`: with no tokens and no merges
    (a pickle carries them as the tokenizer holds them: Tokenizer.__reduce__)."""
    row = tuple if for_json else list
    special_ids = {i: name for name, i in tokenizer.special_tokens.items()}
    control_ids = {i: name for name, i in tokenizer.control_tokens.items()}
    doc = {
        "format": "tokfx",
        "format_version": FORMAT_VERSION,
        "tokfx_version": __version__,
        "algorithm": tokenizer.algorithm,
        "params": tokenizer.params,
    }
    if tokenizer.pipeline is None:
        doc["pattern"] = {"name": tokenizer.pretokenizer.pattern_name, "regex": tokenizer.pretokenizer.pattern_regex}
    else:  # a Hugging Face tokenizer's text stages are its file's own (tokfx.formats.huggingface)
        doc["huggingface"] = tokenizer.pipeline.spec
    doc.update({
        "alphabet": tokenizer.alphabet.to_dict(),
        "special_tokens": [{"id": i, "content": name} for i, name in sorted(special_ids.items())],
        "tokens": [None if i in special_ids or i in control_ids else row(token)
                   for i, token in enumerate(tokenizer.tokens)] if entries else [],
        "merges": [row(m) for m in tokenizer.merge_ids] if entries else [],
    })
    if tokenizer.framing != Framing():
        doc["framing"] = asdict(tokenizer.framing)
    # Written only when not the default, so files of BPE tokenizers keep their bytes and hash (a
    # bpe segmenter's params: those not at their default, so that adding one changes no file).
    if tokenizer.segmenter != "bpe":
        doc["segmenter"] = {"name": tokenizer.segmenter, "params": tokenizer.segmenter_params}
    elif _changed_bpe_params(tokenizer):
        doc["segmenter"] = {"name": "bpe", "params": _changed_bpe_params(tokenizer)}
    if tokenizer.scaffold is not None:
        doc["scaffold"] = tokenizer.scaffold.to_dict()
    if tokenizer.scores is not None:
        doc["scores"] = tokenizer.scores
    if control_ids:
        doc["control_tokens"] = [{"id": i, "content": name} for i, name in sorted(control_ids.items())]
    if (tokenizer.pipeline is None and tokenizer.normalizer is not None
            and tokenizer.normalizer != tokenizer.pretokenizer.implied_normalizer):
        doc["normalizer"] = _normalizer_dict(tokenizer.normalizer)
    return doc


def _changed_bpe_params(tokenizer) -> dict:
    defaults = SEGMENTERS["bpe"].defaults
    return {key: value for key, value in tokenizer.segmenter_params.items() if value != defaults[key]}


def tokenizer_from_dict(doc: object, make: Callable, source: str = TOKFX_JSON,
                        held: tuple[list, list] | None = None):
    """The tokenizer of a tokfx.json document, built by `make` (the Tokenizer constructor); any
    fault is one TokenizerFileError naming `source` and the field (tokfx.formats.untrusted).
    `held`: (tokens, merges) as a Tokenizer holds them, from a pickle (Tokenizer.__reduce__),
    in place of the document's, which are then not read."""
    f = Fields(source)
    doc = f.object(doc, "", _REQUIRED, ("pattern", "huggingface", "framing", "segmenter", "scaffold", "scores",
                                        "control_tokens", "normalizer"))
    if ("pattern" in doc) == ("huggingface" in doc):
        f.fail("pattern", "a tokfx.json has a pattern or Hugging Face text stages (\"huggingface\"), one of them")
    if doc["format"] != "tokfx":
        f.fail("format", f"expected \"tokfx\", got {shown(doc['format'])}")
    if f.int(doc["format_version"], "format_version") != FORMAT_VERSION:
        f.fail("format_version", f"this tokfx reads version {FORMAT_VERSION}, not {doc['format_version']}")
    f.str(doc["tokfx_version"], "tokfx_version", 64)
    algorithm = f.str(doc["algorithm"], "algorithm", 64)
    if algorithm not in ALGORITHMS:
        f.fail("algorithm", f"unknown algorithm {shown(algorithm)}; known: {', '.join(sorted(ALGORITHMS))}")
    params = _read_params(f, doc["params"], ALGORITHMS[algorithm])
    pattern = _read_pattern(f, doc["pattern"]) if "pattern" in doc else "gpt2"
    pipeline = _read_huggingface(f, doc["huggingface"]) if "huggingface" in doc else None
    framing = _read_framing(f, doc["framing"]) if "framing" in doc else None
    alphabet = _read_alphabet(f, doc["alphabet"])
    special = _read_special_tokens(f, doc["special_tokens"])
    control = _read_special_tokens(f, doc["control_tokens"], "control_tokens") if "control_tokens" in doc else {}
    normalizer = _read_normalizer(f, doc["normalizer"], source) if "normalizer" in doc else None
    reserved = sorted([*special.values(), *control.values()])
    if held is None:
        doc_tokens = f.int_rows(doc["tokens"], "tokens", MAX_TOKENS, 1, MAX_TOKEN_SYMBOLS, 0,
                                alphabet.size - 1, MAX_TOTAL_SYMBOLS, nullable=True)
        nulls = [i for i, t in enumerate(doc_tokens) if t is None]
        if nulls != reserved:
            f.fail("tokens", f"null at ids {nulls[:5]}, which must be the special- and control-token ids"
                             f" {reserved[:5]}")
        merges = f.int_rows(doc["merges"], "merges", MAX_TOKENS, 3, 3, 0, len(doc_tokens) - 1,
                            3 * MAX_TOKENS)
        names = {i: name for name, i in [*special.items(), *control.items()]}
        tokens = [alphabet.token_of_text(names[i]) if t is None else t for i, t in enumerate(doc_tokens)]
    else:
        tokens, merges = held
    segmenter, segmenter_params = _read_segmenter(f, doc.get("segmenter", {"name": "bpe", "params": {}}))
    scores = f.scores(doc["scores"], "scores", len(tokens), set(reserved)) if "scores" in doc else None
    try:
        scaffold = _read_scaffold(f, doc["scaffold"], alphabet) if "scaffold" in doc else None
    except ValueError as exc:
        if isinstance(exc, TokenizerFileError):
            raise
        f.fail("scaffold", str(exc))
    try:
        return make(tokens, merges if held is not None else [tuple(m) for m in merges], special, pattern, algorithm, params,
                    alphabet, segmenter, segmenter_params, scaffold, scores, normalizer, control, pipeline,
                    framing)
    except ValueError as exc:  # the constructor's checks name what they refuse (merges[3], ...)
        f.fail(None, str(exc))


_REQUIRED = ("format", "format_version", "tokfx_version", "algorithm", "params", "alphabet",
             "special_tokens", "tokens", "merges")


def _read_huggingface(f: Fields, value: object) -> HuggingFaceText:
    spec = f.object(value, "huggingface", (), (*KEPT, KEPT_MODEL))
    try:
        return HuggingFaceText(spec, f.source)
    except TokenizerFileError as exc:  # its fields, named inside "huggingface"
        f.fail(f"huggingface.{exc.field}" if exc.field else "huggingface", exc.message)


def _read_framing(f: Fields, value: object) -> Framing:
    framing = f.object(value, "framing", ("bos", "eos", "add_bos", "add_eos"))
    for key in ("bos", "eos"):
        if framing[key] is not None:
            f.str(framing[key], f"framing.{key}", MAX_SPECIAL_TOKEN_BYTES)
    for key in ("add_bos", "add_eos"):
        if not isinstance(framing[key], bool):
            f.fail(f"framing.{key}", f"expected true or false, got {shown(framing[key])}")
    try:
        return Framing(**framing)
    except ValueError as exc:
        f.fail("framing", str(exc))


def _read_params(f: Fields, value: object, param_names: tuple[str, ...]) -> dict:
    """The trainer's recorded parameters: `vocab_size` an int, the others the algorithm's own,
    each an int, a finite float, a string, null or an array of ints (what the trainers record)."""
    params = f.object(value, "params", (), ("vocab_size", *param_names))
    for name, item in params.items():
        field = f"params.{name}"
        if name == "vocab_size" or isinstance(item, bool):
            f.int(item, field, 1, MAX_TOKENS)
        elif isinstance(item, float):  # unigram's shrinking_factor
            if not math.isfinite(item):
                f.fail(field, f"expected a finite number, got {shown(item)}")
        elif isinstance(item, list):
            f.ints(item, field, MAX_TOKENS, 0, 2**64 - 1)
        elif isinstance(item, str):
            f.str(item, field, 64)
        elif item is not None:
            f.int(item, field, 0, 2**64 - 1)
    return params


def _read_pattern(f: Fields, value: object) -> str:
    """The pattern to build: a named pattern's name (its regex must be the one the name means:
    the native splitter runs the name and would ignore another regex), or a user regex."""
    pattern = f.object(value, "pattern", ("name", "regex"))
    name, source = pattern["name"], f.str(pattern["regex"], "pattern.regex", MAX_PATTERN_CHARS)
    if name is None:
        try:
            if resolve_pattern(source)[0] is not None:
                raise ValueError("a pattern name written as the regex (with a null name)")
        except (TypeError, ValueError) as exc:
            f.fail("pattern.regex", str(exc))
        return source
    f.str(name, "pattern.name", 64)
    if name not in PATTERNS:
        f.fail("pattern.name", f"unknown pattern name {shown(name)}; known: {', '.join(sorted(PATTERNS))}")
    if source != PATTERNS[name]:
        f.fail("pattern.regex", f"is not the regex of the pattern {name!r} (a user regex has a null name)")
    return name


def _read_alphabet(f: Fields, value: object) -> Alphabet:
    alphabet = f.object(value, "alphabet", ("name",), ("groups", "characters", "unknown"))
    name = f.str(alphabet["name"], "alphabet.name", 16)
    groups = f.ints(alphabet["groups"], "alphabet.groups", 4, 0, 255) if "groups" in alphabet else ()
    characters = (f.str(alphabet["characters"], "alphabet.characters", MAX_TOKENS, nonempty=False)
                  if "characters" in alphabet else "")
    unknown = (f.str(alphabet["unknown"], "alphabet.unknown", MAX_UNKNOWN_TEXT_CHARS, nonempty=False)
               if "unknown" in alphabet else None)
    try:
        return Alphabet(name, tuple(groups), characters, unknown)
    except ValueError as exc:
        f.fail("alphabet", str(exc))


def _read_special_tokens(f: Fields, value: object, field: str = "special_tokens") -> dict[str, int]:
    """{content: id} (special or control tokens): the contents distinct and within
    tokfx.limits, the ids distinct."""
    entries = f.list(value, field, MAX_SPECIAL_TOKENS)
    special = {}
    for i, entry in enumerate(entries):
        entry = f.object(entry, f"{field}[{i}]", ("id", "content"))
        token_id = f.int(entry["id"], f"{field}[{i}].id", 0, MAX_TOKENS - 1)
        content = f.str(entry["content"], f"{field}[{i}].content", MAX_SPECIAL_TOKEN_BYTES)
        if content in special or token_id in special.values():
            f.fail(f"{field}[{i}]", "its content or id is another one's")
        special[content] = token_id
    try:
        check_special_tokens(special)
    except (TypeError, ValueError) as exc:
        f.fail(field, str(exc))
    return special


_NORMALIZER_FLAGS = ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces",
                     "treat_whitespace_as_suffix")


def _normalizer_dict(normalizer) -> dict:
    """sentencepiece's normalizer: its rules as the model file holds them (base64), its flags and
    the user-defined symbols it leaves as they are."""
    return {"name": "sentencepiece", "charsmap": base64.b64encode(normalizer.charsmap).decode("ascii"),
            **{flag: getattr(normalizer, flag) for flag in _NORMALIZER_FLAGS},
            "user_defined_symbols": list(normalizer.user_defined_symbols)}


def _read_normalizer(f: Fields, value: object, source: str):
    doc = f.object(value, "normalizer", ("name", "charsmap", *_NORMALIZER_FLAGS, "user_defined_symbols"))
    if doc["name"] != "sentencepiece":
        f.fail("normalizer.name", f"unknown normalizer {shown(doc['name'])}; known: sentencepiece")
    encoded = f.str(doc["charsmap"], "normalizer.charsmap", 2 * MAX_CHARSMAP_BYTES, nonempty=False)
    try:
        charsmap = base64.b64decode(encoded, validate=True)
    except ValueError:
        f.fail("normalizer.charsmap", "is not base64")
    flags = {}
    for flag in _NORMALIZER_FLAGS:
        if not isinstance(doc[flag], bool):
            f.fail(f"normalizer.{flag}", f"expected true or false, got {shown(doc[flag])}")
        flags[flag] = doc[flag]
    symbols = f.list(doc["user_defined_symbols"], "normalizer.user_defined_symbols", MAX_SPECIAL_TOKENS)
    for i, symbol in enumerate(symbols):
        f.str(symbol, f"normalizer.user_defined_symbols[{i}]", MAX_SPECIAL_TOKEN_BYTES)
    return SentencePieceNormalizer(charsmap, **flags, user_defined_symbols=symbols,
                                   source=f"{source}: normalizer.charsmap")


def _read_segmenter(f: Fields, value: object) -> tuple[str, dict]:
    segmenter = f.object(value, "segmenter", ("name", "params"))
    name = f.str(segmenter["name"], "segmenter.name", 64)
    if name not in SEGMENTERS:
        f.fail("segmenter.name", f"unknown segmenter {shown(name)}; known: {', '.join(SEGMENTERS)}")
    params = f.object(segmenter["params"], "segmenter.params", (), tuple(SEGMENTERS[name].defaults))
    for key, item in params.items():
        f.int(item, f"segmenter.params.{key}", *_SEGMENTER_PARAM_RANGE.get(key, (0, 2**63 - 1)))
    return name, params


_SEGMENTER_PARAM_RANGE = {"max_width": (1, MAX_WIDTH), "seed": (0, 2**64 - 1), "ignore_merges": (0, 1),
                          "rank_by_id": (0, 1)}


def _read_scaffold(f: Fields, value: object, alphabet: Alphabet) -> ScaffoldVocab:
    """Scaffold-BPE's expanded vocabulary. Its scaffold tokens are not written out, so their
    lengths are computed from the merges, and bounded, before any token is built."""
    scaffold = f.object(value, "scaffold", ("merges", "is_scaffold", "model_ids"))
    merges = f.int_rows(scaffold["merges"], "scaffold.merges", MAX_TOKENS, 2, 2, 0,
                        alphabet.size + MAX_TOKENS, 2 * MAX_TOKENS)
    flags = f.list(scaffold["is_scaffold"], "scaffold.is_scaffold", MAX_TOKENS)
    if set(map(type, flags)) - {bool}:
        f.fail("scaffold.is_scaffold", "expected an array of true/false")
    model_ids = f.list(scaffold["model_ids"], "scaffold.model_ids", alphabet.size + MAX_TOKENS)
    if set(map(type, model_ids)) - {int, type(None)}:
        f.fail("scaffold.model_ids", "expected an array of ints and nulls")
    lengths, total = [1] * alphabet.size, alphabet.size
    for rank, (left, right) in enumerate(merges):
        if left >= len(lengths) or right >= len(lengths):
            f.fail(f"scaffold.merges[{rank}]", f"uses an id not made before it ({left}, {right})")
        lengths.append(lengths[left] + lengths[right])
        total += lengths[-1]
        if lengths[-1] > MAX_TOKEN_SYMBOLS or total > MAX_TOTAL_SYMBOLS:
            f.fail(f"scaffold.merges[{rank}]", f"its tokens would spell more than {MAX_TOKEN_SYMBOLS:,}"
                                               f" symbols each or {MAX_TOTAL_SYMBOLS:,} in all")
    return ScaffoldVocab.from_dict(scaffold, alphabet)


# The canonical tokfx.json: compact, UTF-8, then a newline.
_CANONICAL = {"ensure_ascii": False, "separators": (",", ":")}
# write_tokenizer_json encodes a long list this many items at a time.
JSON_SLICE = 4096


def tokenizer_json_bytes(tokenizer) -> bytes:
    """The canonical tokfx.json content: same tokenizer, same bytes."""
    return (json.dumps(tokenizer_to_dict(tokenizer, for_json=True), **_CANONICAL) + "\n").encode("utf-8")


def write_tokenizer_json(tokenizer, path: Path) -> None:
    """tokenizer_json_bytes(tokenizer) written to `path` a part at a time: the document's
    fields one by one, its long lists (tokens, scores) JSON_SLICE items at a time, each by
    json's encoder. Made whole (the encoder's pieces, the text, its bytes) it was 5 MB for
    32,000 tokens with scores, the peak of a trainer that saves (bench/README.md, issue 26)."""
    doc = tokenizer_to_dict(tokenizer, for_json=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        for k, (field, value) in enumerate(doc.items()):
            f.write(("{" if k == 0 else ",") + json.dumps(field, **_CANONICAL) + ":")
            if isinstance(value, list) and len(value) > JSON_SLICE:
                for i in range(0, len(value), JSON_SLICE):
                    f.write(("[" if i == 0 else ",") + json.dumps(value[i:i + JSON_SLICE], **_CANONICAL)[1:-1])
                f.write("]")
            else:
                f.write(json.dumps(value, **_CANONICAL))
        f.write("}\n")


def tokenizer_hash(tokenizer) -> str:
    """sha256 of the canonical tokfx.json: names a tokenizer in shards and manifests."""
    import hashlib  # here, not with the module: it loads OpenSSL (3.5 MB), which training never needs

    return hashlib.sha256(tokenizer_json_bytes(tokenizer)).hexdigest()


def interop_refusal(tokenizer) -> str | None:
    """Why GPT-2 and Hugging Face files cannot express the tokenizer, or None when they can:
    they name tokens by their bytes and segment by BPE merges alone."""
    if tokenizer.alphabet.name != "bytes":
        return (f"GPT-2 and Hugging Face files cannot express the {tokenizer.alphabet.name} alphabet"
                " (a token's bytes depend on the prefix symbols before it)")
    if tokenizer.segmenter == "likelihood" and tokenizer.scores is not None:
        if max(len(t) for t in tokenizer.tokens) > tokenizer.segmenter_params["max_width"]:
            return "a Hugging Face Unigram model has no max_width, and tokens are wider than this one"
    elif tokenizer.segmenter == "greedy":
        specials = set(tokenizer.special_tokens.values())
        widest = max(len(t) for i, t in enumerate(tokenizer.tokens) if i not in specials)
        if widest > tokenizer.segmenter_params["max_width"]:
            return "a Hugging Face WordPiece model has no max_width, and tokens are wider than this one"
    elif tokenizer.segmenter != "bpe":
        return f"GPT-2 and Hugging Face files segment by BPE merges, not {tokenizer.segmenter}"
    elif _changed_bpe_params(tokenizer):
        return (f"the GPT-2 and Hugging Face files written here segment by ranked merges alone, not"
                f" with {' and '.join(_changed_bpe_params(tokenizer))}")
    if tokenizer.scaffold is not None and tokenizer.scaffold.scaffold:
        return (f"GPT-2 and Hugging Face files cannot express the {len(tokenizer.scaffold.scaffold):,}"
                " scaffold tokens (merged, then demolished into normal tokens)")
    if len(set(tokenizer.vocab.values())) != tokenizer.vocab_size:
        return "GPT-2 and Hugging Face files name tokens by their bytes, and two tokens share theirs"
    return None


def save_tokenizer(tokenizer, directory: str | os.PathLike) -> str | None:
    """Write tokfx.json, plus GPT-2 and Hugging Face files where they can express the tokenizer
    (a byte-alphabet BPE tokenizer, without scaffold tokens, whose tokens have distinct bytes);
    return why they were not written, or None."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_tokenizer_json(tokenizer, directory / TOKFX_JSON)
    if tokenizer.pipeline is not None:  # loaded from a tokenizer.json: that file again
        (directory / "tokenizer.json").write_text(json.dumps(huggingface_json(tokenizer), ensure_ascii=False, indent=1),
                                                  encoding="utf-8")
        return None
    if tokenizer.alphabet.name in CHARACTERS:
        return _save_sentencepiece_files(tokenizer, directory)
    refusal = interop_refusal(tokenizer)
    if refusal is not None:
        log.info("%s: wrote %s only; %s", directory, TOKFX_JSON, refusal)
        return refusal
    if tokenizer.segmenter == "likelihood":  # Unigram: tokenizer.json only, GPT-2 files need merges
        hf = hf_unigram_tokenizer_json(tokenizer.vocab, tokenizer.scores, tokenizer.special_tokens,
                                       tokenizer.pretokenizer.pattern_regex)
        (directory / "tokenizer.json").write_text(json.dumps(hf, ensure_ascii=False, indent=1), encoding="utf-8")
        return "GPT-2 files segment by BPE merges; a Unigram tokenizer gets tokenizer.json only"
    if tokenizer.segmenter == "greedy":  # WordPiece model: tokenizer.json only, GPT-2 files segment by merges
        hf = hf_wordpiece_tokenizer_json(tokenizer.vocab, tokenizer.special_tokens, tokenizer.pretokenizer.pattern_regex)
        (directory / "tokenizer.json").write_text(json.dumps(hf, ensure_ascii=False, indent=1), encoding="utf-8")
        return "GPT-2 files segment by BPE merges; a greedy tokenizer gets tokenizer.json only (WordPiece model)"
    write_gpt2_files(directory, tokenizer.vocab, tokenizer.merges)
    hf = hf_tokenizer_json(tokenizer.vocab, tokenizer.merges, tokenizer.special_tokens,
                           tokenizer.pretokenizer.pattern_regex)
    (directory / "tokenizer.json").write_text(json.dumps(hf, ensure_ascii=False, indent=1), encoding="utf-8")
    return None


def _save_sentencepiece_files(tokenizer, directory: Path) -> str | None:
    """tokenizer.model where sentencepiece can express the tokenizer, and for BPE a Hugging Face
    tokenizer.json; return what was not written and why, or what differs, or None."""
    refusal = sentencepiece_refusal(tokenizer)
    if refusal:
        log.info("%s: wrote %s only; %s", directory, TOKFX_JSON, refusal)
        return f"no sentencepiece or Hugging Face files: {refusal}"
    model, note = sentencepiece_model(tokenizer)
    write_sentencepiece_model(directory / "tokenizer.model", model)
    if tokenizer.segmenter != "bpe":
        return note
    if tokenizer.alphabet.unknown is not None:
        return "; ".join(filter(None, [note, "no tokenizer.json: tokfx writes it with byte fallback, and this"
                                             " tokenizer has an unknown symbol instead"]))
    normalizer = tokenizer.normalizer
    if not normalizer.is_identity or normalizer.remove_extra_whitespaces or not normalizer.add_dummy_prefix:
        return "; ".join(filter(None, [note, "no tokenizer.json: its normalization is sentencepiece's"
                                             " own rules, which it has no exact equal for"]))
    control = tokenizer.control_tokens
    reserved = set(tokenizer.special_tokens.values()) | set(control.values())
    pieces = [None if i in reserved else model.pieces[i].piece for i in range(tokenizer.vocab_size)]
    hf = hf_byte_fallback_bpe_json(pieces, tokenizer.merge_ids, tokenizer.special_tokens, control,
                                   tokenizer.pretokenizer.pattern_regex)
    (directory / "tokenizer.json").write_text(json.dumps(hf, ensure_ascii=False, indent=1), encoding="utf-8")
    return note
