"""--keep-fields: JSON fields and Parquet columns copied into the Parquet shards beside the ids,
their types kept, null where a record lacks one; the Megatron shards unaffected. The expected
values come from the input as json and pyarrow read it, the shards are read with pyarrow."""
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tokfx.cli.main import main
from tokfx.formats.readers.jsonl import json_field_types
from tokfx.formats.readers.reader import ReadOptions

SHARD_COLUMNS = ["id", "input_ids", "num_tokens", "source"]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _records(n: int) -> list[dict]:
    records = [{"text": f"document {i}: " + "the quick brown fox jumps over the lazy dog " * (i % 5 + 1),
                "url": f"https://example.com/{i}", "score": i / 4, "views": i * 1000}
               for i in range(n)]
    del records[3]["url"]
    records[4]["url"] = None
    return records


def _shards(out: Path) -> pa.Table:
    """Every Parquet shard as one table (pyarrow's dataset reader: the shards must share a
    schema), in the order of their names."""
    return pq.read_table(sorted(map(str, (out / "shards").glob("*.parquet"))))


def _tokenizer(tmp_path: Path) -> Path:
    corpus = _jsonl(tmp_path / "train.jsonl", _records(30))
    assert main(["train", str(corpus), "-o", str(tmp_path / "tok"), "--vocab-size", "300", "-q"]) == 0
    return tmp_path / "tok"


def test_keep_fields_of_json_lines_land_in_the_shards_with_their_types(tmp_path):
    records = _records(40)
    (tmp_path / "in").mkdir()
    path = _jsonl(tmp_path / "in" / "docs.jsonl", records)
    out = tmp_path / "out"
    assert main(["run", "--input", str(path), "--output", str(out), "--vocab-size", "300",
                 "--keep-fields", "url,score,views", "-q"]) == 0
    table = _shards(out)
    assert table.schema.names == [*SHARD_COLUMNS, "url", "score", "views"]
    assert [table.schema.field(n).type for n in ("url", "score", "views")] == [pa.string(), pa.float64(), pa.int64()]
    rows = {row["source"]: row for row in table.to_pylist()}
    assert len(rows) == len(records)
    for line, record in enumerate(records, start=1):
        row = rows[f"{path}:{line}"]
        assert (row["url"], row["score"], row["views"]) == (record.get("url"), record["score"], record["views"])
    assert json.loads((out / "manifest.json").read_text())["config"]["keep_fields"] == ["url", "score", "views"]


