"""Reading Parquet in the pipeline: a file planned into many row-group parts and read through
Beam's FileSystems gives pyarrow's rows, and a bad row in a later part is one rejected row."""
import json

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_jobs.plan import plan_reads
from beam_jobs.read import ReadTasks
from pipeline_corpus import read_shards
from tokfx.cli.main import main
from tokfx.formats.readers import ReadOptions
from tokfx.formats.readers.policy import FAIL


def _fineweb_file(path, texts, row_group_size):
    pq.write_table(pa.table({"text": texts, "id": [f"<urn:uuid:{i:08d}>" for i in range(len(texts))],
                             "url": [f"https://example.com/{i}" for i in range(len(texts))]}),
                   path, row_group_size=row_group_size)


def test_parquet_in_many_parts_gives_pyarrows_rows(tmp_path):
    path = tmp_path / "fineweb.parquet"
    texts = [f"paragraph {i}: " + "Call me Ishmael. Some years ago, never mind how long. " * (i % 7)
             for i in range(400)]
    _fineweb_file(path, texts, row_group_size=20)
    expected = [(row["id"], row["text"]) for row in pq.read_table(path).to_pylist()]
    options = ReadOptions(id_field="id")
    plan = plan_reads([str(path)], options, 4000, FAIL)
    assert len(plan.tasks) > 5
    with test_pipeline.TestPipeline() as p:
        read = p | beam.Create(plan.tasks) | ReadTasks(options)
        assert_that(read["documents"] | beam.Map(lambda d: (d.id, d.text)), equal_to(expected))


def test_a_null_text_in_a_later_part_is_one_rejected_row(tmp_path):
    texts = [f"document {i} with some words in it" for i in range(200)]
    texts[150] = None
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "docs.parquet"
    _fineweb_file(path, texts, row_group_size=10)
    out = tmp_path / "out"
    assert main(["run", "--input", str(path), "--task-bytes", "1000", "--vocab-size", "270",
                 "--output", str(out), "--on-error=skip", "-q"]) == 0
    [rejected] = [json.loads(x) for x in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert rejected == {"file": str(path), "line": 151, "reason": "'text' is null"}
    assert sorted(r["id"] for r in read_shards(out)) == sorted(f"{path}:{i + 1}" for i in range(200) if i != 150)
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    assert (totals["documents_read"], totals["documents_written"]) == (200, 199)
    assert (totals["documents_rejected"], totals["files_rejected"]) == (1, 0)
