"""The records that pass between the pipeline's transforms (ReadCorpus's are the library's
Document and Rejection, tokfx.formats.documents).

Where Beam needs a (key, value) pair (GroupByKey, CombinePerKey), the record is the value.
"""
from __future__ import annotations

import json
from array import array
from typing import NamedTuple

import apache_beam as beam

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


class EncodedDoc(NamedTuple):
    """A document encoded for its shard (TokenizeDocs emits (shard index, EncodedDoc))."""
    id: str
    # The bytes of an array('i'): one copy through Beam's shuffle, not one encoding per id.
    token_ids: bytes
    source: str
    text_size: int  # the text's length in UTF-8 bytes (the manifest's "bytes")

    def ids(self) -> array:
        ids = array("i")
        ids.frombytes(self.token_ids)
        return ids


class EncodedDocCoder(beam.coders.Coder):
    """An EncodedDoc through the shuffle as the plain tuple of its fields. Beam's default coder
    pickles a NamedTuple element by element: about 6 us more per document than a tuple, 3 %
    more CPU time for all of `tokfx run` on en_10M; with this coder, about 1 us, no difference
    within noise. (Beam picks it where the element type is declared: TokenizeDocs's output.)"""

    _fields = beam.coders.FastPrimitivesCoder()

    def encode(self, doc: EncodedDoc) -> bytes:
        return self._fields.encode(tuple(doc))

    def decode(self, data: bytes) -> EncodedDoc:
        return EncodedDoc(*self._fields.decode(data))


beam.coders.registry.register_coder(EncodedDoc, EncodedDocCoder)


class WrittenShard(NamedTuple):
    """A shard once its files are published: its entry in manifest.json, field for field."""
    index: int
    files: dict[str, str]  # path relative to the output directory -> sha256
    documents: int
    empty_documents: int
    tokens: int
    bytes: int  # the documents' text, in UTF-8 bytes
