"""One tokenized output shard, written as its documents arrive, in each of its formats
(tokfx.formats.shards.formats: by default a Parquet file plus Megatron `.bin`/`.idx`) holding the
same documents in the order they were added.

The documents are gathered one row group at a time (`row_group_bytes` of token ids), then
handed to every format's writer at once: one Arrow table and one `.bin` write per row group,
not a write a document. Memory holds one row group and 4 bytes a document for the `.idx`, whatever the size
of the shard. Each file's sha256 is taken as it is written.
"""
from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tokfx.formats.readers.kept_fields import KeptField
from tokfx.formats.shards.files import HashingFile, Opener
from tokfx.formats.shards.formats import DEFAULT_FORMATS, FORMATS
from tokfx.formats.shards.megatron import dtype_for_vocab

# Token ids buffered per Parquet row group (int32: 1 Mi ids). A row group is held whole, its ids
# and then Arrow's encoding of them, at a worker's busiest moment: 8 MiB row groups put a GPT-2
# worker's peak 8 MiB higher (195-199 against 186-190 MiB) for Parquet files 1.5 % smaller and
# read no faster (bench/README, "Per-worker cost").
ROW_GROUP_BYTES = 4 << 20


@dataclass
class ShardInfo:
    """A finished shard: its files' sha256 and sizes (by file name) and what it holds."""
    files: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    documents: int = 0
    empty_documents: int = 0
    tokens: int = 0
    bytes: int = 0  # the documents' text, in UTF-8 bytes


class ShardWriter:
    """The files of `formats` (names of tokfx.formats.shards.formats.FORMATS; by default
    `name.parquet`, `name.bin`, `name.idx`) through `open_file`. `add` documents, then `close()`
    for the ShardInfo. `token_bytes` is the size of the token ids so far, at the shard's dtype
    (what a shard size limit counts: the size of the `.bin`)."""

    def __init__(self, open_file: Opener, name: str, vocab_size: int, metadata: Mapping[str, str],
                 row_group_bytes: int = ROW_GROUP_BYTES, kept: Sequence[KeptField] = (),
                 formats: Sequence[str] = DEFAULT_FORMATS):
        """`kept`: the kept fields (--keep-fields), Parquet columns after the ids."""
        self.name = name
        self.info = ShardInfo()
        self._files: dict[str, HashingFile] = {}
        self._itemsize = array(dtype_for_vocab(vocab_size)).itemsize
        self._group_ids = row_group_bytes // array("i").itemsize
        self._kept = len(kept)
        self._writers = [FORMATS[f].open_writer(lambda file: self._open(open_file, file), name,
                                                vocab_size, metadata, kept) for f in formats]
        self._start_group()

    def _open(self, open_file: Opener, name: str) -> HashingFile:
        self._files[name] = HashingFile(open_file(name))
        return self._files[name]

    def _start_group(self) -> None:
        self._doc_ids: list[str] = []
        self._sources: list[str] = []
        self._lengths = array("i")
        self._flat = array("i")
        self._fields: list[list] = [[] for _ in range(self._kept)]

    def _write_group(self) -> None:
        for writer in self._writers:
            writer.write_group(self._doc_ids, self._flat, self._lengths, self._sources, self._fields)
        self._start_group()

    @property
    def token_bytes(self) -> int:
        return self.info.tokens * self._itemsize

    def add(self, doc_id: str, ids: Sequence[int], source: str, text_bytes: int, fields: Sequence = ()) -> None:
        """One document: its id, its token ids (an array('i') is copied as it is, anything else
        converted id by id), where it came from, the size of its text in UTF-8 bytes, and the
        values of the kept fields (Parquet only)."""
        self._doc_ids.append(doc_id)
        for values, value in zip(self._fields, fields, strict=True):
            values.append(value)
        self._sources.append(source)
        self._lengths.append(len(ids))
        self._flat.extend(ids)
        self.info.documents += 1
        self.info.empty_documents += not ids
        self.info.tokens += len(ids)
        self.info.bytes += text_bytes
        if len(self._flat) >= self._group_ids:
            self._write_group()

    def close(self) -> ShardInfo:
        if self._doc_ids:
            self._write_group()
        for writer in self._writers:
            writer.close()
        for name in sorted(self._files):
            self.info.files[name] = self._files[name].digest.hexdigest()
            self.info.sizes[name] = self._files[name].size
        return self.info

    def abort(self) -> None:
        """Close every file without finishing them (the caller removes them); a format whose
        writer must be closed first (pyarrow's: ParquetShardWriter.abort) has an `abort`."""
        for writer in self._writers:
            if hasattr(writer, "abort"):
                writer.abort()
        for file in self._files.values():
            file.close()