def test_keep_fields_of_parquet_keep_the_columns_types_and_megatron_is_unaffected(tmp_path):
    n = 300
    source = pa.table({"text": [f"row {i}: " + "lorem ipsum dolor sit amet " * (i % 6 + 1) for i in range(n)],
                       "url": [None if i % 7 == 0 else f"https://example.org/{i}" for i in range(n)],
                       "date": pa.array([1_700_000_000_000_000 + i for i in range(n)], pa.timestamp("us")),
                       "score": pa.array([i / 3 for i in range(n)], pa.float32()),
                       "language": pa.array(["en", "fr", "de"] * (n // 3)).dictionary_encode()})
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "fineweb.parquet"
    pq.write_table(source, path, row_group_size=25)
    tok = _tokenizer(tmp_path)
    plain, kept = tmp_path / "plain", tmp_path / "kept"
    common = ["encode", str(tok), "--input", str(path), "--task-bytes", "2000", "-q"]
    assert main([*common, "--output-dir", str(plain)]) == 0
    assert main([*common, "--output-dir", str(kept), "--keep-fields", "url,date,score,language"]) == 0
    table = _shards(kept)
    assert len({p.name for p in (kept / "shards").glob("*.parquet")}) > 1  # several tasks, one schema
    assert table.schema.names == [*SHARD_COLUMNS, "url", "date", "score", "language"]
    assert [table.schema.field(n).type for n in ("url", "date", "score")] == \
        [pa.string(), pa.timestamp("us"), pa.float32()]
    assert table.schema.field("language").type == pa.string()  # dictionary-encoded in the input
    expected = pq.read_table(path).to_pylist()
    rows = {row["source"]: row for row in table.to_pylist()}
    for k, record in enumerate(expected, start=1):
        row = rows[f"{path}:{k}"]
        assert {f: row[f] for f in ("url", "date", "score", "language")} == \
            {f: record[f] for f in ("url", "date", "score", "language")}
    # The ids and the Megatron files are the same with or without the kept fields.
    assert _shards(plain).select(SHARD_COLUMNS).equals(table.select(SHARD_COLUMNS))
    for suffix in ("*.bin", "*.idx"):
        assert [p.read_bytes() for p in sorted((plain / "shards").glob(suffix))] == \
               [p.read_bytes() for p in sorted((kept / "shards").glob(suffix))]


def test_a_field_of_another_type_is_refused_naming_its_line_or_rejected_under_skip(tmp_path, capsys):
    records = _records(12)
    records[9]["url"] = 42
    (tmp_path / "in").mkdir()
    path = _jsonl(tmp_path / "in" / "docs.jsonl", records)
    base = ["run", "--input", str(path), "--vocab-size", "300", "--keep-fields", "url", "-q"]
    assert main([*base, "--output", str(tmp_path / "failed")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:10: field 'url' is int64, not string as --keep-fields keeps it" in err
    assert "Traceback" not in err
    out = tmp_path / "skipped"
    assert main([*base, "--output", str(out), "--on-error=skip"]) == 0
    [rejected] = [json.loads(x) for x in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert (rejected["line"], rejected["reason"]) == (10, "field 'url' is int64, not string as --keep-fields keeps it in this run")
    assert sorted(_shards(out).column("source").to_pylist()) == sorted(f"{path}:{k}" for k in range(1, 13) if k != 10)


@pytest.mark.parametrize("fields, message", [
    ("nope", "--keep-fields: no input has a field named 'nope'"),
    ("id", "--keep-fields: 'id' is a column of every shard already"),
    ("meta", "field 'meta' is an object (--keep-fields keeps strings, numbers and booleans)"),
])
def test_a_field_that_cannot_be_kept_is_refused_before_anything_runs(tmp_path, capsys, fields, message):
    records = [{**r, "meta": {"a": 1}} for r in _records(5)]
    (tmp_path / "in").mkdir()
    path = _jsonl(tmp_path / "in" / "docs.jsonl", records)
    out = tmp_path / "out"
    code = main(["run", "--input", str(path), "--output", str(out), "--keep-fields", fields, "-q"])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (out / "shards").exists()


def test_a_list_of_names_with_a_gap_is_refused(tmp_path, capsys):
    # Beam's option parser refuses a flag value as argparse does (usage, then the line).
    with pytest.raises(SystemExit) as exited:
        main(["run", "--output", str(tmp_path / "out"), "--keep-fields", "url,,score"])
    assert exited.value.code == 2
    assert "argument --keep-fields: expected distinct names like url,date, got 'url,,score'" in capsys.readouterr().err


def test_count_refuses_keep_fields(tmp_path, capsys):
    path = _jsonl(tmp_path / "docs.jsonl", _records(5))
    assert main(["count", "--input", str(path), "--output", str(tmp_path / "c.parquet"), "--keep-fields", "url"]) == 2
    assert "--keep-fields is for tokfx run and tokfx encode --output-dir" in capsys.readouterr().err


def test_a_json_number_field_with_a_fraction_among_the_sampled_records_is_double():
    lines = b"".join(json.dumps(r).encode() + b"\n" for r in
                     [{"a": 1, "b": 1, "c": "x"}, {"a": 2, "b": 2.5, "c": None}, {"a": True}])
    types = json_field_types(io.BytesIO(lines), "f.jsonl", ReadOptions(), ("a", "b", "c", "d"))
    assert types == {"a": pa.int64(), "b": pa.float64(), "c": pa.string()}
