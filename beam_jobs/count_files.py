"""Count files: how the counting pass hands its CountTables on, through the filesystem.

A local runner keeps everything that crosses a shuffle in the launcher's memory, so passing the
counted tables through the runner cost the launcher some 200 bytes per pre-token (0.6 GB at 1 GB
of English). The tables go to files under the run's work directory instead (the output
directory, which every worker shares), and only their paths travel through the runner.

A count file holds one table cut into parts by `CountTable.split_packed`, each part readable alone:

    magic b"TFXCOUNT", parts (uint32)
    per part: entries, key bytes (two uint64)
    per part: its keys concatenated, their end offsets (int64), their counts (int64)

in the machine's byte order (little-endian wherever tokfx builds). Files are written once under a unique name and never changed; a file that
does not parse is an error naming it.
"""
from __future__ import annotations

import struct
import uuid
from array import array

from apache_beam.io.filesystems import FileSystems

from tokfx._count_table import CountTable
from beam_jobs.files import create, open_raw

MAGIC = b"TFXCOUNT"
_HEADER = struct.Struct("<8sI")
_PART = struct.Struct("<QQ")
# The most keys a part's sum makes room for before it is read (8 MB of slots).
SUM_ROOM = 1 << 20


def new_count_file(work_dir: str, kind: str) -> str:
    """A fresh name for a count file of `kind` ("pretoken" or "line") in `work_dir`."""
    return FileSystems.join(work_dir, f"{kind}-{uuid.uuid4().hex}.counts")


def write_count_file(destination: str, parts: list[tuple[bytes, array, array]]) -> None:
    """`parts`: each as CountTable.packed gives it (CountTable.split_packed: a table's parts)."""
    with create(destination) as f:
        f.write(_HEADER.pack(MAGIC, len(parts)))
        for keys, ends, _ in parts:
            f.write(_PART.pack(len(ends), len(keys)))
        for keys, ends, counts in parts:
            f.write(keys)
            f.write(ends.tobytes())
            f.write(counts.tobytes())


def sum_count_parts(paths: list[str], part: int) -> CountTable:
    """Part `part` of each count file at `paths`, summed: each file's part is added as it is
    read, without a table of it in between. The table has room from the start for the first
    file's keys times the number of files, at most SUM_ROOM: growing it as the keys came took a
    third of the adding time (bench/README.md, "The reducer's join")."""
    summed = CountTable()
    for k, path in enumerate(paths):
        keys, ends, counts = read_packed_part(path, part)
        if k == 0:
            summed.reserve(min(len(ends) * len(paths), SUM_ROOM))
        summed.add_packed(keys, ends, counts)
    return summed


def read_packed_part(path: str, part: int) -> tuple[bytes, memoryview, memoryview]:
    """Part `part` of the count file at `path` as CountTable.packed gives it."""
    with open_raw(path) as f:
        header = f.read(_HEADER.size)
        if len(header) != _HEADER.size or _HEADER.unpack(header)[0] != MAGIC:
            raise ValueError(f"{path}: not a tokfx count file")
        parts = _HEADER.unpack(header)[1]
        if not 0 <= part < parts:
            raise ValueError(f"{path}: holds {parts} parts, not part {part}")
        index = f.read(_PART.size * parts)
        if len(index) != _PART.size * parts:
            raise ValueError(f"{path}: truncated count file")
        sizes = [_PART.unpack_from(index, _PART.size * k) for k in range(parts)]
        f.seek(_HEADER.size + len(index) + sum(16 * entries + key_bytes for entries, key_bytes in sizes[:part]))
        entries, key_bytes = sizes[part]
        keys, ends, counts = f.read(key_bytes), f.read(8 * entries), f.read(8 * entries)
        if len(keys) != key_bytes or len(ends) != 8 * entries or len(counts) != 8 * entries:
            raise ValueError(f"{path}: truncated count file")
    return keys, memoryview(ends).cast("q"), memoryview(counts).cast("q")
