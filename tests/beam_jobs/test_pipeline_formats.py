"""--format on tokfx run and tokfx encode --output-dir: the chosen formats' files in every shard,
listed in the manifest with sha256 and size (so tokfx shards verify covers them), the ids (and,
in MDS, the kept fields) as the Parquet shards hold them, MDS read by MosaicML streaming's reader."""
import hashlib
import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from beam_jobs.pipelines import run
from pipeline_corpus import SOURCES, paragraphs, read_shards, write_zst_shards
from streaming_mds import read_mds
from tokfx.cli.main import main


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = [p for source in SOURCES for p in paragraphs(source, 6_000)] + [""]
    directory = tmp_path_factory.mktemp("corpus")
    write_zst_shards(directory, docs, shards=2)
    return directory


def _run(corpus, out, *formats):
    run("run", ["--input", str(corpus / "*.jsonl.zst"), "--output", str(out), "--vocab-size", "300",
                "--shard-size", "4K", "-q", *(arg for f in formats for arg in ("--format", f))])
    return json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def with_numpy(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    return out, _run(corpus, out, "numpy,parquet", "datatrove")


def test_the_numpy_and_datatrove_files_hold_the_parquet_shards_ids_and_the_manifest_lists_them(with_numpy):
    out, manifest = with_numpy
    assert manifest["config"]["formats"] == ["parquet", "numpy", "datatrove"]
    assert len(manifest["shards"]) > 2
    for shard in manifest["shards"]:
        prefix = f"shards/{shard['name']}"
        assert sorted(shard["files"]) == [f"{prefix}.{suffix}" for suffix in
                                          ("ds", "ds.index", "offsets.npy", "parquet", "tokens.npy")]
        for name, digest in shard["files"].items():
            data = (out / name).read_bytes()
            assert (hashlib.sha256(data).hexdigest(), len(data)) == (digest, shard["sizes"][name])
        tokens = np.load(out / f"{prefix}.tokens.npy", mmap_mode="r")
        offsets = np.load(out / f"{prefix}.offsets.npy", mmap_mode="r")
        assert tokens.dtype == np.uint16 and len(tokens) == shard["tokens"]
        expected = pq.read_table(out / f"{prefix}.parquet").column("input_ids").to_pylist()
        assert [tokens[offsets[k]:offsets[k + 1]].tolist() for k in range(len(offsets) - 1)] == expected
        # datatrove's layout (its own reader: tests/formats/test_shard_formats.py): the ids, and
        # every document's end as uint64.
        assert np.fromfile(out / f"{prefix}.ds", "<u2").tolist() == [i for ids in expected for i in ids]
        assert np.fromfile(out / f"{prefix}.ds.index", "<u8").tolist() == np.cumsum(
            [len(ids) for ids in expected]).tolist()
    assert not list((out / "shards").glob("*.bin"))


def test_verify_covers_the_numpy_files(with_numpy, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(with_numpy[0], out)
    assert main(["shards", "verify", str(out)]) == 0
    capsys.readouterr()
    path = sorted((out / "shards").glob("*.tokens.npy"))[0]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x10
    path.write_bytes(bytes(data))
    assert main(["shards", "verify", str(out)]) == 1
    assert capsys.readouterr().out == f"{out}/shards/{path.name}: sha256 differs from the manifest's\n"


def test_a_numpy_only_output_shows_a_document_by_index_but_has_no_ids(corpus, with_numpy, tmp_path, capsys):
    out = tmp_path / "out"
    manifest = _run(corpus, out, "numpy")
    assert {name.rsplit(".", 2)[-2] for s in manifest["shards"] for name in s["files"]} == {"tokens", "offsets"}
    rows = read_shards(with_numpy[0])
    assert main(["shards", "show", str(out), "--index", "5"]) == 0
    printed = capsys.readouterr().out
    assert f"ids:        {json.dumps(rows[5]['input_ids'])}\n" in printed and "\nid:" not in printed
    assert main(["shards", "show", str(out), "--id", rows[5]["id"]]) == 2
    assert "no format that keeps document ids (parquet)" in capsys.readouterr().err
    assert main(["shards", "inspect", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"{manifest['shards'][0]['name']:<24}{manifest['shards'][0]['documents']:>12,}" in printed
    assert printed.rstrip().endswith("source files: not shown, the shards have no Parquet files (the"
                                     " documents' sources are kept there: --format parquet)")


def test_an_unknown_format_is_refused_before_anything_is_written(corpus, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="--format 'mdss': not a shard format"):
        _run(corpus, out, "parquet,mdss")
    assert not out.exists() or not any(out.iterdir())


@pytest.fixture(scope="module")
def with_mds(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    return out, _run(corpus, out, "parquet,mds")


def test_streamings_reader_reads_the_run_as_one_dataset_with_the_parquet_shards_ids(with_mds):
    out, manifest = with_mds
    assert manifest["config"]["formats"] == ["parquet", "mds"]
    assert len(manifest["shards"]) > 2
    samples = read_mds(out / "shards")  # streaming's MDSReader over shards/index.json
    assert [s["tokens"].tolist() for s in samples] == [row["input_ids"] for row in read_shards(out)]
    assert all(s["tokens"].dtype == np.uint16 for s in samples)
    index = (out / "shards" / "index.json").read_bytes()
    assert manifest["indexes"] == {"shards/index.json": hashlib.sha256(index).hexdigest()}
    assert [e["raw_data"]["basename"] for e in json.loads(index)["shards"]] == \
        [f"{s['name']}.mds" for s in manifest["shards"]]


def test_verify_covers_the_mds_files_and_their_index(with_mds, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(with_mds[0], out)
    assert main(["shards", "verify", str(out)]) == 0
    capsys.readouterr()
    for path in (sorted((out / "shards").glob("*.mds"))[0], out / "shards" / "index.json"):
        original = path.read_bytes()
        data = bytearray(original)
        data[-2] ^= 0x10
        path.write_bytes(bytes(data))
        assert main(["shards", "verify", str(out)]) == 1
        assert capsys.readouterr().out == f"{out}/shards/{path.name}: sha256 differs from the manifest's\n"
        path.write_bytes(original)


def test_an_mds_only_output_is_inspected_and_shown_by_index(corpus, with_mds, tmp_path, capsys):
    out = tmp_path / "out"
    manifest = _run(corpus, out, "mds")
    rows = read_shards(with_mds[0])
    assert sorted(p.name for p in (out / "shards").iterdir()) == \
        sorted([f"{s['name']}.mds" for s in manifest["shards"]] + ["index.json"])
    assert main(["shards", "show", str(out), "--index", "7"]) == 0
    assert f"ids:        {json.dumps(rows[7]['input_ids'])}\n" in capsys.readouterr().out
    assert main(["shards", "inspect", str(out)]) == 0
    printed = capsys.readouterr().out
    first = manifest["shards"][0]
    assert f"{first['name']:<24}{first['documents']:>12,}{first['tokens']:>14,}" in printed
    assert main(["shards", "verify", str(out)]) == 0


def test_encode_keeps_the_fields_in_the_mds_shards_as_in_the_parquet_shards(tmp_path):
    records = [{"text": f"document {i}: " + "the quick brown fox " * (i % 4), "url": f"https://e.org/{i}",
                "score": i / 3, "views": i * 7, "ok": i % 2 == 0} for i in range(50)]
    records[3]["url"] = None
    del records[4]["score"]
    (tmp_path / "in").mkdir()
    corpus = tmp_path / "in" / "docs.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["train", str(corpus), "-o", str(tmp_path / "tok"), "--vocab-size", "300", "-q"]) == 0
    out = tmp_path / "out"
    assert main(["encode", str(tmp_path / "tok"), "--input", str(corpus), "--output-dir", str(out),
                 "--format", "parquet,mds", "--keep-fields", "url,score,views,ok", "--shard-size", "300",
                 "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["shards"]) > 1
    table = pq.read_table(sorted(map(str, (out / "shards").glob("*.parquet")))).to_pylist()
    samples = read_mds(out / "shards")
    assert len(samples) == len(table) == len(records)
    for sample, row in zip(samples, table, strict=True):
        assert sample["tokens"].tolist() == row["input_ids"]
        assert {k: sample[k] for k in ("url", "score", "views", "ok")} == \
            {k: row[k] for k in ("url", "score", "views", "ok")}
    assert [s["url"] for s in samples[:5]] == ["https://e.org/0", "https://e.org/1", "https://e.org/2", None,
                                              "https://e.org/4"]


def test_a_kept_field_mds_cannot_hold_is_refused_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    path = tmp_path / "in" / "docs.parquet"
    pq.write_table(pa.table({"text": ["one document", "another"],
                             "date": pa.array([1, 2], pa.timestamp("us"))}), path)
    out = tmp_path / "out"
    assert main(["run", "--input", str(path), "--output", str(out), "--vocab-size", "260",
                 "--format", "parquet,mds", "--keep-fields", "date", "-q"]) == 2
    assert "--keep-fields 'date' is timestamp[us]: --format mds keeps strings, numbers and booleans" in \
        capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())
