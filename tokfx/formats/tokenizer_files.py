"""Which tokenizer file a path holds, told from its content (a name can lie: Llama 3's original
`tokenizer.model` is a tiktoken rank file, not sentencepiece's), for `Tokenizer.load`. A
tiktoken rank file is known by its sha256 when it is one of tiktoken's own encodings (their
pattern and special tokens are then known too); any other names no pattern.

A directory is looked into for, in this order: tokfx.json (tokfx's own, which also writes a
tokenizer.json and tokenizer.model beside it), tokenizer.json (Hugging Face), tekken.json
(Mistral), tokenizer.model (sentencepiece).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tokfx.formats.huggingface import is_huggingface
from tokfx.formats.sentencepiece_model import parse_sentencepiece_model
from tokfx.formats.tiktoken_ranks import KNOWN_RANK_FILES
from tokfx.formats.untrusted import TokenizerFileError, parse_json, read_file_bytes

DIRECTORY_FILES = ("tokfx.json", "tokenizer.json", "tekken.json", "tokenizer.model")
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+\r?\n")


@dataclass(frozen=True)
class TokenizerFile:
    path: Path
    kind: str  # tokfx, huggingface, tekken, sentencepiece, tiktoken
    sha256: str
    # What was parsed of it: the JSON, the sentencepiece model, or a known rank file's
    # (encoding, pattern, special tokens).
    doc: object = None

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
    import hashlib  # here, not with the module: it loads OpenSSL (3.5 MB), which training never needs

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
        if digest in KNOWN_RANK_FILES:
            return TokenizerFile(path, "tiktoken", digest, KNOWN_RANK_FILES[digest])
        raise TokenizerFileError(str(path), None, "a tiktoken rank file that is none of tiktoken's own"
                                 f" ({', '.join(e for e, _, _ in KNOWN_RANK_FILES.values())}), so it names no"
                                 " pre-tokenization pattern: load it with Tokenizer.from_tiktoken(path,"
                                 " pattern=...), then save it to a directory that every tokfx command takes")
    if data[:1] == b"\x0a":  # protobuf field 1 (pieces), length-delimited: a sentencepiece model
        return TokenizerFile(path, "sentencepiece", digest, parse_sentencepiece_model(data, str(path)))
    raise TokenizerFileError(str(path), None, "not a tokenizer file tokfx reads (tokfx.json, Hugging Face"
                             " tokenizer.json, sentencepiece .model, tekken.json, or a tiktoken rank file"
                             " through Tokenizer.from_tiktoken)")
