"""TokenizeDocs on the DirectRunner, against Tokenizer.encode and the shard placement."""
import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

import tokfx
from beam_jobs.encode import TokenizeDocs
from beam_jobs.records import EncodedDocCoder, TokenizerFile
from pipeline_corpus import EOT, SOURCES, paragraphs
from tokfx.formats.documents import Document
from tokfx.formats.shards.placement import shard_index

SHARDS = 4


@pytest.fixture(scope="module")
def docs():
    texts = [p for source in SOURCES for p in paragraphs(source, 4_000)] + [""]
    return [Document(f"doc-{i}", text, f"corpus.jsonl:{i + 1}") for i, text in enumerate(texts)]


@pytest.fixture(scope="module")
def tokenizer(docs):
    return tokfx.train([d.text for d in docs], vocab_size=300, special_tokens=[EOT])


def _as_lists(keyed):
    """(shard, EncodedDoc) -> (shard, id, [token ids], source, text bytes), to compare."""
    index, doc = keyed
    return index, doc.id, list(memoryview(doc.token_ids).cast("i")), doc.source, doc.text_size


def _run(docs, tokenizer, expected, **eos):
    with test_pipeline.TestPipeline() as p:
        tokenizer_file = p | "Tokenizer" >> beam.Create([TokenizerFile.of(tokenizer)])
        keyed = p | "Docs" >> beam.Create(docs) | TokenizeDocs(tokenizer_file, SHARDS, **eos)
        assert_that(keyed | beam.Map(_as_lists), equal_to(expected))


def test_each_document_is_encoded_and_placed_in_its_shard(docs, tokenizer):
    expected = [(shard_index(d.id, SHARDS), d.id, tokenizer.encode(d.text), d.source,
                 len(d.text.encode("utf-8"))) for d in docs]
    assert len({e[0] for e in expected}) == SHARDS  # every shard gets documents
    assert any(e[4] > len(docs[i].text) for i, e in enumerate(expected))  # non-ASCII text
    _run(docs, tokenizer, expected)


def test_eos_token_ends_each_document(docs, tokenizer):
    eot = tokenizer.token_to_id(EOT)
    expected = [(shard_index(d.id, SHARDS), d.id, tokenizer.encode(d.text) + [eot], d.source,
                 len(d.text.encode("utf-8"))) for d in docs]
    _run(docs, tokenizer, expected, eos_token=EOT)


def test_the_encoded_docs_are_shuffled_with_their_coder(docs, tokenizer):
    # TokenizeDocs declares its output type: Beam then encodes the docs as tuples of their
    # fields (EncodedDocCoder), not pickled one by one.
    with test_pipeline.TestPipeline() as p:
        tokenizer_file = p | "Tokenizer" >> beam.Create([TokenizerFile.of(tokenizer)])
        keyed = p | "Docs" >> beam.Create(docs) | TokenizeDocs(tokenizer_file, SHARDS)
        assert beam.coders.registry.get_coder(keyed.element_type) == beam.coders.TupleCoder(
            [beam.coders.VarIntCoder(), EncodedDocCoder()])
        # Through a shuffle and back, they are EncodedDocs again.
        shards = (keyed | beam.GroupByKey()
                  | beam.MapTuple(lambda i, group: (i, sorted((d.id, d.ids().tolist()) for d in group))))
        assert_that(shards, equal_to([
            (i, sorted((d.id, tokenizer.encode(d.text)) for d in docs if shard_index(d.id, SHARDS) == i))
            for i in range(SHARDS)]))
