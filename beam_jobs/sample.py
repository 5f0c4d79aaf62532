"""--train-sample: which read tasks of the plan (beam_jobs.plan) the counting pass of `tokfx run`
reads, when the tokenizer is trained on a sample of the corpus. Every task is still encoded.

Whole read tasks, not documents chosen by a hash of their id: what a sample is for is not to
read the corpus twice, and a document can only be hashed once it has been read (and
decompressed and parsed, most of the cost of a pass), so a sample of documents would save the
counting only. A sample of tasks reads nothing else. The tasks are taken in the order of a hash
of their file and part (not the plan's order, which would be the first files), so the sample
spreads over the corpus and does not move when other files are added to it; then as many as it
takes to reach the sample's size. A task's size is its file's size as stored (compressed, for
a .zst or .gz), shared among the file's tasks by their parts (bytes of a .txt, row groups of a
.parquet). The sample is as fine as the tasks: a compressed JSON-lines file is one task, a .txt
or .parquet file is cut at --task-bytes.
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence

from beam_jobs.plan import ReadTask


def task_sizes(tasks: Sequence[ReadTask]) -> list[int]:
    """Each task's share of its file's stored bytes."""
    units: dict[str, int] = {}
    for task in tasks:
        if task.part is not None:
            units[task.path] = units.get(task.path, 0) + task.part[1] - task.part[0]
    return [task.size if task.part is None or not units[task.path]
            else task.size * (task.part[1] - task.part[0]) // units[task.path] for task in tasks]


def _rank(task: ReadTask) -> bytes:
    return hashlib.sha256(repr((task.path, task.part)).encode()).digest()


def sample_tasks(tasks: Sequence[ReadTask], sample: tuple[str, float]) -> tuple[ReadTask, ...]:
    """The tasks a training sample reads, in the plan's order: in the order of their hash, as
    many as it takes for their sizes to reach `sample` (("share", 0.1): a tenth of the corpus's
    stored bytes; ("bytes", n): n bytes), at least one; all of them if the corpus is smaller."""
    sizes = task_sizes(tasks)
    kind, value = sample
    target = value * sum(sizes) if kind == "share" else value
    chosen, total = set(), 0
    for index in sorted(range(len(tasks)), key=lambda i: _rank(tasks[i])):
        if chosen and total >= target:
            break
        chosen.add(index)
        total += sizes[index]
    return tuple(task for index, task in enumerate(tasks) if index in chosen)


def sample_record(tasks: Sequence[ReadTask], chosen: Sequence[ReadTask], sample: tuple[str, float]) -> dict:
    """What the tokenizer was trained on, for the config (and so the manifest): the sample asked
    for, the read tasks read (their indices name the shards: shard-TASK-PART), their bytes."""
    sizes = dict(zip(tasks, task_sizes(tasks)))
    return {"requested": {sample[0]: sample[1]}, "read_tasks": [task.index for task in chosen],
            "bytes": sum(sizes[task] for task in chosen), "corpus_bytes": sum(sizes.values())}
