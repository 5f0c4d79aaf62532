"""Progress of the whole run, on the launcher's terminal, every `EVERY` seconds whatever the size
of the read tasks: each pass over the corpus (counting, encoding) in documents, stored bytes of
the read plan and MB/s, and the time left of the run.

The workers of a runner share nothing with the launcher but the filesystem of the output (they
are other processes, on a cluster other machines): each DoFn instance of a pass writes what it
has read so far to a small JSON file of its own in the run's progress folder (`PassReporter`),
at most every EVERY / 5 seconds and at the end of each bundle; a thread of the launcher
(`RunProgress`) sums the files and prints the line. The folder is removed when the run ends.
Nothing here touches what the run writes (its outputs are the same without it).

A task's share of the plan's bytes is what its reader has read of it (beam_jobs.read.TaskReader:
a Parquet part moves only when done). Tasks kept from an earlier run, and the part of a task
that is read again only to skip what its kept shards hold, count as done but not in the rate,
so the estimate after a resume is the time the rest takes, not the time skipping took.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import uuid

from apache_beam.io.filesystems import FileSystems

from beam_jobs.files import read_json, write_bytes
from beam_jobs.plan import ReadPlan
from tokfx.formats.readers import reader_for

log = logging.getLogger(__name__)

# Seconds between two lines of the run's progress (a test makes it shorter; the workers get the
# launcher's value with their settings).
EVERY = 10.0
COUNTING, ENCODING = "counting", "encoding"


class PassReporter:
    """What one DoFn instance has read of a pass: documents, and each task's share read (and the
    share of it that was kept from an earlier run), written to its own file in `directory`.
    `start` a task with its TaskReader, count its `document`s, `end` it."""

    def __init__(self, directory: str, name: str, every: float):
        self.path = FileSystems.join(directory, f"{name}-{uuid.uuid4().hex}.json")
        self.every = every
        self.started = None  # when its first task started (the instance may wait for one)
        self.documents = 0
        self.tasks: dict[int, list[float]] = {}  # task index -> [share read, share kept]
        self._task, self._reader, self._written = None, None, 0.0

    def start(self, task: int, reader) -> None:
        first = self.started is None
        self.started = self.started or time.time()
        self._task, self._reader = task, reader
        self.tasks[task] = [0.0, 0.0]
        if first:  # the pass has begun (nothing read yet, so no rate from a first document)
            self.write()

    def keep(self, share: float) -> None:
        """The share of the current task read so far was done by an earlier run."""
        self.tasks[self._task][1] = share

    def document(self, count: int = 1) -> None:
        """`count` more documents read (counting reads many at once: Texts)."""
        self.documents += count
        if time.monotonic() - self._written >= self.every / 5:
            # Known only where the reader knows it (not inside a Parquet part).
            self.tasks[self._task][0] = self._reader.done() or 0.0
            self.write()

    def end(self, kept: bool = False) -> None:
        """The current task is read (`kept`: all of it done by an earlier run)."""
        self.tasks[self._task] = [1.0, 1.0 if kept else self.tasks[self._task][1]]
        if time.monotonic() - self._written >= self.every / 5:
            self.write()

    def write(self) -> None:
        if self.started is None:  # no task yet: nothing to say
            return
        self._written = time.monotonic()
        try:
            write_bytes(self.path, json.dumps({"started": self.started, "updated": time.time(),
                                               "documents": self.documents, "tasks": self.tasks}).encode())
        except OSError as exc:  # a report lost is a line less, never a failed task
            log.warning("progress report not written (%s)", exc)


def task_bytes(plan: ReadPlan) -> list[int]:
    """About how many stored bytes each task of the plan reads: a .txt part its byte range, a
    part of a Parquet file its share of the file (the parts are cut to about equal bytes), a
    whole file its size."""
    parts: dict[str, int] = {}
    for task in plan.tasks:
        parts[task.path] = parts.get(task.path, 0) + 1
    return [task.part[1] - task.part[0] if task.part and reader_for(task.path).name == "text"
            else task.size // parts[task.path] for task in plan.tasks]


def _tasks(count: int) -> str:
    return f"{count:,} task{'s' if count != 1 else ''}"


def _about(seconds: float) -> str:
    return ("about " if seconds >= 1 else "") + _duration(seconds)


def _duration(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:.0f} min"


class _Pass:
    """One pass's reports summed."""

    def __init__(self, reports: list[dict], sizes: list[int]):
        self.started = min((r["started"] for r in reports), default=None)
        self.updated = max((r["updated"] for r in reports), default=None)  # the latest report's time
        self.documents = sum(r["documents"] for r in reports)
        shares: dict[int, list[float]] = {}
        for report in reports:
            for task, (read, kept) in report["tasks"].items():
                best = shares.setdefault(int(task), [0.0, 0.0])
                best[0], best[1] = max(best[0], read), max(best[1], kept)
        self.tasks_done = sum(read >= 1.0 for read, _ in shares.values())
        self.bytes = sum(sizes[task] * read for task, (read, _) in shares.items())
        self.kept = sum(sizes[task] * kept for task, (_, kept) in shares.items())


