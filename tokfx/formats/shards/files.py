"""Where a shard's files go: an `Opener` gives a new binary file open for writing by its name,
so the writers do not care whether it is a local folder or a Beam filesystem. `HashingFile`
hashes what passes through it, so no file is read back to learn its sha256."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

Opener = Callable[[str], BinaryIO]


def local_opener(directory: str | os.PathLike) -> Opener:
    directory = Path(directory)
    return lambda name: open(directory / name, "wb")


class HashingFile:
    """A write-only file that passes everything on to `file` and keeps its sha256 and size (what
    pyarrow's ParquetWriter needs of a Python file: write, tell, flush, close, closed)."""

    def __init__(self, file: BinaryIO):
        self.file, self.digest, self.size, self.closed = file, hashlib.sha256(), 0, False

    def write(self, data) -> int:
        self.digest.update(data)
        self.size += len(data)
        self.file.write(data)
        return len(data)

    def tell(self) -> int:
        return self.size

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        if not self.closed:
            self.file.close()
            self.closed = True

    def __enter__(self) -> "HashingFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
