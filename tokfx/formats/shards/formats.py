"""The shard formats, by the name `--format` gives them: each one's files (the shard's name plus
these suffixes), its writer and its reader.

A shard is written in every chosen format at once (tokfx.formats.shards.writer), one row group
of documents at a time: a writer is made by `open_writer(open_file, name, vocab_size, metadata,
kept)` and takes `write_group(doc_ids, flat, lengths, sources, fields)`, then `close()`; the kept
fields (--keep-fields: `kept`, their values `fields`) are Parquet columns and MDS columns, which the
other formats, ids only, leave out. `tokfx shards` reads a
shard back in whichever formats its files are in: `counts(prefix)` gives (documents, tokens),
`document(prefix, row)` a document's ids (`prefix`: the shard's path without a suffix).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tokfx.formats.readers.kept_fields import KeptField
from tokfx.formats.shards.datatrove_ds import DS, INDEX, DatatroveWriter, datatrove_counts, datatrove_document
from tokfx.formats.shards.files import Opener
from tokfx.formats.shards.mds import MDS, MdsWriter, mds_counts, mds_document
from tokfx.formats.shards.megatron import MegatronWriter, megatron_counts, megatron_document
from tokfx.formats.shards.npy import OFFSETS, TOKENS, NumpyWriter, numpy_counts, numpy_document
from tokfx.formats.shards.parquet import ParquetShardWriter, parquet_counts, parquet_document


@dataclass(frozen=True)
class ShardFormat:
    name: str
    suffixes: tuple[str, ...]  # the last one names the file that holds the counts
    open_writer: Callable[[Opener, str, int, Mapping[str, str], Sequence[KeptField]], object]
    counts: Callable[[str], tuple[int, int]]
    document: Callable[[str, int], list[int]]
    holds_ids: bool = False  # the documents' ids and sources are in its files too


FORMATS = {format.name: format for format in (
    ShardFormat("parquet", (".parquet",),
                lambda open_file, name, vocab_size, metadata, kept:
                    ParquetShardWriter(open_file(f"{name}.parquet"), metadata, kept),
                parquet_counts, parquet_document, holds_ids=True),
    ShardFormat("megatron", (".bin", ".idx"),
                lambda open_file, name, vocab_size, metadata, kept: MegatronWriter(open_file, name, vocab_size),
                megatron_counts, megatron_document),
    ShardFormat("numpy", (TOKENS, OFFSETS),
                lambda open_file, name, vocab_size, metadata, kept: NumpyWriter(open_file, name, vocab_size),
                numpy_counts, numpy_document),
    ShardFormat("datatrove", (DS, INDEX),
                lambda open_file, name, vocab_size, metadata, kept: DatatroveWriter(open_file, name, vocab_size),
                datatrove_counts, datatrove_document),
    ShardFormat("mds", (MDS,),
                lambda open_file, name, vocab_size, metadata, kept: MdsWriter(open_file, name, vocab_size, kept),
                mds_counts, mds_document),
)}
DEFAULT_FORMATS = ("parquet", "megatron")


def chosen_formats(given: list[str] | None) -> tuple[str, ...]:
    """The formats of `--format` (repeatable, each a name or a comma list; None: the default),
    in FORMATS' order whatever the order given, so the same choice is the same run."""
    if given is None:
        return DEFAULT_FORMATS
    names = {name.strip() for value in given for name in value.split(",")}
    unknown = sorted(names - set(FORMATS))
    if unknown:
        raise ValueError(f"--format {', '.join(map(repr, unknown))}: not a shard format (choose from"
                         f" {', '.join(FORMATS)})")
    return tuple(name for name in FORMATS if name in names)


def formats_of(files, name: str) -> list[ShardFormat]:
    """The formats whose every file a shard `name` has among `files` (names or paths)."""
    found = {str(file).rsplit("/", 1)[-1] for file in files}
    return [f for f in FORMATS.values() if all(f"{name}{suffix}" in found for suffix in f.suffixes)]
