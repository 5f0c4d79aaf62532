"""TokenizeDocs: documents -> (shard index, (id, token ids, source, text bytes)).

The token ids travel as the bytes of an array('i') (one copy through Beam's shuffle, not one
encoding per id). The tokenizer arrives as a side input (tokenizer hash, tokfx.json bytes); it
is built once per worker process (`Shared`, keyed by the hash), not once per bundle.
"""
from __future__ import annotations

import json
import time
from array import array

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from tokfx.formats.documents import utf8_length
from tokfx.formats.shards.placement import shard_index
from tokfx.tokenizer import Tokenizer


def load_tokenizer_bytes(data: bytes) -> Tokenizer:
    return Tokenizer.from_dict(json.loads(data))


class _Encode(beam.DoFn):
    def __init__(self, shared: Shared, num_shards: int, eos_token: str | None):
        self.shared, self.num_shards, self.eos_token = shared, num_shards, eos_token
        self.tokens = Metrics.counter("tokfx", "tokens")
        self.usec = Metrics.counter("tokfx", "usec_encode")

    def process(self, doc, tokenizer_file):
        start = time.perf_counter()
        digest, data = tokenizer_file
        tokenizer = self.shared.acquire(lambda: load_tokenizer_bytes(data), tag=digest)
        ids = tokenizer.encode(doc.text)
        if self.eos_token is not None:
            ids.append(tokenizer.token_to_id(self.eos_token))
        self.tokens.inc(len(ids))
        self.usec.inc(int((time.perf_counter() - start) * 1e6))
        yield shard_index(doc.id, self.num_shards), (doc.id, array("i", ids).tobytes(),
                                                     doc.source, utf8_length(doc.text))


class TokenizeDocs(beam.PTransform):
    def __init__(self, tokenizer_file, num_shards: int, eos_token: str | None = None):
        super().__init__()
        self.tokenizer_file, self.num_shards, self.eos_token = tokenizer_file, num_shards, eos_token

    def expand(self, documents):
        return documents | "Encode" >> beam.ParDo(
            _Encode(Shared(), self.num_shards, self.eos_token),
            beam.pvalue.AsSingleton(self.tokenizer_file))
