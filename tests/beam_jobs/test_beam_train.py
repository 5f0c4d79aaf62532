"""TrainVocab on the DirectRunner, against tokfx.train on the same counts."""
import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

import tokfx
from beam_jobs.count import Counted
from beam_jobs.count_files import write_count_file
from beam_jobs.train import TrainVocab
from tokfx._count_table import CountTable
from pipeline_corpus import EOT, paragraphs
from tokfx.counting import count_lines
from tokfx.formats.tokfx_json import tokenizer_hash, tokenizer_json_bytes

SAGE = dict(algorithm="sage", vocab_size=300, special_tokens=[EOT], initial_size=400,
            schedule=[350, 300], embeddings_schedule=[400, 350])


@pytest.fixture(scope="module")
def texts():
    return paragraphs("english/pg2701_moby_dick.txt", 12_000)


def _counted(counts: dict, directory, name: str) -> Counted:
    """`counts` as the counting pass hands them on: its parts in count files (two here)."""
    paths = [str(directory / f"{name}-{k}.counts") for k in range(2)]
    for path, part in zip(paths, CountTable(counts).split_packed(2)):
        write_count_file(path, [part])
    return Counted(tuple(paths), None)


def _file_of(tokenizer) -> tuple[str, bytes]:
    return tokenizer_hash(tokenizer), tokenizer_json_bytes(tokenizer)


def _files(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.iterdir()}


def test_trains_what_tokfx_train_trains_on_the_counts(texts, tmp_path):
    counts = tokfx.count_pretokens(texts, special_tokens=[EOT])
    keywords = dict(algorithm="bpe", vocab_size=300, special_tokens=[EOT])
    expected = tokfx.train(counts, **keywords)
    with test_pipeline.TestPipeline() as p:
        # The workers may deliver the counts in any order: the trainer sees the same input.
        trained = (p | beam.Create([_counted(dict(reversed(counts.items())), tmp_path, "c")])
                   | TrainVocab(str(tmp_path / "tok"), keywords))
        assert_that(trained | beam.Map(lambda file: (file.hash, tokenizer_json_bytes(file.load()))),
                    equal_to([_file_of(expected)]))
    expected.save(tmp_path / "expected")
    assert _files(tmp_path / "tok") == _files(tmp_path / "expected")
    assert {"tokfx.json", "vocab.json", "merges.txt", "tokenizer.json"} <= _files(tmp_path / "tok").keys()


def test_sage_trains_on_the_counts_and_the_lines(texts, tmp_path):
    counts = tokfx.count_pretokens(texts, special_tokens=[EOT])
    lines = count_lines(texts, [EOT])
    expected = tokfx.train(counts, **SAGE, context="line", lines=lines)
    # The lines matter: without them (context="pretoken") SaGe chooses other tokens.
    assert expected.tokens != tokfx.train(counts, **SAGE, context="pretoken").tokens
    with test_pipeline.TestPipeline() as p:
        trained = (p | "Counts" >> beam.Create([_counted(counts, tmp_path, "c")])
                   | TrainVocab(str(tmp_path / "tok"), {**SAGE, "context": "line"},
                                lines=p | "Lines" >> beam.Create([_counted(lines, tmp_path, "l")])))
        assert_that(trained | beam.Map(lambda file: (file.hash, tokenizer_json_bytes(file.load()))),
                    equal_to([_file_of(expected)]))
    assert (tmp_path / "tok" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
