"""--shuffle-seed: the output's documents are those of the unshuffled output, with the same ids,
in the order of a keyed hash of (read task, line) over the whole corpus (computed here from its
definition with hashlib, not with beam_jobs.shuffle), in shards of about --shard-size; the same
bytes for 1 or 2 workers and the portable runner, after a resumed run too; the manifest records
the seed and tokfx shards reads the result."""
import hashlib
import json
import math
import struct
from collections import Counter

import numpy as np
import pyarrow.parquet as pq
import pytest

import tokfx
import beam_jobs.shuffle
from beam_jobs.pipelines import run
from conftest import installed_outside_the_source_tree
from megatron_reader import read_megatron
from pipeline_corpus import SOURCES, output_digests, paragraphs, read_shards, write_zst_shards
from tokfx.cli.main import main

SEED = 20240611
SHARD_SIZE = 6_000  # bytes of ids: some 8 shuffled shards of this corpus
FILES = 3


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 110 documents in 3 files (3 read tasks), each file one language, so that a
    document's file is its source in the measure of randomness below."""
    directory = tmp_path_factory.mktemp("corpus")
    texts = {}
    for index, source in enumerate(SOURCES):
        folder = directory / source.split("/")[0]
        folder.mkdir()
        docs = paragraphs(source, 20_000) + ([""] if index == 0 else [])
        texts.update(write_zst_shards(folder, docs, shards=1))
    return directory, texts


@pytest.fixture(scope="module")
def tokenizer_dir(corpus, tmp_path_factory):
    directory = tmp_path_factory.mktemp("tokenizer")
    tokfx.train(list(corpus[1].values()), vocab_size=400).save(directory)
    return directory


def encode(corpus_dir, tokenizer_dir, out, *extra):
    run("encode", ["--tokenizer", str(tokenizer_dir), "--input", str(corpus_dir / "*" / "*.jsonl.zst"),
                   "--output", str(out), "--shard-size", str(SHARD_SIZE), "--append-eos", "-q", *extra])
    return json.loads((out / "manifest.json").read_text())


