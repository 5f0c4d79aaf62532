"""What each shard format adds to writing a shard: the same documents (random ids, GPT-2's
vocabulary size, lengths drawn around --mean-ids) written by tokfx's ShardWriter in Parquet
alone, then Parquet plus each other format, into a temporary folder; medians of --runs.

    python bench/bench_shard_formats.py [--documents 20000] [--mean-ids 600] [--runs 5]

Run from the repository root (tokfx imported from there). Times are CPU seconds of this process
(user + system: the writes' kernel time included), which a loaded machine disturbs less than wall
time. The column "added" is the CPU time over Parquet alone, per million ids: the cost a format
puts on `tokfx encode --output-dir`.

Then MDS alone against its peer, MosaicML streaming's own `MDSWriter` writing the same samples
into one shard file (the same bytes: tests/formats/test_shard_formats.py), when the test
environment's streaming is there (README's test command; its modules are imported as the tests
do, tests/streaming_mds.py).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import median_seconds  # noqa: E402

from tokfx.formats.shards.files import local_opener  # noqa: E402
from tokfx.formats.shards.formats import FORMATS  # noqa: E402
from tokfx.formats.shards.writer import ShardWriter  # noqa: E402

VOCAB_SIZE = 50_257


def _documents(count: int, mean_ids: int) -> list[array]:
    rng = random.Random(0)
    return [array("i", [rng.randrange(VOCAB_SIZE) for _ in range(max(1, int(rng.expovariate(1 / mean_ids))))])
            for _ in range(count)]


def _write(docs: list[array], formats: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        writer = ShardWriter(local_opener(folder), "s", VOCAB_SIZE, {}, formats=formats)
        for k, ids in enumerate(docs):
            writer.add(f"d{k}", ids, f"f:{k}", 4 * len(ids))
        writer.close()


def _streaming_writer(docs: list[array]):
    """A run of streaming's MDSWriter over `docs`, or None without it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import numpy as np
    import pytest
    from streaming_mds import mds_writer_class
    try:
        writer_class = mds_writer_class()
    except pytest.skip.Exception as skipped:
        print(f"streaming's MDSWriter: not run ({skipped})")
        return None
    arrays = [np.frombuffer(ids, np.int32).astype(np.uint16) for ids in docs]

    def run() -> None:
        with tempfile.TemporaryDirectory() as folder:
            with writer_class(columns={"tokens": "ndarray:uint16"}, out=folder, size_limit=None,
                              hashes=["sha256"]) as writer:
                for ids in arrays:
                    writer.write({"tokens": ids})
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--mean-ids", type=int, default=600)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    docs = _documents(args.documents, args.mean_ids)
    ids = sum(map(len, docs))
    print(f"{len(docs):,} documents, {ids:,} ids; load average {os.getloadavg()[0]:.1f}"
          f" on {os.cpu_count()} CPUs; medians of {args.runs}")
    base = median_seconds(lambda: _write(docs, ("parquet",)), args.runs, time.process_time)
    print(f"{'formats':<20}{'CPU s':>10}{'added s / M ids':>18}")
    print(f"{'parquet':<20}{base:>10.3f}{'':>18}")
    for name in FORMATS:
        if name == "parquet":
            continue
        seconds = median_seconds(lambda: _write(docs, ("parquet", name)), args.runs, time.process_time)
        print(f"{'parquet,' + name:<20}{seconds:>10.3f}{(seconds - base) / ids * 1e6:>18.3f}")
    peer = _streaming_writer(docs)
    if peer is not None:
        ours = median_seconds(lambda: _write(docs, ("mds",)), args.runs, time.process_time)
        theirs = median_seconds(peer, args.runs, time.process_time)
        print(f"\nmds alone: tokfx {ours:.3f} CPU s, streaming's MDSWriter {theirs:.3f} CPU s"
              f" (tokfx / streaming: {ours / theirs:.2f})")


if __name__ == "__main__":
    main()
