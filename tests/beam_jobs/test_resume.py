"""An interrupted `tokfx run` / `tokfx encode --output-dir`, run again, resumes: the shards
receipted before the interruption are kept (not rewritten: same inode and mtime), the rest is
written, and the output ends byte for byte equal to a run never interrupted."""
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import tokfx
from beam_jobs.pipelines import run
from pipeline_corpus import (SOURCES, TOKFX, file_identities, output_digests, paragraphs,
                             read_shards, run_tokfx, write_zst_shards)

TASKS = 4


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 1.8 MB of text in 4 .jsonl.zst files (4 read tasks), some 28 shards each."""
    docs = [p for source in SOURCES for p in paragraphs(source, 600_000)]
    directory = tmp_path_factory.mktemp("corpus")
    return directory, write_zst_shards(directory, docs, shards=TASKS)


def run_args(corpus_dir: Path, out: Path) -> list[str]:
    return ["--input", str(corpus_dir / "*.jsonl.zst"), "--output", str(out), "--vocab-size", "400",
            "--shard-size", "20K"]


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory):
    """A run never interrupted; its ids checked against the tokenizer's own encoding."""
    out = tmp_path_factory.mktemp("reference") / "out"
    run("run", [*run_args(corpus[0], out), "-q"])
    tokenizer = tokfx.Tokenizer.load(out / "tokenizer")
    rows = read_shards(out)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    for row in rows:
        assert row["input_ids"] == tokenizer.encode_ordinary(corpus[1][row["id"]])
    shards = sorted((out / "shards").glob("*.parquet"))
    for task in range(TASKS):
        assert len([p for p in shards if p.name.startswith(f"shard-{task:05d}-")]) >= 5, \
            "each task should span several shards"
    return out


def receipt(out: Path, name: str) -> dict:
    return json.loads((out / "receipts" / f"{name}.json").read_text())


def shard_files(out: Path, name: str) -> list[Path]:
    return sorted((out / "shards").glob(f"{name}.*"))


def task_shards(out: Path, task: int) -> list[str]:
    return sorted(p.stem for p in (out / "shards").glob(f"shard-{task:05d}-*.parquet"))


def interrupt_after_first_receipt(corpus_dir: Path, out: Path, sig: int, attempts: int = 3):
    """Start `tokfx run`, and send `sig` to its process group as soon as a shard receipt
    appears. Retries when the run ended (or wrote its manifest) before the signal landed; fails
    loudly when it never lands in time. Returns (pid, returncode, stderr)."""
    for attempt in range(attempts):
        shutil.rmtree(out, ignore_errors=True)
        err = out.parent / f"{out.name}.stderr"
        with open(err, "w") as stderr:
            proc = subprocess.Popen([TOKFX, "run", *run_args(corpus_dir, out)], cwd=out.parent,
                                    start_new_session=True, stdout=subprocess.DEVNULL, stderr=stderr)
            sent = False
            try:
                while proc.poll() is None:
                    receipts = out / "receipts"
                    if receipts.is_dir() and any(receipts.glob("shard-*.json")):
                        os.killpg(proc.pid, sig)
                        sent = True
                        break
                    time.sleep(0.01)
                code = proc.wait(timeout=120)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        done = list((out / "receipts").glob("task-*.json")) if (out / "receipts").is_dir() else []
        if sent and not (out / "manifest.json").exists() and len(done) < TASKS:
            return proc.pid, code, err.read_text()
    pytest.fail(f"the signal never landed mid-run in {attempts} attempts (the run finished first)")


def receipted_shards(out: Path) -> dict[str, dict[str, tuple[int, int, bytes]]]:
    """The shards whose receipt is complete: each file's (inode, mtime, bytes)."""
    kept = {}
    for path in sorted((out / "receipts").glob("shard-*.json")):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue  # torn by the kill: not a receipt
        kept[path.stem] = {}
        for relative in data["files"]:
            stat = os.stat(out / relative)
            kept[path.stem][relative] = (stat.st_ino, stat.st_mtime_ns, (out / relative).read_bytes())
    return kept


def assert_kept(out: Path, before: dict) -> None:
    for name, files in before.items():
        for relative, (ino, mtime, data) in files.items():
            stat = os.stat(out / relative)
            assert (stat.st_ino, stat.st_mtime_ns) == (ino, mtime), f"{relative} was rewritten"
            assert (out / relative).read_bytes() == data


