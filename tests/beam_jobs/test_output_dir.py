"""The output directory of `tokfx run`: the lock that keeps a second run out, the settings that
decide whether a run may resume there (else refused unless --overwrite), and what the run reads
(special-token text inside a JSON document, a file of no known kind)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import tokfx
from beam_jobs.pipelines import run
from pipeline_corpus import (EOT, SOURCES, TOKFX, file_identities, output_digests, paragraphs,
                             read_shards, run_tokfx, stderr_lines, write_zst_shards)
from tokfx.formats.counts import read_counts
from tokfx.formats.tokfx_json import tokenizer_json_bytes

VOCAB = 300


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 60 KB in 2 .jsonl.zst files, a few shards each at --shard-size 4K."""
    docs = [p for source in SOURCES for p in paragraphs(source, 20_000)]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, docs, shards=2)


def run_args(corpus_dir: Path, out: Path, vocab: int = VOCAB) -> list[str]:
    return ["--input", str(corpus_dir / "*.jsonl.zst"), "--output", str(out),
            "--vocab-size", str(vocab), "--shard-size", "4K"]


@pytest.fixture(scope="module")
def complete(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("complete") / "out"
    run("run", [*run_args(corpus[0], out), "-q"])
    assert len(list((out / "shards").glob("*.parquet"))) >= 4
    return out


@pytest.fixture
def out(complete, tmp_path):
    """A copy of a complete output."""
    shutil.copytree(complete, tmp_path / "out")
    return tmp_path / "out"


def write_lock(out: Path, pid: int) -> Path:
    lock = out / ".tokfx.lock"
    lock.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "started": round(time.time())}) + "\n")
    return lock


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


# The lock.

def test_a_live_run_holding_the_lock_refuses_another(corpus, out, tmp_path):
    holder = subprocess.Popen(["sleep", "60"])
    try:
        lock = write_lock(out, holder.pid)
        before = output_digests(out)
        result = run_tokfx("run", *run_args(corpus[0], out), cwd=tmp_path)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 2
    [line] = stderr_lines(result.stderr)
    assert line.startswith("tokfx: error: ") and str(lock) in line and f"pid {holder.pid}" in line
    assert output_digests(out) == before


