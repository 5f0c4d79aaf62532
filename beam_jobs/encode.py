"""TokenizeDocs: documents -> (shard index, EncodedDoc).

The tokenizer arrives as a side input (a TokenizerFile); it is built once per worker process
(`Shared`, keyed by its hash), not once per bundle.
"""
from __future__ import annotations

import time
from array import array

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from tokfx.formats.documents import utf8_length
from tokfx.formats.shards.placement import shard_index
from beam_jobs.records import EncodedDoc  # and its coder, registered with Beam


class _Encode(beam.DoFn):
    def __init__(self, shared: Shared, num_shards: int, eos_token: str | None):
        self.shared, self.num_shards, self.eos_token = shared, num_shards, eos_token
        self.tokens = Metrics.counter("tokfx", "tokens")
        self.usec = Metrics.counter("tokfx", "usec_encode")

    def process(self, doc, tokenizer_file):
        start = time.perf_counter()
        tokenizer = self.shared.acquire(tokenizer_file.load, tag=tokenizer_file.hash)
        ids = tokenizer.encode(doc.text)
        if self.eos_token is not None:
            ids.append(tokenizer.token_to_id(self.eos_token))
        self.tokens.inc(len(ids))
        self.usec.inc(int((time.perf_counter() - start) * 1e6))
        yield shard_index(doc.id, self.num_shards), EncodedDoc(
            doc.id, array("i", ids).tobytes(), doc.source, utf8_length(doc.text))


class TokenizeDocs(beam.PTransform):
    def __init__(self, tokenizer_file, num_shards: int, eos_token: str | None = None):
        """tokenizer_file: the PCollection of the one TokenizerFile."""
        super().__init__()
        self.tokenizer_file, self.num_shards, self.eos_token = tokenizer_file, num_shards, eos_token

    def expand(self, documents):
        # The declared type makes Beam shuffle the docs with EncodedDocCoder.
        return documents | "Encode" >> beam.ParDo(
            _Encode(Shared(), self.num_shards, self.eos_token),
            beam.pvalue.AsSingleton(self.tokenizer_file)).with_output_types(tuple[int, EncodedDoc])
