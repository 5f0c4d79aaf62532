"""The tokenizer as it passes between the pipeline's transforms. (The other records: the read
plan's ReadTask, beam_jobs.plan; the receipts, beam_jobs.receipts; the library's Document and
Rejection, tokfx.formats.documents.)"""
from __future__ import annotations

import pickle
from typing import NamedTuple

import zstandard

from tokfx.formats.tokfx_json import tokenizer_hash
from tokfx.tokenizer import Tokenizer
from beam_jobs.files import open_raw, write_bytes


class TokenizerFile(NamedTuple):
    """A tokenizer as it passes between the steps (TrainVocab's output, or a given tokenizer read
    from the file the launcher wrote: beam_jobs.pipelines; a side input of encoding, writing and
    evaluating): its hash, its pickle (zstd-compressed) and its alphabet, not a local path the
    workers may not see. The workers build the tokenizer from its pickle (Tokenizer.__reduce__:
    trusted, unlike a file, so not checked again: GPT-2's vocabulary in 0.04 s of a worker's
    start-up instead of 0.22 s from the tokfx.json). Its tokfx.json does not travel: no step
    reads it, and for GPT-2 it was 0.67 MB of the 1.23 MB that every worker held as the side
    input (bench/README, "Per-worker cost")."""
    hash: str  # sha256 of the canonical tokfx.json (tokfx.formats.tokfx_json.tokenizer_hash)
    zstd_pickle: bytes
    # The alphabet as tokfx.json records it (the shards' ids are over it), apart: the manifest's
    # step reads it, and parsing a GPT-2-sized tokfx.json for it took 16 MB of that worker.
    alphabet: dict

    @classmethod
    def of(cls, tokenizer: Tokenizer, hash: str | None = None) -> TokenizerFile:
        """`hash`: the tokenizer's, where the caller has it (from the tokfx.json it wrote)."""
        return cls(hash or tokenizer_hash(tokenizer),
                   zstandard.ZstdCompressor().compress(pickle.dumps(tokenizer, pickle.HIGHEST_PROTOCOL)),
                   tokenizer.alphabet.to_dict())

    def load(self) -> Tokenizer:
        return pickle.loads(zstandard.ZstdDecompressor().decompress(self.zstd_pickle))

    def write(self, destination: str) -> None:
        """Into a file that `read` reads back (on any Beam filesystem)."""
        write_bytes(destination, pickle.dumps(self, pickle.HIGHEST_PROTOCOL))

    @classmethod
    def read(cls, path: str) -> TokenizerFile:
        """What `write` wrote there, in this run (a pickle: trusted, as the graph's are)."""
        with open_raw(path) as f:
            return pickle.loads(f.read())
