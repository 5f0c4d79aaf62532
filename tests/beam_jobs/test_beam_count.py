"""CountTasks on the DirectRunner, against the library's counting of the same texts."""
import json
from collections import Counter

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

import beam_jobs.count
import tokfx.counting.pretoken_counter
import tokfx
from beam_jobs.count import LINE, PRETOKEN, Counted, CountSettings, CountTasks
from beam_jobs.count_files import read_packed_part, sum_count_parts, write_count_file
from beam_jobs.plan import plan_reads
from pipeline_corpus import EOT, SOURCES, paragraphs, write_zst_shards
from tokfx._count_table import CountTable
from tokfx.counting import count_lines
from tokfx.formats.readers import ReadOptions, compression
from tokfx.formats.readers.policy import FAIL


@pytest.fixture(scope="module")
def texts():
    # English, Chinese and Korean paragraphs, and a special token inside a document.
    texts = [p for source in SOURCES for p in paragraphs(source, 6_000)]
    return texts + [f"before{EOT} after\nbefore"]


def _pipeline():
    """Two worker threads: the tasks are counted in more than one bundle, whose count files
    are then summed."""
    return test_pipeline.TestPipeline(options=PipelineOptions(
        ["--direct_running_mode=multi_threading", "--direct_num_workers=2"]))


def _count(tmp_path, texts, files=4, pattern="gpt2", lines=False, min_count=1, max_pretokens=None):
    """The pipeline's counts of `texts` written into `files` .jsonl.zst files: {kind: table}."""
    (tmp_path / "in").mkdir(exist_ok=True)
    write_zst_shards(tmp_path / "in", texts, files)
    plan = plan_reads([str(tmp_path / "in" / "*")], ReadOptions(), 1 << 20, FAIL)
    settings = CountSettings(str(tmp_path / "work"), ReadOptions(), "fail", pattern, (EOT,), lines,
                             0.0, False, len(plan.tasks), False)
    kinds = (PRETOKEN, LINE) if lines else (PRETOKEN,)
    with _pipeline() as p:
        counted = p | beam.Create(plan.tasks) | CountTasks(settings, min_count, max_pretokens)
        for kind in kinds:
            # The reducer is handed one file per part: their sums.
            assert_that(counted[kind] | f"Files{kind}" >> beam.Map(lambda c: len(c.paths)),
                        equal_to([beam_jobs.count.PARTS]), label=f"Summed{kind}")
    limits = {PRETOKEN: max_pretokens, LINE: None}
    return {kind: Counted(tuple(map(str, (tmp_path / "work").glob(f"{kind}-sum-*"))), limits[kind]).load()
            for kind in kinds}


def _ranked(counts: dict) -> list:
    """(pretoken, count), most frequent first; ties by the smaller pre-token."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def test_counts_are_the_librarys_counts(texts, tmp_path):
    expected = tokfx.count_pretokens(texts, special_tokens=[EOT])
    assert len(expected) > 1000 and max(expected.values()) > 1
    assert _count(tmp_path, texts)[PRETOKEN] == expected


def test_json_lines_texts_are_counted_as_read_in_utf8(texts, tmp_path, monkeypatch):
    """The counting pass takes JSON-lines texts as their UTF-8, many at once (Reader.read_texts):
    a str is counted only of each file's first record (read the full way: it may be a whole
    JSON document), and the counts are the library's."""
    expected = tokfx.count_pretokens(texts, special_tokens=[EOT])
    add, added = tokfx.counting.pretoken_counter.PretokenCounter.add, []
    monkeypatch.setattr(tokfx.counting.pretoken_counter.PretokenCounter, "add",
                        lambda self, text: added.append(text) or add(self, text))
    assert _count(tmp_path, texts, files=4)[PRETOKEN] == expected
    assert sorted(added) == sorted(texts[:4])  # write_zst_shards: file i's first record is texts[i]


def test_a_bundle_that_outgrows_its_table_writes_it_and_counts_on(texts, tmp_path, monkeypatch):
    # A flush every 100 distinct pre-tokens, counted by batches of 50 bytes, the file read in
    # blocks of a few lines: many count files, the same sum.
    monkeypatch.setattr(beam_jobs.count, "FLUSH_ENTRIES", 100)
    monkeypatch.setattr(tokfx.counting.pretoken_counter, "BATCH_BYTES", 50)
    chunks = compression._zstd_chunks
    monkeypatch.setattr(compression, "_zstd_chunks",
                        lambda raw: (c[i:i + 256] for c in chunks(raw) for i in range(0, len(c), 256)))
    written = []
    write = beam_jobs.count.write_count_file
    monkeypatch.setattr(beam_jobs.count, "write_count_file",
                        lambda path, parts: written.append(sum(map(len, parts))) or write(path, parts))
    expected = tokfx.count_pretokens(texts, special_tokens=[EOT])
    assert len(expected) > 10 * 100
    assert _count(tmp_path, texts, files=1)[PRETOKEN] == expected
    flushed = written[:-beam_jobs.count.PARTS]  # the sums of the parts come last
    # Flushed as it went: past 100 by at most one batch (under 50 bytes, then one block of the
    # file's texts read at once).
    (path,) = (tmp_path / "in").iterdir()
    with open(path, "rb") as raw:
        blocks = list(compression.iter_blocks(raw, path.name))
    largest_block = max(len(tokfx.count_pretokens([json.loads(line)["text"] for line in block.splitlines()],
                                                  special_tokens=[EOT])) for block in blocks)
    assert len(blocks) > 10 and len(flushed) > 10 and max(flushed) < 100 + 50 + largest_block


