"""EvalHeldOut on the DirectRunner, against tokfx.eval's report on the same documents."""
import json
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

import tokfx
from beam_jobs.evaluate import EvalHeldOut
from beam_jobs.records import TokenizerFile
from pipeline_corpus import SOURCES, paragraphs
from tokfx.eval.report import evaluate
from tokfx.formats.documents import Document


@pytest.fixture(scope="module")
def docs():
    texts = [p for source in SOURCES for p in paragraphs(source, 3_000)]
    # Given in reverse id order.
    return [Document(f"doc-{len(texts) - i:03d}", t, f"held.jsonl:{i + 1}") for i, t in enumerate(texts)]


@pytest.fixture(scope="module")
def tokenizer(docs):
    return tokfx.train([d.text for d in docs], vocab_size=300)


def _run(docs, tokenizer, directory, check):
    with test_pipeline.TestPipeline() as p:
        written = (p | "Docs" >> beam.Create(docs)
                   | EvalHeldOut(p | "Tokenizer" >> beam.Create([TokenizerFile.of(tokenizer)]),
                                 str(directory), "tok"))
        assert_that(written, check)


def test_report_of_the_documents_in_id_order(docs, tokenizer, tmp_path):
    out = tmp_path / "eval"

    def every_file_written(outputs):
        [paths] = outputs
        assert sorted(paths) == sorted(str(p) for p in out.iterdir())
        assert {"metrics.json", "metrics.md", "index.html"} <= {Path(p).name for p in paths}

    _run(docs, tokenizer, out, every_file_written)
    expected = evaluate({"tok": tokenizer}, [d.text for d in sorted(docs, key=lambda d: d.id)])
    # The order matters (to the last bit of the sums): the report is over the documents in id
    # order, the same whatever order the workers deliver them in.
    assert expected != evaluate({"tok": tokenizer}, [d.text for d in docs])
    report = json.loads((out / "metrics.json").read_text())
    assert report == json.loads(json.dumps(expected))
    assert report["corpus"]["documents"] == len(docs)
    assert report["tokenizers"]["tok"]["metrics"]["ctc"] == sum(
        len(tokenizer.encode_ordinary(d.text)) for d in docs)


def test_no_held_out_document_writes_no_report(tokenizer, tmp_path):
    _run([], tokenizer, tmp_path / "eval", equal_to([[]]))
    assert not (tmp_path / "eval").exists()
