"""The read plan: the file patterns -> the read tasks of the corpus, computed once, in the
launcher, before the pipeline is built.

Both passes over the corpus (counting for training, then encoding into shards) read the same
tasks, and a shard is named after its task, so the plan must come out the same on every run:
files in sorted order, each cut into parts by its reader (a .txt at its special tokens, a
Parquet file by row groups) of about `task_bytes` each; any other file is one task (a
compressed stream cannot be split). A task records its file's size, so that a receipt written
for a file that has changed since is not taken for this one's (beam_jobs.receipts).

The plan also fixes the type of each kept field (--keep-fields) for the whole run, from the
files in the same order (tokfx.formats.readers.kept_fields), so that every shard has the same
columns.
"""
from __future__ import annotations

import dataclasses
import os
from typing import NamedTuple

from apache_beam.io.filesystems import FileSystems

from tokfx.formats.documents import Rejection
from tokfx.formats.readers import UNKNOWN, ReadOptions, reader_for
from tokfx.formats.readers.kept_fields import SAMPLE_RECORDS, KeptField
from tokfx.formats.readers.policy import ErrorPolicy
from tokfx.formats.readers.reader import ReadRange
from beam_jobs.files import open_raw


class ReadTask(NamedTuple):
    """What one worker reads: the `index`-th task of the plan, a file (with its size) and the
    part of it (None: all of it)."""
    index: int
    path: str
    size: int
    part: ReadRange | None

    def describe(self) -> str:
        return self.path + (f" part {self.part[0]:,}-{self.part[1]:,}" if self.part else "")


class ReadPlan(NamedTuple):
    tasks: tuple[ReadTask, ...]
    rejected: tuple[Rejection, ...]  # what the patterns matched that cannot be read (skip)
    options: ReadOptions  # what every pass reads the tasks with (the kept fields' types set)


def _kept_types(paths: list[str], names: tuple[str, ...], options: ReadOptions) -> tuple[KeptField, ...]:
    """The type of each kept field: the first file (in `paths`' order) whose records have it
    tells it. A field no file has is refused (a misspelt name would keep a column of nulls)."""
    found: dict = {}
    for path in paths:
        wanted = tuple(name for name in names if name not in found)
        if not wanted:
            break
        reader = reader_for(path)
        if reader.field_types is None:
            continue
        with open_raw(path) as raw:
            for name, kind in reader.field_types(raw, path, options, wanted).items():
                if isinstance(kind, str):
                    raise ValueError(f"--keep-fields: {path}: field {name!r} is {kind}")
                found[name] = kind
    missing = [repr(name) for name in names if name not in found]
    if missing:
        raise ValueError(f"--keep-fields: no input has a field named {', '.join(missing)} (Parquet"
                         f" columns, and JSON fields in the first {SAMPLE_RECORDS:,} records of each file)")
    return tuple((name, found[name]) for name in names)


def plan_reads(patterns, options: ReadOptions, task_bytes: int, policy: ErrorPolicy,
               keep_fields: tuple[str, ...] = ()) -> ReadPlan:
    """The read tasks of `patterns`, and `options` with the types of `keep_fields`. A pattern
    that matches nothing, or a file no reader reads, is a Rejection under `policy` (fail: raised
    here, before anything runs)."""
    if task_bytes < 1:
        raise ValueError(f"--task-bytes must be at least 1, got {task_bytes}")
    files: dict[str, int] = {}
    rejected = []
    for pattern in patterns:
        matched = [m for result in FileSystems.match([pattern]) for m in result.metadata_list]
        if not matched:
            rejected.append(policy.reject(Rejection(pattern, None, "the pattern matches no file",
                                                    whole_file=True)))
        for m in matched:
            if FileSystems.get_scheme(m.path) is None and os.path.isdir(m.path):
                rejected.append(policy.reject(Rejection(m.path, None, "a directory: give a pattern of its"
                                                        f" files, e.g. --input '{m.path}/*.jsonl.zst'",
                                                        whole_file=True)))
            else:
                files[m.path] = m.size_in_bytes
    if keep_fields:
        options = dataclasses.replace(options, keep=_kept_types(sorted(files), keep_fields, options))
    tasks = []
    for path in sorted(files):
        reader = reader_for(path)
        if reader is UNKNOWN:  # refused before anything runs, or recorded under skip
            rejected.extend(policy.reject(r) for r in reader.read(None, path, options, None))
            continue
        parts = [None]
        if reader.ranges is not None:
            with open_raw(path) as raw:
                parts = reader.ranges(raw, max(1, -(-files[path] // task_bytes)), options)
        tasks += [ReadTask(len(tasks) + k, path, files[path], part) for k, part in enumerate(parts)]
    return ReadPlan(tuple(tasks), tuple(rejected), options)