@pytest.fixture(scope="module")
def unshuffled(corpus, tokenizer_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("unshuffled") / "out"
    encode(corpus[0], tokenizer_dir, out)
    return out


@pytest.fixture(scope="module")
def shuffled(corpus, tokenizer_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("shuffled") / "out"
    encode(corpus[0], tokenizer_dir, out, "--shuffle-seed", str(SEED))
    return out


def expected_order(texts: dict[str, str], seed: int) -> list[str]:
    """The ids sorted by the keyed BLAKE2b of (task, line): the tasks are the files in sorted
    order, a JSON-lines document's item its line."""
    files = sorted({doc_id.rsplit(":", 1)[0] for doc_id in texts})

    def key(doc_id):
        path, line = doc_id.rsplit(":", 1)
        data = struct.pack("<QQ", files.index(path), int(line))
        return hashlib.blake2b(data, digest_size=8, key=seed.to_bytes(8, "little")).digest()[::-1]

    return sorted(texts, key=key)


def same_file_neighbours(ids: list[str]) -> float:
    """The share of adjacent documents from the same input file."""
    files = [doc_id.rsplit(":", 1)[0] for doc_id in ids]
    return sum(a == b for a, b in zip(files, files[1:])) / (len(files) - 1)


def test_the_shuffled_output_is_a_permutation_of_the_unshuffled_in_the_keyed_hash_order(corpus, unshuffled,
                                                                                        shuffled):
    rows, before = read_shards(shuffled), read_shards(unshuffled)
    assert len(rows) == len(before) == len(corpus[1])
    assert sorted(map(json.dumps, rows)) == sorted(map(json.dumps, before))  # ids, sources, counts
    ids = [row["id"] for row in rows]
    assert ids != [row["id"] for row in before]
    assert ids == expected_order(corpus[1], SEED)
    manifest, plain = (json.loads((out / "manifest.json").read_text()) for out in (shuffled, unshuffled))
    assert manifest["config"]["shuffle_seed"] == SEED and "shuffle_seed" not in plain["config"]
    assert manifest["totals"] == plain["totals"]
    assert {p.name for p in shuffled.iterdir()} == {"manifest.json", "settings.json", "shards", "receipts"}, \
        "the spills are gone once the manifest is written"


def test_the_order_mixes_the_files_as_a_uniform_shuffle_does(corpus, shuffled, unshuffled):
    ids = [row["id"] for row in read_shards(shuffled)]
    sizes = Counter(doc_id.rsplit(":", 1)[0] for doc_id in ids)
    n = len(ids)
    uniform = sum(k * (k - 1) for k in sizes.values()) / (n * (n - 1))  # expected in a random permutation
    assert abs(same_file_neighbours(ids) - uniform) < 4 * math.sqrt(uniform * (1 - uniform) / n)
    assert same_file_neighbours([row["id"] for row in read_shards(unshuffled)]) == (n - FILES) / (n - 1)


def test_shards_are_about_the_shard_size_and_every_format_holds_the_parquet_ids(corpus, tokenizer_dir, tmp_path):
    out = tmp_path / "out"
    manifest = encode(corpus[0], tokenizer_dir, out, "--shuffle-seed", str(SEED),
                      "--format", "parquet,megatron,numpy,datatrove")
    shards = manifest["shards"]
    buckets = math.ceil(manifest["totals"]["tokens"] * 2 / SHARD_SIZE)  # uint16 ids
    assert len(shards) == buckets >= 5
    assert [s["name"] for s in shards] == [f"shuffled-{b:05d}" for b in range(buckets)]
    sizes = [s["tokens"] * 2 for s in shards]
    # ~15 documents a shard here: a bucket's size varies by about 1/sqrt(documents) (module doc)
    assert max(sizes) < 3 * SHARD_SIZE and sum(sizes) / len(sizes) <= SHARD_SIZE
    for shard in shards:
        prefix = out / "shards" / shard["name"]
        expected = pq.read_table(f"{prefix}.parquet").column("input_ids").to_pylist()
        assert read_megatron(prefix)[0] == expected
        tokens = np.load(f"{prefix}.tokens.npy")
        offsets = np.load(f"{prefix}.offsets.npy")
        assert [tokens[offsets[k]:offsets[k + 1]].tolist() for k in range(len(offsets) - 1)] == expected
        assert np.fromfile(f"{prefix}.ds", "<u2").tolist() == [i for ids in expected for i in ids]


def test_another_seed_gives_another_order_of_the_same_documents(corpus, tokenizer_dir, shuffled, tmp_path):
    encode(corpus[0], tokenizer_dir, tmp_path / "other", "--shuffle-seed", "1")
    ids = [row["id"] for row in read_shards(tmp_path / "other")]
    assert ids == expected_order(corpus[1], 1)
    assert ids != [row["id"] for row in read_shards(shuffled)] and sorted(ids) == sorted(corpus[1])


def test_two_threads_are_byte_identical(corpus, tokenizer_dir, shuffled, tmp_path):
    encode(corpus[0], tokenizer_dir, tmp_path / "threads", "--shuffle-seed", str(SEED),
           "--direct_running_mode=multi_threading", "--direct_num_workers=2")
    assert output_digests(tmp_path / "threads") == output_digests(shuffled)


def test_portable_runner_is_byte_identical(corpus, tokenizer_dir, shuffled, tmp_path):
    encode(corpus[0], tokenizer_dir, tmp_path / "portable", "--shuffle-seed", str(SEED),
           "--runner=PortableRunner", "--job_endpoint=embed", "--environment_type=LOOPBACK")
    assert output_digests(tmp_path / "portable") == output_digests(shuffled)


def test_two_worker_processes_are_byte_identical(corpus, tokenizer_dir, shuffled, tmp_path, monkeypatch):
    if not installed_outside_the_source_tree():
        pytest.skip("multi_processing workers import tokfx from the installed package only:"
                    " pip install . to run this test")
    monkeypatch.chdir(tmp_path)  # the workers must not find the source tree in their cwd
    encode(corpus[0], tokenizer_dir, tmp_path / "multi", "--shuffle-seed", str(SEED),
           "--direct_running_mode=multi_processing", "--direct_num_workers=2")
    assert output_digests(tmp_path / "multi") == output_digests(shuffled)


def test_a_run_that_failed_between_two_shuffled_shards_resumes_to_the_same_bytes(corpus, tokenizer_dir,
                                                                                 shuffled, tmp_path,
                                                                                 monkeypatch):
    out = tmp_path / "out"
    close_shard, closed = beam_jobs.shuffle.close_shard, []

    def fail_on_the_third(*args):
        if len(closed) == 2:
            raise RuntimeError("crash between two shards")
        closed.append(close_shard(*args))
        return closed[-1]

    monkeypatch.setattr(beam_jobs.shuffle, "close_shard", fail_on_the_third)
    with pytest.raises(Exception, match="crash between two shards"):
        encode(corpus[0], tokenizer_dir, out, "--shuffle-seed", str(SEED))
    monkeypatch.undo()
    assert not (out / "manifest.json").exists()
    assert len(list((out / "shuffle").glob("spill-*.records"))) == FILES
    written = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (out / "shards").glob("shuffled-*")}
    assert len(written) == 2 * 3  # two shards: .parquet, .bin, .idx
    counters = run("encode", ["--tokenizer", str(tokenizer_dir), "--input", str(corpus[0] / "*" / "*.jsonl.zst"),
                              "--output", str(out), "--shard-size", str(SHARD_SIZE), "--append-eos", "-q",
                              "--shuffle-seed", str(SEED)])
    assert output_digests(out) == output_digests(shuffled)
    assert counters.get("documents_read", 0) == 0, "every task's spill was kept, none encoded again"
    assert counters["shards_kept"] == 2
    for name, identity in written.items():
        path = out / "shards" / name
        assert (path.stat().st_ino, path.stat().st_mtime_ns) == identity, f"{name} was rewritten"


def test_tokfx_shards_inspects_shows_and_verifies_a_shuffled_output(corpus, shuffled, capsys):
    assert main(["shards", "verify", str(shuffled)]) == 0
    assert main(["shards", "inspect", str(shuffled)]) == 0
    printed = capsys.readouterr().out
    for path, count in Counter(doc_id.rsplit(":", 1)[0] for doc_id in corpus[1]).items():
        assert any(line.split()[0] == str(count) and line.split()[-1] == path for line in printed.splitlines()
                   if line.strip())
    first = expected_order(corpus[1], SEED)[0]
    assert main(["shards", "show", str(shuffled), "--index", "0"]) == 0
    assert f"id:         {first}\n" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["count", "--shuffle-seed", "1"], "--shuffle-seed is for tokfx run and tokfx encode --output-dir"),
    (["run", "--shuffle-seed", "-1"], "--shuffle-seed must be from 0 to 2**64-1, got -1"),
    (["run", "--shuffle-seed", "1", "--keep-fields", "url"], "--shuffle-seed with --keep-fields: not supported"),
])
def test_what_shuffling_cannot_honour_is_refused_before_anything_is_written(corpus, tmp_path, argv, message):
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=message.replace("*", r"\*")):
        run(argv[0], ["--input", str(corpus[0] / "*" / "*.jsonl.zst"), "--output", str(out), "-q", *argv[1:]])
    assert not out.exists()


