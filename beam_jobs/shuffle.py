"""--shuffle-seed: the output's documents in a seeded pseudo-random order over the whole corpus,
in two stages whose memory does not grow with the corpus.

The order. Every document gets a key: a 64-bit keyed hash (BLAKE2b, the seed its key) of its
read task's index and its place among the task's items. The output is every document sorted by
key (ties, one in 2**64 per pair, by task and place). Sorting by a pseudo-random key is a
uniformly random permutation as far as the hash is random, and it depends on the seed and the
read plan only: not on the runner, the number of workers, nor --shard-size.

1. The encoding pass (beam_jobs.encode), per read task: each document's ids, id, source and
   text size go into a spill file on the worker's local disk, in input order, its key and
   record length into memory (16 bytes a document, not its ids). At the task's end the spill is copied, in
   key order, into OUTPUT/shuffle/spill-TTTTT.records, its keys (then each record's end offset)
   into spill-TTTTT.keys, and receipted (receipts/spill-TTTTT.json).
2. Once every task has its spill, B = ceil(token bytes of the corpus / --shard-size) buckets:
   bucket b holds the documents whose key is in [b * 2**64 / B, (b+1) * 2**64 / B). One call per
   bucket (WriteShuffled) finds that key range in each task's keys file (a binary search, a
   few small reads), reads its records (one contiguous read per task), sorts them by key and
   writes them as shard `shuffled-BBBBB` (beam_jobs.shard_files), receipted like any shard.
   Memory: one bucket's records, about one shard (its ids as int32). A bucket's size is binomial around the corpus / B, so
   shards are about --shard-size, none larger in expectation.

The spills are removed with the receipts of the run once its manifest is written
(beam_jobs.manifest). A resumed run keeps every task's spill and every shard whose receipt has
the same key: a bucket's key is a hash of B, b and the keys of every task, so it is kept only
over the same spills.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import logging
import struct
import tempfile
from array import array
from typing import NamedTuple

import apache_beam as beam
import numpy as np
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils.shared import Shared

from tokfx.formats.documents import Document
from tokfx.formats.shards.megatron import dtype_for_vocab
from beam_jobs.files import create, open_raw
from beam_jobs.receipts import Receipts, ShardReceipt, SpillReceipt
from beam_jobs.shard_files import close_shard, open_shard, tokenizer_metadata

SHUFFLE_DIR = "shuffle"
KEY_SPACE = 1 << 64
log = logging.getLogger(__name__)

# A record of a spill: the length of its header, the header (JSON: id, source, text bytes),
# then the ids to the record's end (int32, the machine's byte order: a spill is read back by
# the same run's workers). The keys file: the keys, then the records' ends, uint64 little-endian.
_HEADER_LENGTH = struct.Struct("<I")


def order_key(seed: int, task: int, item: int) -> int:
    """The document's place in the shuffled order: a keyed hash of (task, item)."""
    digest = hashlib.blake2b(struct.pack("<QQ", task, item), digest_size=8, key=seed.to_bytes(8, "little"))
    return int.from_bytes(digest.digest(), "little")


def check_seed(seed: int) -> None:
    if not 0 <= seed < KEY_SPACE:
        raise ValueError(f"--shuffle-seed must be from 0 to 2**64-1, got {seed}")


def shuffled_name(bucket: int) -> str:
    return f"shuffled-{bucket:05d}"


def _spill_path(output_dir: str, task: int, suffix: str) -> str:
    return FileSystems.join(output_dir, SHUFFLE_DIR, f"spill-{task:05d}{suffix}")


