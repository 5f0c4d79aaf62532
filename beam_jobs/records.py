"""The tokenizer as it passes between the pipeline's transforms. (The other records: the read
plan's ReadTask, beam_jobs.plan; the receipts, beam_jobs.receipts; the library's Document and
Rejection, tokfx.formats.documents.)"""
from __future__ import annotations

import json
from typing import NamedTuple

from tokfx.formats.tokfx_json import tokenizer_hash, tokenizer_json_bytes
from tokfx.tokenizer import Tokenizer


class TokenizerFile(NamedTuple):
    """A tokenizer as it travels in the graph (TrainVocab's output; a side input of encoding,
    writing and evaluating): its bytes, not a local path the workers may not see."""
    hash: str
    tokfx_json: bytes

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> TokenizerFile:
        return cls(tokenizer_hash(tokenizer), tokenizer_json_bytes(tokenizer))

    def load(self) -> Tokenizer:
        return Tokenizer.from_dict(json.loads(self.tokfx_json))

    def alphabet(self) -> dict:
        """The alphabet as tokfx.json records it (the shards' ids are over it)."""
        return json.loads(self.tokfx_json)["alphabet"]
