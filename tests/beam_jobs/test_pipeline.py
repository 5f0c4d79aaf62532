"""The Beam pipeline end to end on DirectRunner, against tokfx run in process."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import fastjsonschema
import pyarrow.parquet as pq
import pytest

import tokfx
from beam_jobs.pipelines import run
from conftest import installed_outside_the_source_tree
from megatron_reader import read_megatron
from pipeline_corpus import (EOT, SOURCES, output_digests, paragraphs, read_shards,
                             schema_from_file, write_zst_shards)
from tokfx.formats.counts import read_counts
from tokfx.formats.tokfx_json import tokenizer_hash, tokenizer_json_bytes

SCHEMAS = Path(__file__).parents[2] / "schemas"
VOCAB = 400


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    docs = [p for source in SOURCES for p in paragraphs(source, 12_000)] + [""]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, docs, shards=3)


def run_pipeline(corpus_dir, out, *extra):
    return run("run", ["--input", str(corpus_dir / "*.jsonl.zst"), "--output", str(out),
                       "--vocab-size", str(VOCAB), "--shard-size", "8K", "-q", *extra])


@pytest.fixture(scope="module")
def first_run(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    counters = run_pipeline(corpus[0], out)
    return out, counters


def test_tokenizer_equals_in_process_training(corpus, first_run):
    out, _ = first_run
    expected = tokfx.train(list(corpus[1].values()), vocab_size=VOCAB, special_tokens=[EOT])
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    assert {p.name for p in (out / "tokenizer").iterdir()} == {
        "tokfx.json", "vocab.json", "merges.txt", "tokenizer.json"}


def test_every_document_is_encoded_in_parquet_and_megatron(corpus, first_run):
    out, _ = first_run
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    for row in rows:
        assert row["input_ids"] == tokenizer.encode(corpus[1][row["id"]])
        assert row["num_tokens"] == len(row["input_ids"]) and row["source"] == row["id"]
    for path in sorted((out / "shards").glob("*.parquet")):
        table = pq.read_table(path)
        ids = table.column("id").to_pylist()
        # In the order of the input file: its lines, one read task after the other.
        assert ids == sorted(ids, key=lambda i: (i.rsplit(":", 1)[0], int(i.rsplit(":", 1)[1])))
        seqs, _, doc_index = read_megatron(path.with_suffix(""))
        assert seqs == table.column("input_ids").to_pylist()
        assert doc_index == list(range(len(seqs) + 1))
        footer = table.schema.metadata
        assert footer[b"tokfx.tokenizer_hash"].decode() == tokenizer_hash(tokenizer)
        assert json.loads(footer[b"tokfx.config"])["vocab_size"] == VOCAB
        assert json.loads(footer[b"tokfx.alphabet"]) == {"name": "bytes"}


def test_megatron_core_reads_the_shards(first_run):
    from megatron.core.datasets.indexed_dataset import IndexedDataset
    for path in sorted((first_run[0] / "shards").glob("*.parquet")):
        expected = pq.read_table(path).column("input_ids").to_pylist()
        dataset = IndexedDataset(str(path.with_suffix("")))
        assert [dataset[i].tolist() for i in range(len(dataset))] == expected


def test_parquet_schema_matches_the_schema_file(first_run):
    for path in (first_run[0] / "shards").glob("*.parquet"):
        assert pq.read_schema(path).remove_metadata().equals(schema_from_file())


def test_manifest_validates_and_adds_up(corpus, first_run):
    out, counters = first_run
    manifest = json.loads((out / "manifest.json").read_text())
    fastjsonschema.compile(json.loads((SCHEMAS / "manifest.schema.json").read_text()))(manifest)
    for shard in manifest["shards"]:
        for name, digest in shard["files"].items():
            assert output_digests(out)[name] == digest
    totals = manifest["totals"]
    texts = corpus[1].values()
    assert totals["documents_read"] == len(corpus[1]) == totals["documents_written"]
    assert totals["documents_rejected"] == 0 and totals["documents_empty"] == 1
    assert totals["bytes"] == sum(len(t.encode()) for t in texts)
    assert totals["tokens"] == sum(s["tokens"] for s in manifest["shards"]) == counters["tokens"]
    assert counters["documents_read"] == len(corpus[1])
    assert manifest["alphabet"] == {"name": "bytes"}


def test_a_second_run_is_byte_identical(corpus, first_run, tmp_path):
    run_pipeline(corpus[0], tmp_path / "again")
    assert output_digests(tmp_path / "again") == output_digests(first_run[0])


def test_portable_runner_is_byte_identical(corpus, first_run, tmp_path):
    run_pipeline(corpus[0], tmp_path / "portable", "--runner=PortableRunner",
                 "--job_endpoint=embed", "--environment_type=LOOPBACK")
    assert output_digests(tmp_path / "portable") == output_digests(first_run[0])


def test_two_worker_processes_are_byte_identical(corpus, first_run, tmp_path, monkeypatch):
    if not installed_outside_the_source_tree():
        pytest.skip("multi_processing workers import tokfx from the installed package only:"
                    " pip install . to run this test")
    monkeypatch.chdir(tmp_path)  # the workers must not find the source tree in their cwd
    run_pipeline(corpus[0], tmp_path / "multi", "--direct_running_mode=multi_processing",
                 "--direct_num_workers=2")
    assert output_digests(tmp_path / "multi") == output_digests(first_run[0])


def test_count_then_train_from_counts(corpus, tmp_path):
    counts_file = tmp_path / "counts.parquet"
    run("count", ["--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(counts_file), "-q"])
    texts = list(corpus[1].values())
    assert read_counts(counts_file) == tokfx.count_pretokens(texts, special_tokens=[EOT])
    from tokfx.cli.main import main
    assert main(["train", "--counts", str(counts_file), "-o", str(tmp_path / "tok"),
                 "--vocab-size", str(VOCAB), "-q"]) == 0
    expected = tokfx.train(texts, vocab_size=VOCAB, special_tokens=[EOT])
    assert (tmp_path / "tok" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)


def test_count_pruning(corpus, tmp_path):
    counts_file = tmp_path / "counts.parquet"
    run("count", ["--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(counts_file), "-q",
                  "--min-pretoken-count", "2", "--max-pretokens", "50"])
    full = tokfx.count_pretokens(list(corpus[1].values()), special_tokens=[EOT])
    ranked = sorted(((k, v) for k, v in full.items() if v >= 2), key=lambda kv: (-kv[1], kv[0]))
    assert read_counts(counts_file) == dict(ranked[:50])


def test_encode_an_existing_tokenizer_with_eos(corpus, first_run, tmp_path):
    from tokfx.cli.main import main
    tok_dir = first_run[0] / "tokenizer"
    assert main(["encode", str(tok_dir), "--output-dir", str(tmp_path / "enc"), "--input",
                 str(corpus[0] / "*.jsonl.zst"), "--append-eos", "-q"]) == 0
    tokenizer = tokfx.Tokenizer.load(tok_dir)
    eot = tokenizer.token_to_id(EOT)
    rows = read_shards(tmp_path / "enc")
    assert len(rows) == len(corpus[1])
    for row in rows:
        assert row["input_ids"] == tokenizer.encode(corpus[1][row["id"]]) + [eot]


def test_run_without_arguments_uses_the_sample_corpus(tmp_path):
    # The tokfx this test imported (installed, or the source tree), run from an empty folder.
    env = {**os.environ, "PYTHONPATH": str(Path(tokfx.__file__).parents[1])}
    result = subprocess.run([sys.executable, "-m", "tokfx.cli", "run"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "tokfx-out" / "manifest.json").read_text())
    assert manifest["totals"]["documents_written"] == manifest["totals"]["documents_read"] > 0
    read = manifest["totals"]["documents_read"]
    assert f"read {read:,} documents: {read:,} written, 0 rejected" in result.stderr
    assert "tokfx-out" in result.stderr
    progress = [line for line in result.stderr.splitlines() if line.startswith("tokfx: ")]
    samples = len(list((Path(tokfx.__file__).parent / "data" / "sample").glob("*.jsonl.zst")))
    assert sum(line.startswith("tokfx: counted task ") for line in progress) == samples
    assert sum(") done: " in line for line in progress) == samples
    assert sum(": wrote shard-" in line for line in progress) == len(manifest["shards"])
    assert "merges in" in result.stderr  # the trainer's progress


def test_run_with_append_eos(corpus, first_run, tmp_path):
    run_pipeline(corpus[0], tmp_path / "eos", "--append-eos")
    tokenizer = tokfx.Tokenizer.load(first_run[0] / "tokenizer")
    eot = tokenizer.token_to_id(EOT)
    rows = read_shards(tmp_path / "eos")
    assert len(rows) == len(corpus[1])
    for row in rows:
        assert row["input_ids"] == tokenizer.encode(corpus[1][row["id"]]) + [eot]


def test_run_with_the_cjk_alphabet(corpus, tmp_path):
    out = tmp_path / "cjk"
    # The cjk alphabet alone has 516 symbols with these groups; a later --vocab-size wins.
    run_pipeline(corpus[0], out, "--alphabet", "cjk", "--cjk-groups", "38,39,3a,3b",
                 "--vocab-size", "800")
    expected = tokfx.train(list(corpus[1].values()), vocab_size=800, special_tokens=[EOT],
                           alphabet="cjk", cjk_groups=(0x38, 0x39, 0x3A, 0x3B))
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    assert [p.name for p in (out / "tokenizer").iterdir()] == ["tokfx.json"]
    alphabet = {"name": "cjk", "groups": [0x38, 0x39, 0x3A, 0x3B]}
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    for row in rows:
        assert row["input_ids"] == expected.encode(corpus[1][row["id"]])
    for path in (out / "shards").glob("*.parquet"):
        footer = pq.read_schema(path).metadata
        assert json.loads(footer[b"tokfx.alphabet"]) == alphabet
        assert json.loads(footer[b"tokfx.config"])["alphabet"] == alphabet
    assert json.loads((out / "manifest.json").read_text())["alphabet"] == alphabet


def test_run_with_the_chars_cjk_alphabet(corpus, tmp_path):
    out = tmp_path / "chars"
    run_pipeline(corpus[0], out, "--alphabet", "chars-cjk", "--pattern", "sentencepiece",
                 "--character-coverage", "0.99", "--vocab-size", "2000")
    expected = tokfx.train(list(corpus[1].values()), vocab_size=2000, special_tokens=[EOT], pattern="sentencepiece",
                           alphabet="chars-cjk", character_coverage=0.99)
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    for row in rows:
        assert row["input_ids"] == expected.encode(corpus[1][row["id"]])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["alphabet"] == expected.alphabet.to_dict()
    assert manifest["config"]["alphabet"] == {"name": "chars-cjk", "groups": [0x39, 0x3A, 0x3B]}
    assert manifest["config"]["character_coverage"] == 0.99


def test_bad_cjk_groups_are_one_line_errors(corpus, tmp_path, capsys):
    from tokfx.cli.main import main
    argv = ["run", "--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(tmp_path / "x"), "-q",
            "--alphabet", "cjk"]
    assert main(argv + ["--cjk-groups", "zz"]) == 2
    assert capsys.readouterr().err == "tokfx: error: cjk groups: expected hex groups like 39,3a,3b, got 'zz'\n"
    assert main(argv + ["--cjk-groups", "40"]) == 2
    assert "cjk groups must be a non-empty subset of 0x38-0x3B" in capsys.readouterr().err
    assert main(argv[:-2] + ["--cjk-groups", "39"]) == 2
    assert "cjk_groups given for the 'bytes' alphabet" in capsys.readouterr().err


def test_sage_training_params_pass_through_the_pipeline(corpus, tmp_path):
    out = tmp_path / "sage"
    run_pipeline(corpus[0], out, "--algorithm", "sage", "--initial-size", "600",
                 "--schedule", "500,400", "--embeddings-schedule", "600,500", "--context", "pretoken")
    expected = tokfx.train(list(corpus[1].values()), "sage", vocab_size=VOCAB, special_tokens=[EOT],
                           initial_size=600, schedule=[500, 400], embeddings_schedule=[600, 500],
                           context="pretoken")
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["training"] == {"initial_size": 600, "schedule": [500, 400],
                                              "embeddings_schedule": [600, 500], "context": "pretoken"}


def test_sage_line_context_counts_lines_in_the_pipeline(corpus, tmp_path, monkeypatch):
    # The pipeline counts the documents' lines beside their pre-tokens and SaGe trains on both:
    # the same tokenizer as tokfx.train over the texts with context="line".
    out = tmp_path / "sage-line"
    counters = run_pipeline(corpus[0], out, "--algorithm", "sage", "--initial-size", "600",
                            "--schedule", "500,400", "--embeddings-schedule", "600,500")  # line: the default
    texts = list(corpus[1].values())
    settings = dict(vocab_size=VOCAB, special_tokens=[EOT], initial_size=600, schedule=[500, 400],
                    embeddings_schedule=[600, 500])
    expected = tokfx.train(texts, "sage", context="line", **settings)
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    assert expected.tokens != tokfx.train(texts, "sage", context="pretoken", **settings).tokens  # it matters
    assert counters["lines"] == sum(tokfx.counting.count_lines(texts, [EOT]).values())
    assert json.loads((out / "tokenizer" / "tokfx.json").read_text())["params"]["context"] == "line"
    if installed_outside_the_source_tree():
        # The line counts are summed and funnelled like the pre-token counts: two worker
        # processes give the same output, byte for byte.
        monkeypatch.chdir(tmp_path)
        run_pipeline(corpus[0], tmp_path / "sage-line-2", "--algorithm", "sage", "--initial-size", "600",
                     "--schedule", "500,400", "--embeddings-schedule", "600,500",
                     "--direct_running_mode=multi_processing", "--direct_num_workers=2")
        assert output_digests(tmp_path / "sage-line-2") == output_digests(out)
    with pytest.raises(ValueError, match="context does not apply to algorithm 'bpe'"):
        run_pipeline(corpus[0], tmp_path / "bpe-line", "--context", "line")
    with pytest.raises(ValueError, match="--lines-output is for tokfx count, not tokfx run"):
        run_pipeline(corpus[0], tmp_path / "lines-run", "--lines-output", str(tmp_path / "l.parquet"))


def test_pathpiece_training_params_pass_through_the_pipeline(corpus, tmp_path):
    out = tmp_path / "pp"
    run_pipeline(corpus[0], out, "--algorithm", "pathpiece", "--pattern", "firstspace",
                 "--initial-size", "900", "--schedule", "700,400", "--segmenter", "greedy")
    expected = tokfx.train(list(corpus[1].values()), "pathpiece", vocab_size=VOCAB,
                           special_tokens=[EOT], pattern="firstspace", initial_size=900,
                           schedule=[700, 400], segmenter="greedy")
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    assert tokenizer.segmenter == "greedy"
    for row in read_shards(out):
        assert row["input_ids"] == tokenizer.encode(corpus[1][row["id"]])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["training"] == {"initial_size": 900, "schedule": [700, 400],
                                              "segmenter": "greedy", "segmenter_params": {}}


def test_pathpiece_random_ties_pass_through_the_pipeline(corpus, tmp_path):
    out = tmp_path / "ppr"
    run_pipeline(corpus[0], out, "--algorithm", "pathpiece", "--pattern", "space-digit",
                 "--initial-vocab", "ngram", "--initial-size", "900", "--schedule", "700,400",
                 "--tie-break", "random", "--seed", "6")
    expected = tokfx.train(list(corpus[1].values()), "pathpiece", vocab_size=VOCAB,
                           special_tokens=[EOT], pattern="space-digit", initial_vocab="ngram",
                           initial_size=900, schedule=[700, 400], tie_break="random", seed=6)
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    assert (tokenizer.segmenter, tokenizer.segmenter_params) == ("pathpiece-r", {"max_width": 16, "seed": 6})
    for row in read_shards(out):
        assert row["input_ids"] == tokenizer.encode(corpus[1][row["id"]])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["training"] == {"initial_vocab": "ngram", "initial_size": 900,
                                              "schedule": [700, 400], "tie_break": "random", "seed": 6}


def test_overwrite_replaces_what_an_old_run_wrote(corpus, first_run, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(first_run[0], out)
    stale = [out / "shards" / "shard-00099-0000.parquet", out / "eval" / "metrics.json",
             out / "rejected" / "rejected.jsonl"]
    for path in stale:
        path.parent.mkdir(exist_ok=True)
        path.write_text("from an earlier run")
    (out / "notes.txt").write_text("the user's own file")
    from tokfx.cli.main import main
    # A refused run deletes nothing.
    assert main(["run", "--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(out), "-q",
                 "--vocab-size", "10", "--overwrite"]) == 2
    assert all(path.exists() for path in stale) and (out / "manifest.json").exists()
    run_pipeline(corpus[0], out, "--overwrite")
    assert not any(path.exists() for path in stale)
    assert (out / "notes.txt").read_text() == "the user's own file"
    digests = output_digests(out)
    del digests["notes.txt"]
    assert digests == output_digests(first_run[0])
    # tokfx encode into the same directory: another command's output, so only with
    # --overwrite; it keeps the tokenizer it encodes with.
    encode = ["encode", str(out / "tokenizer"), "--output-dir", str(out), "--input",
              str(corpus[0] / "*.jsonl.zst"), "--shard-size", "1G", "-q"]
    assert main(encode) == 2
    assert main(encode + ["--overwrite"]) == 0
    assert (out / "tokenizer" / "tokfx.json").exists()
    assert sorted(p.name for p in (out / "shards").glob("*.parquet")) == [
        "shard-00000-0000.parquet", "shard-00001-0000.parquet", "shard-00002-0000.parquet"]


def test_a_refused_run_leaves_no_temp_folder(corpus, tmp_path, monkeypatch):
    # Beam makes a local temp folder with every Pipeline and removes it in run(); a run whose
    # settings are refused never gets there.
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(ValueError, match="context does not apply"):
        run_pipeline(corpus[0], tmp_path / "out", "--context", "line")
    assert not list(tmp_path.glob("beam-pipeline-temp*"))
    run("count", ["--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(tmp_path / "c.parquet"), "-q"])
    assert not list(tmp_path.glob("beam-pipeline-temp*"))


def test_local_worker_processes_keep_beams_info_log_out_of_the_terminal(corpus, tmp_path, capfd, monkeypatch):
    # The multi_processing workers inherit the terminal; Beam's INFO log from each (channels,
    # options, harness start and exit) used to fill it. Our progress lines still come through.
    if not installed_outside_the_source_tree():
        pytest.skip("multi_processing workers import tokfx from the installed package only:"
                    " pip install . to run this test")
    monkeypatch.chdir(tmp_path)  # the workers must not find the source tree in their cwd
    run("count", ["--input", str(corpus[0] / "*.jsonl.zst"), "--output", str(tmp_path / "c.parquet"),
                  "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    err = capfd.readouterr().err
    assert "tokfx: counted task " in err  # a worker's progress line
    assert "INFO:apache_beam" not in err and "sdk harness" not in err
    assert "local_job_service:Worker" not in err


@pytest.mark.parametrize("workers", ["in_process", "two_workers"])
@pytest.mark.parametrize("algorithm", ["unigram", "wordpiece"])
def test_other_algorithms_equal_in_process_training_and_evaluate(algorithm, workers, corpus, tmp_path,
                                                                 monkeypatch):
    from tokfx.cli.main import main

    extra = ()
    if workers == "two_workers":
        if not installed_outside_the_source_tree():
            pytest.skip("multi_processing workers import tokfx from the installed package only:"
                        " pip install . to run this test")
        monkeypatch.chdir(tmp_path)
        extra = ("--direct_running_mode=multi_processing", "--direct_num_workers=2")
    out = tmp_path / algorithm
    run_pipeline(corpus[0], out, "--algorithm", algorithm, *extra)
    texts = list(corpus[1].values())
    expected = tokfx.train(texts, algorithm, vocab_size=VOCAB, special_tokens=[EOT])
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    for row in read_shards(out):
        assert row["input_ids"] == tokenizer.encode(corpus[1][row["id"]])
    # tokfx train from the same corpus files, in process: the same file.
    assert main(["train", *map(str, sorted(corpus[0].glob("*.jsonl.zst"))), "-o", str(tmp_path / "tok"),
                 "--algorithm", algorithm, "--vocab-size", str(VOCAB), "-q"]) == 0
    assert (tmp_path / "tok" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    assert main(["eval", str(out / "tokenizer"), "--corpus", *map(str, sorted(corpus[0].glob("*.jsonl.zst"))),
                 "-o", str(tmp_path / "eval"), "-q"]) == 0
    metrics = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert metrics
