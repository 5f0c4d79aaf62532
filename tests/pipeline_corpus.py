"""Small corpora for the pipeline tests, made from ../shared/corpora, and output readers."""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from conftest import corpus_path

EOT = "<|endoftext|>"
# English, Chinese and Korean text, a few KB from each, cut into paragraph documents.
SOURCES = ["english/pg2701_moby_dick.txt", "chinese/hongloumeng.txt", "korean/nsmc_reviews_4M.txt"]


def paragraphs(relative: str, limit: int) -> list[str]:
    """The first `limit` bytes of a corpus file as documents of up to 8 lines each."""
    text = corpus_path(relative).read_bytes()[:limit].decode("utf-8", "ignore").replace("\r\n", "\n")
    lines = text.split("\n")
    docs = ["\n".join(lines[i:i + 8]) for i in range(0, len(lines), 8)]
    return [d for d in docs if d.strip()]


def write_zst_shards(directory: Path, docs: list[str], shards: int) -> dict[str, str]:
    """Write docs round-robin into `shards` .jsonl.zst files; {"file:line": text}."""
    expected = {}
    for s in range(shards):
        path = directory / f"part-{s}.jsonl.zst"
        part = docs[s::shards]
        lines = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in part)
        path.write_bytes(zstandard.ZstdCompressor().compress(lines.encode("utf-8")))
        expected.update({f"{path}:{i}": t for i, t in enumerate(part, start=1)})
    return expected


_TYPES = {"string": pa.string(), "int32": pa.int32(), "list<int32>": pa.list_(pa.int32())}


def schema_from_file() -> pa.Schema:
    """The shard schema as schemas/shard.arrow.json describes it."""
    doc = json.loads((Path(__file__).parents[1] / "schemas" / "shard.arrow.json").read_text())
    return pa.schema([pa.field(f["name"], _TYPES[f["type"]], nullable=f["nullable"])
                      for f in doc["fields"]])


def read_shards(out: Path) -> list[dict]:
    """Every row of every Parquet shard, read with the schema from schemas/."""
    rows = []
    for path in sorted((out / "shards").glob("*.parquet")):
        rows += pq.read_table(path, schema=schema_from_file()).to_pylist()
    return rows


def output_digests(out: Path) -> dict[str, str]:
    """sha256 of every file under an output directory, by relative path."""
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


# The installed `tokfx` command (not `python -m tokfx.cli`, which would put the working
# directory, maybe the source folder without its built extensions, on sys.path).
TOKFX = str(Path(sys.executable).parent / "tokfx")


def run_tokfx(*args, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """`tokfx ARGS` in a subprocess, its output captured as text."""
    return subprocess.run([TOKFX, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def stderr_lines(stderr: str) -> list[str]:
    """The non-empty lines of a tokfx command's stderr."""
    return [line for line in stderr.splitlines() if line.strip()]


def file_identities(out: Path, folder: str = "shards") -> dict[str, tuple[int, int]]:
    """(inode, mtime in ns) of every file under OUT/folder, by name: a file rewritten, even with
    the same bytes, gets another pair."""
    return {p.name: (os.stat(p).st_ino, os.stat(p).st_mtime_ns)
            for p in sorted((out / folder).iterdir()) if p.is_file()}
