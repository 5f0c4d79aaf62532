"""Read and write files in their place on any Beam filesystem (local, gs://, s3://)."""
from __future__ import annotations

import hashlib
import json
import os

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems


def create(destination: str):
    parent = FileSystems.split(destination)[0]
    if parent and not FileSystems.exists(parent):
        try:
            FileSystems.mkdirs(parent)
        except IOError:
            if not FileSystems.exists(parent):  # else another worker made it first
                raise
    # UNCOMPRESSED: Beam would otherwise compress a name ending in .gz behind our back.
    return FileSystems.create(destination, compression_type=CompressionTypes.UNCOMPRESSED)


def publish(local_path: str | os.PathLike, destination: str) -> None:
    """Copy a file written on the worker's local disk to `destination`."""
    with open(local_path, "rb") as src, create(destination) as dst:
        while block := src.read(1 << 20):
            dst.write(block)


def write_bytes(destination: str, data: bytes) -> None:
    with create(destination) as dst:
        dst.write(data)


def open_raw(path: str):
    """A file for reading as stored; tokfx decompresses itself (and detects truncation)."""
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def sha256(path: str) -> str:
    """The sha256 of a file on any Beam filesystem, read as stored."""
    digest = hashlib.sha256()
    with open_raw(path) as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_json(destination: str, data) -> None:
    """The small JSON files of an output directory (receipts, settings): sorted keys, so the
    same data gives the same bytes."""
    write_bytes(destination, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())


def read_json(path: str):
    """A JSON file's data; None if it is missing or does not parse (a file torn by a crash)."""
    try:
        with open_raw(path) as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None
