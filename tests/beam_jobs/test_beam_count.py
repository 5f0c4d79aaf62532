"""CountPretokens on the DirectRunner, against the library's counting of the same texts."""
import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

import beam_jobs.count
import tokfx
from beam_jobs.count import CountPretokens
from pipeline_corpus import EOT, SOURCES, paragraphs
from tokfx.counting import count_lines
from tokfx.formats.documents import Document


@pytest.fixture(scope="module")
def texts():
    # English, Chinese and Korean paragraphs, and a special token inside a document.
    texts = [p for source in SOURCES for p in paragraphs(source, 6_000)]
    return texts + [f"before{EOT} after\nbefore"]


def _pipeline():
    """Two worker threads: the documents are counted in more than one bundle, whose counts
    are then summed."""
    return test_pipeline.TestPipeline(options=PipelineOptions(
        ["--direct_running_mode=multi_threading", "--direct_num_workers=2"]))


def _documents(p, texts):
    return p | beam.Create([Document(f"doc-{i}", t, f"doc-{i}") for i, t in enumerate(texts)])


def _ranked(counts: dict) -> list:
    """(pretoken, count), most frequent first; ties by the smaller pre-token."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def test_counts_are_the_librarys_counts(texts):
    expected = tokfx.count_pretokens(texts, special_tokens=[EOT])
    assert len(expected) > 1000 and max(expected.values()) > 1
    with _pipeline() as p:
        counts = _documents(p, texts) | CountPretokens(special_tokens=[EOT])
        assert_that(counts, equal_to([expected]))


def test_a_bundle_that_outgrows_its_table_emits_it_and_counts_on(texts, monkeypatch):
    # A flush every 100 distinct pre-tokens: many partial tables, the same sum.
    monkeypatch.setattr(beam_jobs.count, "FLUSH_ENTRIES", 100)
    emitted = []
    emit = beam_jobs.count._CountInBundle._emit

    def recorded_emit(self):
        emitted.append(len(self.counts))
        yield from emit(self)

    monkeypatch.setattr(beam_jobs.count._CountInBundle, "_emit", recorded_emit)
    expected = tokfx.count_pretokens(texts, special_tokens=[EOT])
    assert len(expected) > 10 * 100
    with _pipeline() as p:
        counts = _documents(p, texts) | CountPretokens(special_tokens=[EOT])
        assert_that(counts, equal_to([expected]))
    assert len(emitted) > 10 and max(emitted) < 100 + 200  # flushed as it went (+ one document's)


def test_another_pattern(texts):
    expected = tokfx.count_pretokens(texts, pattern="firstspace", special_tokens=[EOT])
    assert expected != tokfx.count_pretokens(texts, special_tokens=[EOT])  # it matters
    with _pipeline() as p:
        counts = _documents(p, texts) | CountPretokens("firstspace", [EOT])
        assert_that(counts, equal_to([expected]))


def test_lines_are_the_librarys_line_counts(texts):
    expected = count_lines(texts, [EOT])
    assert b"before" in expected and expected != tokfx.count_pretokens(texts, special_tokens=[EOT])
    with _pipeline() as p:
        lines = _documents(p, texts) | CountPretokens(special_tokens=[EOT], lines=True)
        assert_that(lines, equal_to([expected]))


def test_min_count_drops_the_rare_pretokens(texts):
    full = tokfx.count_pretokens(texts, special_tokens=[EOT])
    expected = {k: v for k, v in full.items() if v >= 3}
    assert 0 < len(expected) < len(full)
    with _pipeline() as p:
        counts = _documents(p, texts) | CountPretokens(special_tokens=[EOT], min_count=3)
        assert_that(counts, equal_to([expected]))


def test_max_pretokens_keeps_the_most_frequent(texts):
    full = tokfx.count_pretokens(texts, special_tokens=[EOT])
    expected = dict(_ranked(full)[:100])
    # The cut falls among pre-tokens of equal count: the tie-break decides which stay.
    assert _ranked(full)[99][1] == _ranked(full)[100][1]
    with _pipeline() as p:
        counts = _documents(p, texts) | CountPretokens(special_tokens=[EOT], max_pretokens=100)
        assert_that(counts, equal_to([expected]))


def test_min_count_and_max_pretokens_together(texts):
    full = tokfx.count_pretokens(texts, special_tokens=[EOT])
    expected = dict(_ranked({k: v for k, v in full.items() if v >= 2})[:50])
    with _pipeline() as p:
        counts = _documents(p, texts) | CountPretokens(special_tokens=[EOT], min_count=2,
                                                       max_pretokens=50)
        assert_that(counts, equal_to([expected]))


@pytest.mark.parametrize("lines", [False, True])
def test_no_documents_give_one_empty_dict(lines):
    with _pipeline() as p:
        counts = p | beam.Create([]) | CountPretokens(lines=lines)
        assert_that(counts, equal_to([{}]))


def test_lines_are_not_pruned():
    with pytest.raises(ValueError, match="without pruning"):
        CountPretokens(lines=True, min_count=2)
    with pytest.raises(ValueError, match="without pruning"):
        CountPretokens(lines=True, max_pretokens=10)
