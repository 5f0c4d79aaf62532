"""A shard's files in an output directory, as both the encoding pass (a task's own shards,
beam_jobs.encode) and the shuffled write (beam_jobs.shuffle) make them: written under
temporary names in shards/, renamed once complete, then receipted (beam_jobs.receipts)."""
from __future__ import annotations

import json
from collections.abc import Sequence

from apache_beam.io.filesystems import FileSystems

from tokfx.formats.readers.kept_fields import KeptField
from tokfx.formats.shards.writer import ShardWriter
from beam_jobs.files import create
from beam_jobs.receipts import SHARDS_DIR, ShardReceipt


def tokenizer_metadata(tokenizer, tokenizer_file, config_json: str) -> dict[str, str]:
    """What every Parquet shard's footer records of the run."""
    return {"tokfx.tokenizer_hash": tokenizer_file.hash,
            "tokfx.alphabet": json.dumps(tokenizer.alphabet.to_dict()),
            "tokfx.config": config_json}


def _temporary(output_dir: str, name: str) -> str:
    return FileSystems.join(output_dir, SHARDS_DIR, f".{name}.tmp")


def open_shard(output_dir: str, name: str, vocab_size: int, metadata: dict, kept: Sequence[KeptField],
               formats: Sequence[str]) -> ShardWriter:
    return ShardWriter(lambda file: create(_temporary(output_dir, file)), name, vocab_size, metadata,
                       kept=kept, formats=formats)


def close_shard(writer: ShardWriter, output_dir: str, task: int, part: int, key: str,
                items_end: int) -> ShardReceipt:
    """Finish the shard's files, put them in place and give their receipt (not yet written)."""
    info = writer.close()
    names = sorted(info.files)
    FileSystems.rename([_temporary(output_dir, name) for name in names],
                       [FileSystems.join(output_dir, SHARDS_DIR, name) for name in names])
    return ShardReceipt(writer.name, task, part, key, items_end,
                        {f"{SHARDS_DIR}/{n}": info.files[n] for n in names},
                        {f"{SHARDS_DIR}/{n}": info.sizes[n] for n in names},
                        info.documents, info.empty_documents, info.tokens, info.bytes)