def test_the_lock_of_a_dead_process_is_taken_over(corpus, complete, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    write_lock(out, dead_pid())
    result = run_tokfx("run", *run_args(corpus[0], out), "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (out / ".tokfx.lock").exists()
    assert output_digests(out) == output_digests(complete)


def test_two_runs_at_once_one_is_refused(corpus, complete, tmp_path):
    """The second run starts while the first holds the lock (the first is stopped meanwhile,
    so the order is certain)."""
    out = tmp_path / "out"
    first = subprocess.Popen([TOKFX, "run", *run_args(corpus[0], out), "-q"], cwd=tmp_path,
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                holder = json.loads((out / ".tokfx.lock").read_text())
                break
            except (OSError, ValueError):
                assert first.poll() is None and time.monotonic() < deadline, "the first run never held the lock"
                time.sleep(0.005)
        os.killpg(first.pid, signal.SIGSTOP)
        try:
            second = run_tokfx("run", *run_args(corpus[0], out), cwd=tmp_path)
        finally:
            os.killpg(first.pid, signal.SIGCONT)
        _, first_err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    assert holder["pid"] == first.pid
    assert second.returncode == 2
    [line] = stderr_lines(second.stderr)
    assert str(out / ".tokfx.lock") in line and f"pid {first.pid}" in line
    assert first.returncode == 0, first_err
    assert output_digests(out) == output_digests(complete)


# The settings.

def test_other_settings_are_refused(corpus, out, tmp_path):
    before = output_digests(out)
    result = run_tokfx("run", *run_args(corpus[0], out, vocab=VOCAB + 20), cwd=tmp_path)
    assert result.returncode == 2
    [line] = stderr_lines(result.stderr)
    assert line.startswith("tokfx: error: ") and "vocab_size" in line and "--overwrite" in line
    assert output_digests(out) == before


def test_overwrite_equals_a_fresh_run(corpus, out, tmp_path):
    result = run_tokfx("run", *run_args(corpus[0], out, vocab=VOCAB + 20), "--overwrite", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    fresh = tmp_path / "fresh"
    run("run", [*run_args(corpus[0], fresh, vocab=VOCAB + 20), "-q"])
    assert output_digests(out) == output_digests(fresh)
    assert tokfx.Tokenizer.load(out / "tokenizer").vocab_size == VOCAB + 20


@pytest.mark.parametrize("case", ["settings.json removed", "only a receipts folder"])
def test_a_directory_of_unknown_settings_is_refused(corpus, out, tmp_path, case):
    if case == "settings.json removed":
        (out / "settings.json").unlink()
    else:
        shutil.rmtree(out)
        (out / "receipts").mkdir(parents=True)
        (out / "receipts" / "notes.txt").write_text("mine\n")
    before = output_digests(out)
    result = run_tokfx("run", *run_args(corpus[0], out), cwd=tmp_path)
    assert result.returncode == 2
    [line] = stderr_lines(result.stderr)
    assert str(out) in line and "--overwrite" in line
    assert output_digests(out) == before and (out / "receipts").is_dir()


def test_the_same_settings_again_keep_every_shard(corpus, complete, out, tmp_path):
    before = file_identities(out)
    result = run_tokfx("run", *run_args(corpus[0], out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert file_identities(out) == before, "no shard file was rewritten"
    assert output_digests(out) == output_digests(complete)
    shards = len(list((out / "shards").glob("*.parquet")))
    assert f"(0 documents encoded by this run, {shards:,} shards kept from an earlier run)" in result.stderr


def test_a_rerun_after_an_input_file_is_gone_leaves_no_shards_of_it(corpus, tmp_path):
    """The same command (pattern) once a file it matched is gone: the output must equal a
    fresh run on what is left; no shard or receipt of the vanished read task may stay."""
    inputs = tmp_path / "inputs"
    shutil.copytree(corpus[0], inputs)
    out = tmp_path / "out"
    run("run", [*run_args(inputs, out), "-q"])
    (inputs / "part-1.jsonl.zst").unlink()
    run("run", [*run_args(inputs, out), "-q"])
    fresh = tmp_path / "fresh"
    run("run", [*run_args(inputs, fresh), "-q"])
    left_over = sorted(set(output_digests(out)) - set(output_digests(fresh)))
    assert not left_over, f"{len(left_over)} files of the earlier run stayed: {left_over[:4]}..."
    assert output_digests(out) == output_digests(fresh)


# What is read.

SPECIAL_DOC = f"Hello world{EOT}and then <|endoftext|> more text: {EOT}{EOT} end"


@pytest.fixture(scope="module")
def special_corpus(tmp_path_factory):
    texts = [p for p in paragraphs(SOURCES[0], 20_000)] + [SPECIAL_DOC] * 3
    directory = tmp_path_factory.mktemp("special")
    path = directory / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path, texts


@pytest.mark.parametrize("mode", ["text", "split"])
def test_special_token_text_inside_a_json_document(special_corpus, tmp_path, mode):
    path, texts = special_corpus
    out = tmp_path / "out"
    flags = [] if mode == "text" else ["--special-tokens-in-text", "split"]
    run("run", ["--input", str(path), "--output", str(out), "--vocab-size", str(VOCAB), "-q", *flags])
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    [special] = tokenizer.encode(EOT)
    # Training: the literal's pre-tokens count as text by default, and are cut out with split.
    counts = tokfx.count_pretokens(texts, "gpt2", [] if mode == "text" else [EOT])
    expected = tokfx.train(counts, vocab_size=VOCAB, special_tokens=[EOT])
    assert (out / "tokenizer" / "tokfx.json").read_bytes() == tokenizer_json_bytes(expected)
    rows = {row["id"]: row["input_ids"] for row in read_shards(out)}
    assert len(rows) == len(texts)
    for line, text in enumerate(texts, start=1):
        ids = rows[f"{path}:{line}"]
        if mode == "text":
            assert ids == tokenizer.encode_ordinary(text)
            assert special not in ids
        else:
            assert ids == tokenizer.encode(text)
            assert (special in ids) == (EOT in text)


@pytest.mark.parametrize("mode", ["text", "split"])
def test_tokfx_count_of_special_token_text(special_corpus, tmp_path, mode):
    path, texts = special_corpus
    flags = [] if mode == "text" else ["--special-tokens-in-text=split"]
    result = run_tokfx("count", "--input", path, "--output", tmp_path / "counts.parquet", "-q", *flags,
                       cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    counts = read_counts(tmp_path / "counts.parquet")
    assert counts == tokfx.count_pretokens(texts, "gpt2", [] if mode == "text" else [EOT])
    assert (b"<|" in counts) == (mode == "text") and (b"endoftext" in counts) == (mode == "text")


def test_a_file_of_unknown_kind_is_refused(tmp_path):
    csv = tmp_path / "x.csv"
    csv.write_text("a,b\n1,2\n")
    out = tmp_path / "out"
    result = run_tokfx("run", "--input", csv, "--output", out, "--vocab-size", VOCAB, cwd=tmp_path)
    assert result.returncode == 2
    [line] = stderr_lines(result.stderr)
    assert line.startswith("tokfx: error: ") and str(csv) in line
    assert not out.exists() or not list(out.iterdir())


def test_a_file_of_unknown_kind_is_recorded_under_skip(special_corpus, tmp_path):
    csv = tmp_path / "x.csv"
    csv.write_text("a,b\n1,2\n")
    out = tmp_path / "out"
    result = run_tokfx("run", "--input", csv, "--input", special_corpus[0], "--output", out,
                       "--vocab-size", VOCAB, "--on-error=skip", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [record] = [json.loads(line) for line in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert record["file"] == str(csv) and record["line"] is None and "not a corpus file" in record["reason"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["totals"]["files_rejected"] == 1
    assert manifest["totals"]["documents_written"] == len(special_corpus[1])