class Spill:
    """A task's documents on their way to the shuffled shards (stage 1 of the module's doc):
    `add` them in input order, `close` for the spill's receipt. Same interface as the task's
    own shards (beam_jobs.encode), so the encoding loop is one."""

    parts = 0  # what the task's receipt counts: 1 once the spill is written

    def __init__(self, output_dir: str, task: int, key: str, seed: int, vocab_size: int):
        self.output_dir, self.task, self.key, self.seed = output_dir, task, key, seed
        self.itemsize = array(dtype_for_vocab(vocab_size)).itemsize
        self.local = tempfile.TemporaryFile()
        # 16 bytes a document: its key and its record's length (the records follow each other).
        self.keys, self.lengths = array("Q"), array("Q")
        self.tokens = 0

    def add(self, doc: Document, ids: array, text_bytes: int, items: int) -> None:
        header = json.dumps([doc.id, doc.source, text_bytes]).encode()
        record = _HEADER_LENGTH.pack(len(header)) + header + ids.tobytes()
        self.keys.append(order_key(self.seed, self.task, items))
        self.lengths.append(len(record))
        self.local.write(record)
        self.tokens += len(ids)

    def close(self, items: int) -> SpillReceipt:
        """Copy the records in key order into the output's shuffle/ (temporary names, renamed
        once complete)."""
        keys, lengths = np.frombuffer(self.keys, np.uint64), np.frombuffer(self.lengths, np.uint64)
        order = np.argsort(keys, kind="stable")  # a tie stays in the task's order
        starts = np.cumsum(lengths) - lengths
        files, sizes = {}, {}
        for suffix, chunks in ((".records", self._records(starts[order], lengths[order])),
                               (".keys", (keys[order].astype("<u8").tobytes(),
                                          np.cumsum(lengths[order]).astype("<u8").tobytes()))):
            path = _spill_path(self.output_dir, self.task, suffix)
            temporary = FileSystems.join(FileSystems.split(path)[0], "." + FileSystems.split(path)[1] + ".tmp")
            digest, size = hashlib.sha256(), 0
            with create(temporary) as out:
                for chunk in chunks:
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
            FileSystems.rename([temporary], [path])
            relative = f"{SHUFFLE_DIR}/{FileSystems.split(path)[1]}"
            files[relative], sizes[relative] = digest.hexdigest(), size
        self.parts = 1
        return SpillReceipt(self.task, self.key, files, sizes, len(keys), self.tokens, self.tokens * self.itemsize)

    def _records(self, starts, lengths):
        for start, length in zip(starts.tolist(), lengths.tolist()):
            self.local.seek(start)
            yield self.local.read(length)

    def abort(self) -> None:
        self.local.close()


class _Keys:
    """A keys file read as a sequence (for bisect): a few reads of 8 bytes, not the file."""

    def __init__(self, file, count: int):
        self.file, self.count = file, count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i: int) -> int:
        return self.slice(i, i + 1)[0]

    def slice(self, first: int, end: int) -> list[int]:
        """Entries first to end (the offsets follow the keys: entry count + i is the i-th
        record's end)."""
        self.file.seek(8 * first)
        return np.frombuffer(self.file.read(8 * (end - first)), "<u8").tolist()


def read_bucket(output_dir: str, spill: SpillReceipt, low: int, high: int) -> list[tuple[int, memoryview]]:
    """The spill's records whose key is in [low, high), with their keys, in key order: one read
    of the records file, the records views into it (parsed one at a time as they are written)."""
    with open_raw(_spill_path(output_dir, spill.task, ".keys")) as file:
        keys = _Keys(file, spill.documents)
        first, end = bisect.bisect_left(keys, low), bisect.bisect_left(keys, high)
        found = keys.slice(first, end)
        # The end of the record before the first (0 for the first record), then each one's end.
        ends = ([0] if first == 0 else []) + keys.slice(spill.documents + max(first - 1, 0), spill.documents + end)
    with open_raw(_spill_path(output_dir, spill.task, ".records")) as file:
        file.seek(ends[0])
        data = memoryview(file.read(ends[-1] - ends[0]))
    return [(key, data[ends[i] - ends[0]:ends[i + 1] - ends[0]]) for i, key in enumerate(found)]


def parse_record(record: memoryview) -> tuple[str, str, int, array]:
    """A spill record -> (id, source, text bytes, ids)."""
    (length,) = _HEADER_LENGTH.unpack_from(record)
    start = _HEADER_LENGTH.size
    doc_id, source, text_bytes = json.loads(bytes(record[start:start + length]))
    ids = array("i")
    ids.frombytes(record[start + length:])
    return doc_id, source, text_bytes, ids