def test_a_rejected_record_keeps_its_place_in_the_keys_and_is_recorded(tokenizer_dir, tmp_path):
    """Under --on-error=skip, a bad line is an item of its task like any (the documents after it
    keep their keys) and goes to rejected.jsonl; the documents add up."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    texts = {}
    for name, count in (("a.jsonl", 30), ("b.jsonl", 20)):
        lines = [json.dumps({"text": f"{name} document {i} " * (i % 7 + 1)}) for i in range(count)]
        lines[4] = "{not json"
        (corpus / name).write_text("\n".join(lines) + "\n")
        texts.update({f"{corpus / name}:{i}": json.loads(line)["text"]
                      for i, line in enumerate(lines, start=1) if line != "{not json"})
    out = tmp_path / "out"
    run("encode", ["--tokenizer", str(tokenizer_dir), "--input", str(corpus / "*.jsonl"), "--output", str(out),
                   "--shard-size", "200", "--on-error=skip", "--shuffle-seed", "3", "-q"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["totals"]["documents_written"] == len(texts) and manifest["totals"]["documents_rejected"] == 2
    assert [row["id"] for row in read_shards(out)] == expected_order(texts, 3)
    assert len((out / "rejected" / "rejected.jsonl").read_text().splitlines()) == 2


def test_tokfx_run_shuffles_what_it_encodes_with_the_tokenizer_it_trains(corpus, tmp_path):
    def run_into(out, *extra):
        run("run", ["--input", str(corpus[0] / "*" / "*.jsonl.zst"), "--output", str(out), "--vocab-size", "300",
                    "--shard-size", str(SHARD_SIZE), "-q", *extra])
        return read_shards(out)

    plain, shuffled = run_into(tmp_path / "plain"), run_into(tmp_path / "shuffled", "--shuffle-seed", "9")
    assert (tmp_path / "plain" / "tokenizer" / "tokfx.json").read_bytes() == \
        (tmp_path / "shuffled" / "tokenizer" / "tokfx.json").read_bytes()
    assert sorted(map(json.dumps, shuffled)) == sorted(map(json.dumps, plain))
    assert [row["id"] for row in shuffled] == expected_order(corpus[1], 9)
