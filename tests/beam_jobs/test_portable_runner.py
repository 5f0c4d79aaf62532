"""The pipeline under --runner=PortableRunner with a separate job service and SDK worker pool
(portable_cluster.py), as Flink, Spark and Dataflow run Python: the launcher, the runner and the
workers are different processes with different working and temp folders; the output directory
(and the corpus) is the one filesystem they share. The output must equal the in-process run's,
byte for byte."""
import json
import shutil

import pytest

from beam_jobs.pipelines import run
from conftest import installed_outside_the_source_tree
from pipeline_corpus import SOURCES, output_digests, paragraphs, write_zst_shards
from portable_cluster import launch, portable_cluster

VOCAB = 400
LAUNCH_TIMEOUT = 180  # seconds; a run takes a few


pytestmark = pytest.mark.skipif(not installed_outside_the_source_tree(),
                                reason="the worker pool imports tokfx from the installed package"
                                       " only: pip install . to run these tests")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = [p for source in SOURCES for p in paragraphs(source, 12_000)] + [""]
    directory = tmp_path_factory.mktemp("corpus")
    write_zst_shards(directory, docs, shards=3)
    return directory


@pytest.fixture(scope="module")
def launcher_dir(tmp_path_factory):
    """The launcher's working folder and TMPDIR, which the runner and the workers must not see."""
    return tmp_path_factory.mktemp("launcher")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, launcher_dir):
    with portable_cluster(tmp_path_factory.mktemp("cluster"),
                          hide_from_workers=[launcher_dir]) as cluster:
        yield cluster


def _launch(cluster, launcher_dir, argv):
    """`python -m tokfx.cli <argv>` on the cluster; its stderr."""
    before = cluster.workers_started()
    result = launch(["-m", "tokfx.cli", *argv, *cluster.argv()], launcher_dir, LAUNCH_TIMEOUT)
    assert result.returncode == 0, f"{result.stderr[-5000:]}\n{cluster.logs()}"
    # The work ran in a worker process the pool started, not in the launcher.
    assert cluster.workers_started() > before, cluster.logs()
    return result.stderr


def _run_argv(corpus, out):
    return ["run", "--input", str(corpus / "*.jsonl.zst"), "--output", str(out),
            "--vocab-size", str(VOCAB), "--shard-size", "8K"]


@pytest.fixture(scope="module")
def in_process(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("in-process") / "out"
    run("run", _run_argv(corpus, out)[1:] + ["-q"])
    return out


def test_run_on_a_worker_pool_is_byte_identical(corpus, in_process, cluster, launcher_dir,
                                                tmp_path):
    out = tmp_path / "portable"
    err = _launch(cluster, launcher_dir, _run_argv(corpus, out))
    expected = output_digests(in_process)
    assert {name.split("/")[0] for name in expected} == {"manifest.json", "settings.json", "tokenizer", "shards", "receipts"}
    assert output_digests(out) == expected
    # The counters come back from the workers through the job service into the summary.
    totals = json.loads((out / "manifest.json").read_text())["totals"]
    assert f"read {totals['documents_read']:,} documents: {totals['documents_written']:,} written" in err
    assert f"{totals['tokens']:,} tokens" in err


def test_encode_on_a_worker_pool_is_byte_identical(corpus, in_process, cluster, launcher_dir,
                                                   tmp_path):
    # Every format: their files, and mds's index.json, the same from the worker pool.
    argv = ["encode", str(in_process / "tokenizer"), "--input", str(corpus / "*.jsonl.zst"),
            "--shard-size", "8K", "--append-eos", "--format", "parquet,megatron,numpy,datatrove,mds"]
    run("encode", argv[2:] + ["--tokenizer", argv[1], "--output", str(tmp_path / "local"), "-q"])
    _launch(cluster, launcher_dir, argv + ["--output-dir", str(tmp_path / "portable"), "-q"])
    assert output_digests(tmp_path / "portable") == output_digests(tmp_path / "local")


def test_shuffled_encode_on_a_worker_pool_is_byte_identical(corpus, in_process, cluster, launcher_dir, tmp_path):
    # --shuffle-seed: the spills are written by one worker process and read by another.
    argv = ["encode", str(in_process / "tokenizer"), "--input", str(corpus / "*.jsonl.zst"),
            "--shard-size", "8K", "--shuffle-seed", "5"]
    run("encode", argv[2:] + ["--tokenizer", argv[1], "--output", str(tmp_path / "local"), "-q"])
    _launch(cluster, launcher_dir, argv + ["--output-dir", str(tmp_path / "portable"), "-q"])
    assert output_digests(tmp_path / "portable") == output_digests(tmp_path / "local")
    assert len(list((tmp_path / "local" / "shards").glob("shuffled-*.parquet"))) > 1


_WHERE = """
import json, os, sys, tempfile
import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

def where(path, out):
    import json, os, tempfile
    with open(os.path.join(out, "where.json"), "w") as f:
        json.dump({"tmp": tempfile.gettempdir(), "cwd": os.getcwd(), "pid": os.getpid(),
                   "sees_launcher_file": os.path.exists(path)}, f)

launcher_file = os.path.join(tempfile.gettempdir(), "written-by-the-launcher")
with open(launcher_file, "w") as f:
    f.write("x")
with beam.Pipeline(options=PipelineOptions(sys.argv[2:])) as p:
    p | beam.Create([launcher_file]) | beam.Map(where, sys.argv[1])
print(json.dumps({"pid": os.getpid(), "tmp": tempfile.gettempdir()}))
"""


def test_the_workers_have_their_own_temp_folder(cluster, launcher_dir, tmp_path):
    # What the fixture promises: a worker's TMPDIR and cwd are the pool's, not the launcher's;
    # and, where the machine allows it, a file in the launcher's temp folder is out of its sight.
    script = tmp_path / "where.py"
    script.write_text(_WHERE)
    result = launch([str(script), str(tmp_path), *cluster.argv()], launcher_dir, LAUNCH_TIMEOUT)
    assert result.returncode == 0, f"{result.stderr[-5000:]}\n{cluster.logs()}"
    launcher = json.loads(result.stdout.strip().splitlines()[-1])
    worker = json.loads((tmp_path / "where.json").read_text())
    assert worker["pid"] != launcher["pid"]
    assert launcher["tmp"] == str(launcher_dir / "tmp")
    assert worker["tmp"] == str(cluster.worker_pool_dir / "tmp")
    assert worker["cwd"] == str(cluster.worker_pool_dir)
    if cluster.hidden:
        assert not worker["sees_launcher_file"]
    else:
        assert worker["sees_launcher_file"]  # same machine, nothing hidden: the limit of this test


def test_relative_paths_are_the_launchers(corpus, cluster, launcher_dir, tmp_path):
    # The launcher's working folder is on the shared filesystem here (its TMPDIR is not), so
    # the paths, once made absolute in the launcher, are the workers' too.
    shutil.copytree(corpus, tmp_path / "corpus")
    argv = ["run", "--input", "corpus/*.jsonl.zst", "--output", "out",
            "--vocab-size", str(VOCAB), "--shard-size", "8K", "-q", *cluster.argv()]
    result = launch(["-m", "tokfx.cli", *argv], launcher_dir, LAUNCH_TIMEOUT, cwd=tmp_path)
    assert result.returncode == 0, f"{result.stderr[-2000:]}\n{cluster.logs()}"
    assert (tmp_path / "out" / "manifest.json").exists()
    assert not (cluster.worker_pool_dir / "out").exists()
