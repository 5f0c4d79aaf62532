"""The tokenizer as it passes between the pipeline's transforms. (The other records: the read
plan's ReadTask, beam_jobs.plan; the receipts, beam_jobs.receipts; the library's Document and
Rejection, tokfx.formats.documents.)"""
from __future__ import annotations

import pickle
from typing import NamedTuple

import zstandard

from tokfx.formats.tokfx_json import json_bytes_hash, tokenizer_json_bytes
from tokfx.tokenizer import Tokenizer


class TokenizerFile(NamedTuple):
    """A tokenizer as it travels in the graph (TrainVocab's output; a side input of encoding,
    writing and evaluating): its bytes, not a local path the workers may not see. Compressed:
    Beam bz2-compresses what it pickles into the graph, at a few MB/s (a GPT-2-sized tokfx.json
    took 0.9 s of every `tokfx encode`). The workers build the tokenizer from its pickle
    (Tokenizer.__reduce__: trusted, unlike a file, so not checked again: GPT-2's vocabulary in
    0.04 s of a worker's start-up instead of 0.22 s from the tokfx.json)."""
    hash: str  # sha256 of the canonical tokfx.json (tokfx.formats.tokfx_json.tokenizer_hash)
    zstd_tokfx_json: bytes
    zstd_pickle: bytes
    # The alphabet as tokfx.json records it (the shards' ids are over it), apart: the manifest's
    # step reads it, and parsing a GPT-2-sized tokfx.json for it took 16 MB of that worker.
    alphabet: dict

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> TokenizerFile:
        data, compress = tokenizer_json_bytes(tokenizer), zstandard.ZstdCompressor().compress
        return cls(json_bytes_hash(data), compress(data), compress(pickle.dumps(tokenizer, pickle.HIGHEST_PROTOCOL)),
                   tokenizer.alphabet.to_dict())

    def json_bytes(self) -> bytes:
        """The canonical tokfx.json."""
        return zstandard.ZstdDecompressor().decompress(self.zstd_tokfx_json)

    def load(self) -> Tokenizer:
        return pickle.loads(zstandard.ZstdDecompressor().decompress(self.zstd_pickle))