class Bucket(NamedTuple):
    index: int
    count: int  # B, the number of buckets

    def key_range(self) -> tuple[int, int]:
        return self.index * KEY_SPACE // self.count, (self.index + 1) * KEY_SPACE // self.count


def buckets(spills: list[SpillReceipt], shard_size: int) -> list[Bucket]:
    """The buckets of the corpus: one shard of about `shard_size` bytes of ids each."""
    count = max(1, -(-sum(s.token_bytes for s in spills) // shard_size))
    return [Bucket(b, count) for b in range(count)]


def bucket_key(bucket: Bucket, spills: list[SpillReceipt]) -> str:
    data = json.dumps([bucket.index, bucket.count, [s.key for s in sorted(spills)]])
    return hashlib.sha256(data.encode()).hexdigest()


class _WriteBucket(beam.DoFn):
    def __init__(self, shared: Shared, settings):
        self.shared, self.settings = shared, settings
        self.written = Metrics.counter("tokfx", "documents_written")
        self.kept = Metrics.counter("tokfx", "shards_kept")

    def setup(self):
        self.receipts = Receipts(self.settings.output_dir)

    def process(self, bucket: Bucket, spills: list[SpillReceipt], tokenizer_file):
        key = bucket_key(bucket, spills)
        receipt = self.receipts.kept(ShardReceipt, shuffled_name(bucket.index), key)
        if receipt is not None:
            self.kept.inc()
        else:
            receipt = self._write(bucket, key, spills, tokenizer_file)
        if receipt is not None:
            yield receipt

    def _write(self, bucket: Bucket, key: str, spills: list[SpillReceipt], tokenizer_file) -> ShardReceipt | None:
        s = self.settings
        low, high = bucket.key_range()
        documents = [doc for spill in sorted(spills) for doc in read_bucket(s.output_dir, spill, low, high)]
        documents.sort(key=lambda doc: doc[0])  # stable: a tie stays in task order
        if not documents:
            return None  # an empty bucket (a corpus of few documents) writes no shard
        tokenizer = self.shared.acquire(tokenizer_file.load, tag=tokenizer_file.hash)
        writer = open_shard(s.output_dir, shuffled_name(bucket.index), tokenizer.vocab_size,
                            tokenizer_metadata(tokenizer, tokenizer_file, s.config_json), (), s.formats)
        try:
            for _, record in documents:
                doc_id, source, text_bytes, ids = parse_record(record)
                writer.add(doc_id, ids, source, text_bytes)
            receipt = close_shard(writer, s.output_dir, bucket.index, 0, key, 0)
        except BaseException:
            writer.abort()
            raise
        self.receipts.write(receipt)
        self.written.inc(receipt.documents)
        if s.progress:
            log.info("wrote %s of %s shuffled shards: %s documents, %s tokens", f"{bucket.index + 1:,}",
                     f"{bucket.count:,}", f"{receipt.documents:,}", f"{receipt.tokens:,}")
        return receipt


class WriteShuffled(beam.PTransform):
    """SpillReceipts (one per read task) -> the ShardReceipts of the shuffled shards.
    `settings`: the encoding pass's (beam_jobs.encode.EncodeSettings)."""

    def __init__(self, tokenizer_file, settings):
        super().__init__()
        self.tokenizer_file, self.settings = tokenizer_file, settings

    def expand(self, spills):
        every = spills | "AllSpills" >> beam.combiners.ToList()
        return (every
                | "Buckets" >> beam.FlatMap(buckets, self.settings.shard_size)
                | "SpreadBuckets" >> beam.Reshuffle()
                | "WriteBucket" >> beam.ParDo(_WriteBucket(Shared(), self.settings),
                                              beam.pvalue.AsSingleton(every),
                                              beam.pvalue.AsSingleton(self.tokenizer_file)))