def test_another_pattern(texts, tmp_path):
    expected = tokfx.count_pretokens(texts, pattern="firstspace", special_tokens=[EOT])
    assert expected != tokfx.count_pretokens(texts, special_tokens=[EOT])  # it matters
    assert _count(tmp_path, texts, pattern="firstspace")[PRETOKEN] == expected


def test_lines_are_the_librarys_line_counts(texts, tmp_path):
    expected = count_lines(texts, [EOT])
    assert b"before" in expected and expected != tokfx.count_pretokens(texts, special_tokens=[EOT])
    counted = _count(tmp_path, texts, lines=True, min_count=3, max_pretokens=10)
    assert counted[LINE] == expected  # not pruned
    assert len(counted[PRETOKEN]) == 10


def test_min_count_drops_the_rare_pretokens(texts, tmp_path):
    full = tokfx.count_pretokens(texts, special_tokens=[EOT])
    expected = {k: v for k, v in full.items() if v >= 3}
    assert 0 < len(expected) < len(full)
    assert _count(tmp_path, texts, min_count=3)[PRETOKEN] == expected


def test_max_pretokens_keeps_the_most_frequent(texts, tmp_path):
    full = tokfx.count_pretokens(texts, special_tokens=[EOT])
    expected = dict(_ranked(full)[:100])
    # The cut falls among pre-tokens of equal count: the tie-break decides which stay.
    assert _ranked(full)[99][1] == _ranked(full)[100][1]
    assert _count(tmp_path, texts, max_pretokens=100)[PRETOKEN] == expected


def test_min_count_and_max_pretokens_together(texts, tmp_path):
    full = tokfx.count_pretokens(texts, special_tokens=[EOT])
    expected = dict(_ranked({k: v for k, v in full.items() if v >= 2})[:50])
    assert _count(tmp_path, texts, min_count=2, max_pretokens=50)[PRETOKEN] == expected


def test_no_tasks_give_empty_counts(tmp_path):
    settings = CountSettings(str(tmp_path / "work"), ReadOptions(), "fail", "gpt2", (), True,
                             0.0, False, 0, False)
    with _pipeline() as p:
        counted = p | beam.Create([]) | CountTasks(settings)
        for kind in (PRETOKEN, LINE):
            assert_that(counted[kind] | f"Load{kind}" >> beam.Map(lambda c: len(c.load())), equal_to([0]),
                        label=f"Empty{kind}")
    assert not list((tmp_path / "work").glob("*-sum-*"))  # no count file, so no part to sum


def test_a_count_file_round_trips_each_part(tmp_path):
    table = CountTable({b"a": 1, b"bb": 2, b"ccc": 3, b"": 4})
    write_count_file(str(tmp_path / "c.counts"), table.split_packed(3))
    for k, part in enumerate(table.split_packed(3)):
        assert sum_count_parts([str(tmp_path / "c.counts")], k).items() == CountTable.from_packed(*part).items()


def test_the_parts_of_count_files_sum_to_the_counts_written(tmp_path):
    first = {b"a": 1, b"bb": 2, b"ccc": 3, b"long key of many bytes": 5}
    second = {b"bb": 7, b"d": 1, b"long key of many bytes": 1, b"": 4}
    paths = [str(tmp_path / f"{name}.counts") for name in ("first", "second")]
    for path, counts in zip(paths, (first, second)):
        write_count_file(path, CountTable(counts).split_packed(2))
    joined = Counter()
    for part in range(2):
        summed = sum_count_parts(paths, part).to_dict()
        assert not joined.keys() & summed.keys()  # a key is in one part only
        joined.update(summed)
    assert joined == Counter(first) + Counter(second)


def test_a_truncated_or_foreign_count_file_is_refused(tmp_path):
    table = CountTable({b"a": 1, b"bb": 2, b"ccc": 3, b"": 4})
    parts = table.split_packed(3)
    write_count_file(str(tmp_path / "c.counts"), parts)
    data = (tmp_path / "c.counts").read_bytes()
    (tmp_path / "cut.counts").write_bytes(data[:-1])
    last = max(k for k, (_, ends, _) in enumerate(parts) if ends)  # its counts end the file
    with pytest.raises(ValueError, match="cut.counts: truncated count file"):
        read_packed_part(str(tmp_path / "cut.counts"), last)
    (tmp_path / "other.counts").write_bytes(b"PAR1" + data[4:])
    with pytest.raises(ValueError, match="other.counts: not a tokfx count file"):
        read_packed_part(str(tmp_path / "other.counts"), 0)
