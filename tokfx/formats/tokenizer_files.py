"""Which tokenizer file a path holds, told from its content (a name can lie: Llama 3's original
`tokenizer.model` is a tiktoken rank file, not sentencepiece's), for `Tokenizer.load`.

A directory is looked into for, in this order: tokfx.json (tokfx's own, which also writes a
tokenizer.json and tokenizer.model beside it), tokenizer.json (Hugging Face), tekken.json
(Mistral), tokenizer.model (sentencepiece).
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokfx.formats.huggingface import is_huggingface
from tokfx.formats.sentencepiece_model import parse_sentencepiece_model
from tokfx.formats.untrusted import TokenizerFileError, parse_json, read_file_bytes

DIRECTORY_FILES = ("tokfx.json", "tokenizer.json", "tekken.json", "tokenizer.model")
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+\r?\n")


@dataclass(frozen=True)
class TokenizerFile:
    path: Path
    kind: str  # tokfx, huggingface, tekken, sentencepiece
    sha256: str
    doc: object = None  # what was parsed of it: the JSON, or the sentencepiece model

    def provenance(self) -> dict:
        """What a manifest records of where a tokenizer came from."""
        return {"file": str(self.path), "format": self.kind, "sha256": self.sha256}


def find_tokenizer_file(path: str | os.PathLike) -> TokenizerFile:
    """The tokenizer file at `path` (or in the directory), its kind and hash; FileNotFoundError
    when there is none, TokenizerFileError when the file is no tokenizer tokfx reads."""
    path = Path(path)
    if path.is_dir():
        found = next((path / name for name in DIRECTORY_FILES if (path / name).is_file()), None)
        if found is None:
            raise FileNotFoundError(f"{path}: no tokenizer file in this directory (looked for"
                                    f" {', '.join(DIRECTORY_FILES)})")
        path = found
    elif not path.exists():
        raise FileNotFoundError(f"{path}: no such tokenizer file or directory")
    data = read_file_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        doc = parse_json(data, str(path))
        if isinstance(doc, dict) and doc.get("format") == "tokfx":
            return TokenizerFile(path, "tokfx", digest, doc)
        if is_huggingface(doc):
            return TokenizerFile(path, "huggingface", digest, doc)
        if isinstance(doc, dict) and isinstance(doc.get("config"), dict) and "vocab" in doc:
            return TokenizerFile(path, "tekken", digest, doc)
        raise TokenizerFileError(str(path), None, "a JSON file that is neither a tokfx.json, a Hugging Face"
                                 " tokenizer.json nor a tekken.json (a GPT-2 vocab.json loads with"
                                 " Tokenizer.from_gpt2_files, with its merges.txt)")
    if _RANK_LINE.match(data):
        raise TokenizerFileError(str(path), None, "a tiktoken rank file, which names no pre-tokenization"
                                 " pattern: load it with Tokenizer.from_tiktoken(path, pattern=...)")
    if data[:1] == b"\x0a":  # protobuf field 1 (pieces), length-delimited: a sentencepiece model
        return TokenizerFile(path, "sentencepiece", digest, parse_sentencepiece_model(data, str(path)))
    raise TokenizerFileError(str(path), None, "not a tokenizer file tokfx reads (tokfx.json, Hugging Face"
                             " tokenizer.json, sentencepiece .model, tekken.json, or a tiktoken rank file"
                             " through Tokenizer.from_tiktoken)")