class RunProgress:
    """The launcher's thread that prints the run's progress (a context manager around running
    the pipeline). `passes`: the passes the run makes over the plan, in order."""

    def __init__(self, directory: str, passes: list[str], plan: ReadPlan, every: float | None = None):
        self.directory, self.passes, self.every = directory, passes, every or EVERY
        self.sizes = task_bytes(plan)
        self.total = sum(self.sizes)
        self._stop = threading.Event()
        self._finished: set[str] = set()
        self._announced: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="tokfx-progress", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, exc_type, *exc):
        self._stop.set()
        self._thread.join()
        if exc_type is None:  # each pass's last line (its end), however short the run
            for line in self.lines():
                log.info("%s", line)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                lines = self.lines()
            except Exception as exc:  # noqa: BLE001 (progress never stops the run)
                lines = [f"progress unknown ({exc})"]
            for line in lines:
                log.info("%s", line)

    def _reports(self) -> dict[str, list[dict]]:
        found = {name: [] for name in self.passes}
        matched = FileSystems.match([FileSystems.join(self.directory, "*.json")])[0].metadata_list
        for metadata in matched:
            name = FileSystems.split(metadata.path)[1].split("-")[0]
            report = read_json(metadata.path)  # None: being written now; the next line has it
            if name in found and report is not None:
                found[name].append(report)
        return found

    def lines(self) -> list[str]:
        """What to say now: the end of each pass that has ended since the last call,
        then the progress of the pass under way (if one is)."""
        reports = self._reports()
        started = [name for name in self.passes if reports[name]] or self.passes[:1]
        lines = []
        for name in started:
            if name in self._finished:
                continue
            done = _Pass(reports[name], self.sizes)
            if done.started is None:
                if name not in self._announced:  # Beam starting its workers: said once
                    self._announced.add(name)
                    lines.append(f"{name}: starting ({_tasks(len(self.sizes))}, {self.total / 1e6:,.1f} MB)")
                continue
            # As of the latest report (at most every / 5 seconds old).
            seconds = max(done.updated - done.started, 1e-9)
            rate = (done.bytes - done.kept) / seconds
            kept = f", {done.kept / 1e6:,.1f} MB kept from an earlier run" if done.kept else ""
            if done.tasks_done == len(self.sizes):
                self._finished.add(name)
                lines.append(f"{name} done: {done.documents:,} documents, {self.total / 1e6:,.1f} MB{kept},"
                             f" in {_duration(seconds)} ({rate / 1e6:,.1f} MB/s)")
                continue
            line = (f"{name}: {done.bytes / 1e6:,.1f} of {self.total / 1e6:,.1f} MB"
                    f" ({100 * done.bytes / max(self.total, 1):.0f} %), {done.documents:,} documents,"
                    f" {done.tasks_done:,} of {len(self.sizes):,} tasks, {rate / 1e6:,.1f} MB/s{kept}")
            if rate > 0:
                left = (self.total - done.bytes) / rate
                later = len(self.passes) - 1 - self.passes.index(name)
                if later:
                    # A later pass reads the whole plan again, and encoding (which writes the
                    # shards too) is slower than counting: the run takes at least this long.
                    run = left + later * self.total / rate
                    least = f"over {_duration(run)}" if run >= 1 else f"over {run:.1f} s"  # not "over under a second"
                    line += f"; {_about(left)} left of {name}, {least} of the run (training not included)"
                else:
                    line += f"; {_about(left)} left of the run"
            lines.append(line)
        return lines
