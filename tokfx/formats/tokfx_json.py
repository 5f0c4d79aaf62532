"""The tokfx.json file (validated against schemas/tokfx.schema.json) and the interop files
written beside it (GPT-2 `vocab.json` + `merges.txt`, Hugging Face `tokenizer.json`).

The functions take a tokenizer as they find it (its tokens, merges, special tokens, pattern,
alphabet, segmenter, scaffold), and build one through the constructor they are given, so that
this module does not depend on `tokfx.tokenizer`, which saves and loads through it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path

import fastjsonschema

from tokfx.alphabet import Alphabet
from tokfx.formats.gpt2 import write_gpt2_files
from tokfx.formats.hf_json import hf_tokenizer_json, hf_unigram_tokenizer_json, hf_wordpiece_tokenizer_json
from tokfx.segmenters.scaffold_bpe import ScaffoldVocab
from tokfx.version import __version__

TOKFX_JSON = "tokfx.json"
FORMAT_VERSION = 1
log = logging.getLogger(__name__)


@cache
def _validator():
    schema = json.loads(resources.files("tokfx.schemas").joinpath("tokfx.schema.json").read_text())
    return fastjsonschema.compile(schema)


def tokenizer_to_dict(tokenizer) -> dict:
    special_ids = {i: name for name, i in tokenizer.special_tokens.items()}
    tokens = tokenizer.tokens
    doc = {
        "format": "tokfx",
        "format_version": FORMAT_VERSION,
        "tokfx_version": __version__,
        "algorithm": tokenizer.algorithm,
        "params": tokenizer.params,
        "pattern": {"name": tokenizer.pretokenizer.pattern_name,
                    "regex": tokenizer.pretokenizer.pattern_regex},
        "alphabet": tokenizer.alphabet.to_dict(),
        "special_tokens": [{"id": i, "content": name} for i, name in sorted(special_ids.items())],
        "tokens": [None if i in special_ids else list(token) for i, token in enumerate(tokens)],
        "merges": [list(m) for m in tokenizer.merge_ids],
    }
    # Written only when not the default, so files of BPE tokenizers keep their bytes and hash.
    if tokenizer.segmenter != "bpe":
        doc["segmenter"] = {"name": tokenizer.segmenter, "params": tokenizer.segmenter_params}
    if tokenizer.scaffold is not None:
        doc["scaffold"] = tokenizer.scaffold.to_dict()
    if tokenizer.scores is not None:
        doc["scores"] = tokenizer.scores
    return doc


def tokenizer_from_dict(doc: dict, make: Callable, source: str = TOKFX_JSON):
    """The tokenizer of a tokfx.json document, built by `make` (the Tokenizer constructor); any
    fault is one ValueError naming `source`."""
    try:
        _validator()(doc)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise ValueError(f"{source}: not a valid tokfx.json: {exc.message}") from None
    special = {s["content"]: s["id"] for s in doc["special_tokens"]}
    nulls = {i for i, t in enumerate(doc["tokens"]) if t is None}
    if nulls != set(special.values()):
        raise ValueError(f"{source}: not a valid tokfx.json: null tokens {sorted(nulls)[:5]} do not"
                         f" match the special-token ids {sorted(special.values())[:5]}")
    names = {i: name for name, i in special.items()}
    pattern = doc["pattern"]["name"] or doc["pattern"]["regex"]
    try:
        alphabet = Alphabet.from_dict(doc["alphabet"])
        tokens = [alphabet.token_of_text(names[i]) if t is None else t for i, t in enumerate(doc["tokens"])]
        segmenter = doc.get("segmenter", {"name": "bpe", "params": {}})
        scaffold = ScaffoldVocab.from_dict(doc["scaffold"], alphabet) if "scaffold" in doc else None
        return make(tokens, [tuple(m) for m in doc["merges"]], special, pattern,
                    doc["algorithm"], doc["params"], alphabet, segmenter["name"],
                    segmenter["params"], scaffold, doc.get("scores"))
    except ValueError as exc:
        raise ValueError(f"{source}: not a valid tokfx.json: {exc}") from None


def tokenizer_json_bytes(tokenizer) -> bytes:
    """The canonical tokfx.json content: same tokenizer, same bytes."""
    return (json.dumps(tokenizer_to_dict(tokenizer), ensure_ascii=False, separators=(",", ":"))
            + "\n").encode("utf-8")


def tokenizer_hash(tokenizer) -> str:
    """sha256 of the canonical tokfx.json: names a tokenizer in shards and manifests."""
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
    (directory / TOKFX_JSON).write_bytes(tokenizer_json_bytes(tokenizer))
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


def read_tokfx_json(path: str | os.PathLike) -> tuple[dict, str]:
    """The JSON document of a tokenizer directory (or its tokfx.json), and the file's name."""
    path = Path(path)
    if path.is_dir():
        path = path / TOKFX_JSON
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such tokenizer file")
    try:
        doc = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a tokfx.json (not JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != "tokfx":
        raise ValueError(f"{path}: not a tokfx.json (no \"format\": \"tokfx\"; a Hugging Face"
                         " tokenizer.json or GPT-2 vocab.json is not a tokfx file)")
    return doc, str(path)