def test_sigkill_then_the_same_command_resumes(corpus, reference, tmp_path):
    out = tmp_path / "out"
    pid, code, _ = interrupt_after_first_receipt(corpus[0], out, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert not (out / "manifest.json").exists()
    lock = json.loads((out / ".tokfx.lock").read_text())  # left behind by the killed run
    assert lock["pid"] == pid
    before = receipted_shards(out)
    assert "shard-00000-0000" in before
    assert len(before) < len(list((reference / "receipts").glob("shard-*.json")))

    result = run_tokfx("run", *run_args(corpus[0], out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (out / ".tokfx.lock").exists(), "the stale lock was taken over and removed at the end"
    assert output_digests(out) == output_digests(reference)
    assert_kept(out, before)
    assert not list((out / "shards").glob(".*")), "no temporary file is left"


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_then_the_same_command_resumes(corpus, reference, tmp_path, sig, status):
    out = tmp_path / "out"
    _, code, stderr = interrupt_after_first_receipt(corpus[0], out, sig)
    # One line, the shell's status for the signal, no traceback (a shard writer left open
    # used to close itself when garbage-collected, into its closed file).
    assert code == status, stderr
    assert stderr.splitlines()[-1] == "tokfx: interrupted"
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert not (out / "manifest.json").exists()
    assert not (out / ".tokfx.lock").exists(), "an interrupted run releases its lock"
    assert f"tokfx: the output in {out} is incomplete (no manifest.json); the same command again resumes it" \
        in stderr.splitlines()
    before = receipted_shards(out)
    assert "shard-00000-0000" in before

    result = run_tokfx("run", *run_args(corpus[0], out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert output_digests(out) == output_digests(reference)
    assert_kept(out, before)


def copy_of(reference: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    return out


def test_resume_in_the_middle_of_a_task(corpus, reference, tmp_path):
    """A crash after a task's shard but before its last: the last shard's receipt and the
    task's receipt are missing; the earlier shards are kept and the last is written again."""
    out = copy_of(reference, tmp_path)
    (out / "manifest.json").unlink()
    names = task_shards(out, 1)
    (out / "receipts" / f"{names[-1]}.json").unlink()
    (out / "receipts" / "task-00001.json").unlink()
    before = file_identities(out)

    run("run", [*run_args(corpus[0], out), "-q"])
    after = file_identities(out)
    assert output_digests(out) == output_digests(reference)
    rewritten = {name for name in before if after.get(name) != before[name]}
    assert rewritten == {p.name for p in shard_files(out, names[-1])}


def test_a_corrupted_shard_and_the_rest_of_its_task_are_written_again(corpus, reference, tmp_path):
    out = copy_of(reference, tmp_path)
    names = task_shards(out, 2)
    broken = names[len(names) // 2]
    path = out / "shards" / f"{broken}.bin"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the same size, other bytes
    path.write_bytes(bytes(data))
    before = file_identities(out)

    run("run", [*run_args(corpus[0], out), "-q"])
    after = file_identities(out)
    assert output_digests(out) == output_digests(reference)
    rewritten = {name for name in before if after.get(name) != before[name]}
    assert rewritten == {p.name for name in names[names.index(broken):] for p in shard_files(out, name)}


def encode_args(corpus_dir: Path, tokenizer: Path, out: Path) -> list[str]:
    return ["encode", str(tokenizer), "--output-dir", str(out), "--input", str(corpus_dir / "*.jsonl.zst"),
            "--shard-size", "20K"]


def test_encode_output_dir_resumes(corpus, reference, tmp_path):
    tokenizer_dir = reference / "tokenizer"
    fresh = tmp_path / "fresh"
    result = run_tokfx(*encode_args(corpus[0], tokenizer_dir, fresh), "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tokenizer = tokfx.Tokenizer.load(tokenizer_dir)
    rows = read_shards(fresh)
    assert sorted(r["id"] for r in rows) == sorted(corpus[1])
    for row in rows:
        assert row["input_ids"] == tokenizer.encode_ordinary(corpus[1][row["id"]])
    assert not (fresh / "tokenizer").exists()

    out = copy_of(fresh, tmp_path)
    (out / "manifest.json").unlink()
    names = task_shards(out, 3)
    assert len(names) >= 3
    (out / "receipts" / f"{names[-1]}.json").unlink()
    (out / "receipts" / "task-00003.json").unlink()
    before = file_identities(out)
    result = run_tokfx(*encode_args(corpus[0], tokenizer_dir, out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = file_identities(out)
    assert output_digests(out) == output_digests(fresh)
    rewritten = {name for name in before if after.get(name) != before[name]}
    assert rewritten == {p.name for p in shard_files(out, names[-1])}
    assert f", {len(names) - 1 + sum(len(task_shards(out, t)) for t in range(3)):,} shards kept" \
        " from an earlier run)" in result.stderr
