"""ReadCorpus and bad input: .txt split into ranges, each bad input under fail and skip."""
import gzip
import json

import apache_beam as beam
import pytest
import zstandard
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from beam_jobs.plan import plan_reads
from beam_jobs.read import ReadTasks
from pipeline_corpus import EOT, paragraphs, read_shards
from tokfx.cli.main import main
from tokfx.formats.counts import read_counts
from tokfx.formats.readers import ReadOptions
from tokfx.formats.readers.policy import FAIL

GOOD = [{"text": "a good document"}, {"text": "another one"}]


def _jsonl(records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_txt_in_many_ranges_gives_the_documents_of_a_sequential_read(tmp_path):
    docs = paragraphs("english/pg2701_moby_dick.txt", 60_000)
    data = (EOT + "\n").join(docs).encode("utf-8")
    path = tmp_path / "stories.txt"
    path.write_bytes(data)
    # Sequential reference: split the whole file at the separator, ids are byte offsets.
    expected, offset = [], 0
    for piece in data.split(EOT.encode()):
        if piece:
            expected.append((f"{path}@{offset}", piece.decode("utf-8")))
        offset += len(piece) + len(EOT.encode())
    options = ReadOptions(separators=(EOT,))
    plan = plan_reads([str(path)], options, 2000, FAIL)
    assert len(plan.tasks) > 20 and [t.index for t in plan.tasks] == list(range(len(plan.tasks)))
    with test_pipeline.TestPipeline() as p:
        read = p | beam.Create(plan.tasks) | ReadTasks(options)
        assert_that(read["documents"] | beam.Map(lambda d: (d.id, d.text)), equal_to(expected))


def _zst_cut(records):
    data = zstandard.ZstdCompressor().compress(_jsonl(records * 300))
    return data[: len(data) // 2]


def _gz_cut(records):
    data = gzip.compress(_jsonl(records * 300))
    return data[: len(data) // 2]


# name, file content, line of the rejection (None: the whole file), reason.
BAD_INPUTS = [
    ("bad.jsonl", _jsonl(GOOD[:1]) + b"{not json\n", 2, "not JSON"),
    ("bad.jsonl", _jsonl(GOOD[:1]) + b'{"other": 1}\n', 2, "no 'text' field"),
    ("bad.jsonl", _jsonl(GOOD[:1]) + b'{"text": 5}\n', 2, "field 'text' is int, not a string"),
    ("bad.jsonl", _jsonl(GOOD[:1]) + b'{"text": "caf\xe9"}\n', 2, "not valid UTF-8"),
    ("bad.jsonl", _jsonl(GOOD[:1]) + b'{"text": "\\ud800"}\n', 2, "not valid UTF-8"),
    # The bad byte: 5 + 13 + 4 = 22, on line 1; the document, not the file, is rejected.
    ("bad.txt", b"fine " + EOT.encode() + b"bad \xc3\x28", 1, "not valid UTF-8 at byte 22"),
    ("cut.jsonl.zst", _zst_cut(GOOD), None, "truncated or corrupt"),
    ("cut.jsonl.gz", _gz_cut(GOOD), None, "truncated or corrupt"),
    ("empty.jsonl", b"", None, "empty file"),
    ("empty.txt", b"", None, "empty file"),
    ("notes.md", b"plain text of another name", None,
     "not a corpus file (.md): tokfx reads .jsonl, .jsonl.gz, .jsonl.zst, .json, .json.gz,"
     " .json.zst, .ndjson, .ndjson.gz, .ndjson.zst, .txt, .parquet"),
]
IDS = ["not-json", "no-field", "not-string", "bad-utf8", "lone-surrogate", "bad-utf8-txt",
       "truncated-zst", "truncated-gz", "empty-jsonl", "empty-txt", "unknown-suffix"]


def _corpus(tmp_path, name, content):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "good.jsonl").write_bytes(_jsonl(GOOD))
    (tmp_path / "in" / name).write_bytes(content)
    return ["--input", str(tmp_path / "in" / "good.jsonl"), "--input", str(tmp_path / "in" / name),
            "--vocab-size", "270", "-q"]


@pytest.mark.parametrize("name, content, line, reason", BAD_INPUTS, ids=IDS)
def test_fail_stops_with_one_message_naming_file_and_line(tmp_path, capsys, name, content,
                                                          line, reason):
    out = tmp_path / "out"
    assert main(["run", *_corpus(tmp_path, name, content), "--output", str(out)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    where = f"{tmp_path / 'in' / name}" + (f":{line}" if line is not None else "")
    assert last.startswith(f"tokfx: error: {where}: ") and reason in last
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("name, content, line, reason", BAD_INPUTS, ids=IDS)
def test_skip_records_the_rejection_and_the_counts_add_up(tmp_path, name, content, line, reason):
    out = tmp_path / "out"
    # One rejection of three: allowed by a count (the default, 10 %, would refuse it).
    assert main(["run", *_corpus(tmp_path, name, content), "--output", str(out),
                 "--on-error=skip", "--max-rejected", "1"]) == 0
    rejected = [json.loads(x) for x in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert len(rejected) == 1
    assert rejected[0]["file"] == str(tmp_path / "in" / name) and rejected[0]["line"] == line
    assert reason in rejected[0]["reason"]
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    rows = read_shards(out)
    assert totals["documents_written"] == len(rows) >= len(GOOD)
    assert totals["documents_read"] == totals["documents_written"] + totals["documents_rejected"]
    assert (totals["documents_rejected"], totals["files_rejected"]) == ((1, 0) if line else (0, 1))


@pytest.mark.parametrize("name, content, line, reason", BAD_INPUTS, ids=IDS)
def test_count_skip_writes_the_rejection_beside_the_counts(tmp_path, name, content, line, reason):
    counts_file = tmp_path / "counts.parquet"
    args = _corpus(tmp_path, name, content)[:4] + ["-q"]
    assert main(["count", *args, "--output", str(counts_file), "--on-error=skip", "--max-rejected", "1"]) == 0
    rejected = [json.loads(x) for x in
                (tmp_path / "counts.parquet.rejected.jsonl").read_text().splitlines()]
    assert len(rejected) == 1
    assert rejected[0]["file"] == str(tmp_path / "in" / name) and rejected[0]["line"] == line
    assert reason in rejected[0]["reason"]
    assert read_counts(counts_file)  # the good file's pre-tokens are counted


def test_a_bad_txt_document_in_a_later_range_is_one_rejected_document(tmp_path):
    docs = [f"document {i} with some words in it".encode() for i in range(200)]
    docs[150] = b"document 150 \xff"
    data = EOT.encode().join(docs)
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "docs.txt"
    path.write_bytes(data)
    out = tmp_path / "out"
    assert main(["run", "--input", str(path), "--task-bytes", "1000", "--vocab-size", "270",
                 "--output", str(out), "--on-error=skip", "-q"]) == 0
    # A range that does not start the file does not know its line: the byte offset says where.
    bad = data.index(b"\xff")
    assert bad > 1000
    [rejected] = [json.loads(x) for x in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert rejected == {"file": str(path), "line": None, "reason": f"not valid UTF-8 at byte {bad}"}
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    assert (totals["documents_read"], totals["documents_written"]) == (200, 199)
    assert (totals["documents_rejected"], totals["files_rejected"]) == (1, 0)


def test_count_without_rejections_writes_no_rejected_file(tmp_path):
    args = _corpus(tmp_path, "other.jsonl", _jsonl(GOOD))[:4] + ["-q"]
    assert main(["count", *args, "--output", str(tmp_path / "c.parquet"), "--on-error=skip"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.parquet", "in"]


@pytest.mark.parametrize("policy", ["fail", "skip"])
def test_a_pattern_matching_nothing(tmp_path, capsys, policy):
    args = _corpus(tmp_path, "other.jsonl", _jsonl(GOOD)) + ["--input", str(tmp_path / "no*.jsonl")]
    code = main(["run", *args, "--output", str(tmp_path / "out"), f"--on-error={policy}", "--max-rejected", "1"])
    if policy == "fail":
        assert code == 2
        assert capsys.readouterr().err.strip().splitlines()[-1] == (
            f"tokfx: error: {tmp_path / 'no*.jsonl'}: the pattern matches no file")
    else:
        assert code == 0
        rejected = json.loads((tmp_path / "out" / "rejected" / "rejected.jsonl").read_text())
        assert rejected == {"file": str(tmp_path / "no*.jsonl"), "line": None,
                            "reason": "the pattern matches no file"}


@pytest.mark.parametrize("policy", ["fail", "skip"])
def test_an_empty_document_is_kept_and_counted(tmp_path, policy):
    args = _corpus(tmp_path, "with-empty.jsonl", _jsonl([{"text": ""}]))
    assert main(["run", *args, "--output", str(tmp_path / "out"), f"--on-error={policy}"]) == 0
    rows = read_shards(tmp_path / "out")
    empty = [r for r in rows if r["id"].endswith("with-empty.jsonl:1")]
    assert len(empty) == 1 and empty[0]["input_ids"] == [] and empty[0]["num_tokens"] == 0
    totals = json.loads((tmp_path / "out" / "manifest.json").read_text())["totals"]
    assert totals["documents_empty"] == 1 and totals["documents_written"] == 3
    assert not (tmp_path / "out" / "rejected").exists()


def test_fail_message_through_the_portable_runner(tmp_path, capsys):
    """The portable job API (as on Flink and Spark) wraps the error as text; still one line."""
    name, content, line, reason = BAD_INPUTS[0]
    args = _corpus(tmp_path, name, content) + ["--output", str(tmp_path / "out"),
                                               "--runner=PortableRunner", "--job_endpoint=embed",
                                               "--environment_type=LOOPBACK"]
    assert main(["run", *args]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"tokfx: error: {tmp_path / 'in' / name}:{line}: {reason}")


def test_a_misspelt_option_is_an_error_not_a_default(tmp_path, capsys):
    assert main(["run", "--vocab-sise", "300", "--output", str(tmp_path / "out")]) == 2
    assert "unknown option(s): --vocab-sise (tokfx run --help lists them)" in capsys.readouterr().err


def test_id_field_names_the_documents(tmp_path):
    records = [{"id": f"doc-{i:02d}", "text": f"text number {i}"} for i in (5, 3, 11, 0)]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "ids.jsonl").write_bytes(_jsonl(records + [{"text": "no id"}]))
    out = tmp_path / "out"
    assert main(["run", "--input", str(tmp_path / "in" / "ids.jsonl"), "--id-field", "id",
                 "--vocab-size", "270", "--output", str(out),
                 "--on-error=skip", "--max-rejected", "1", "-q"]) == 0
    rows = read_shards(out)
    assert [r["id"] for r in rows] == [r["id"] for r in records]  # in the file's order
    by_id = {r["id"]: r for r in records}
    assert all(row["source"] == f"{tmp_path / 'in' / 'ids.jsonl'}:{records.index(by_id[row['id']]) + 1}"
               for row in rows)
    [rejected] = [json.loads(x) for x in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert rejected["line"] == 5 and rejected["reason"] == "no 'id' field"


def test_counting_a_corpus_with_nothing_left_fails_and_leaves_no_counts_file(tmp_path, capsys):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    counts_file = tmp_path / "counts.parquet"
    assert main(["count", "--input", str(tmp_path / "empty.jsonl"), "--output", str(counts_file),
                 "--on-error=skip", "--max-rejected", "100%", "-q"]) == 2
    assert capsys.readouterr().err == (
        "tokfx: error: no document counted (read 0 documents: 0 counted, 0 rejected; 1 file rejected);"
        f" the rejected records are in {counts_file}.rejected.jsonl\n")
    assert not counts_file.exists()
