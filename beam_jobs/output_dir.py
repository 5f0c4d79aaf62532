"""The output directory of `tokfx run` and `tokfx encode --output-dir`: the names that are ours
in it, the lock that keeps a second run out, and the settings that decide whether a run may
resume there.

`settings.json` records the command and the config of the run that writes the directory. A run
with the same settings resumes (beam_jobs.receipts keep what is done); a run with other settings
is refused unless `--overwrite`, which clears what the earlier run wrote (and so starts afresh
with the same settings too), or unless the earlier run wrote no shard: a run that failed before
its first (a wrong --text-field, an empty input) leaves nothing that blocks the corrected
command. The directory is not created, nor anything removed, before the run has checked its
settings and planned its reads, so a refused or mistyped run leaves no directory and never costs
a previous output. The manifest, which marks the output complete, is removed before a run
writes anything and written again last (with the rejected records and the eval report, which a
resumed run writes again too).

The lock (`.tokfx.lock`: pid, host, start time) is taken by an exclusive create on a local
disk; on an object store (gs://, s3://), which has no exclusive create, it is checked, then
written, so two runs started in the same instant may both pass there.
"""
from __future__ import annotations

import errno
import json
import os
import socket
import time
from contextlib import contextmanager

from apache_beam.io.filesystems import FileSystems

from tokfx.cli.files import check_output_dir
from tokfx.formats.shards.manifest import MANIFEST_JSON
from beam_jobs.files import read_json, write_bytes, write_json
from beam_jobs.manifest import REJECTED_DIR
from beam_jobs.receipts import RECEIPTS_DIR, SHARDS_DIR
from beam_jobs.shuffle import SHUFFLE_DIR

TOKENIZER_DIR = "tokenizer"
EVAL_DIR = "eval"
# The counting pass's files (beam_jobs.count_files): beam_jobs.pipelines.run removes them before
# and after the pipeline.
COUNTING_DIR = "counting"
# The workers' reports of the run's progress (beam_jobs.progress), removed as counting/ is.
PROGRESS_DIR = "progress"
# A given tokenizer (tokfx encode, tokfx run --tokenizer), for the workers to read, for the
# length of the run (beam_jobs.pipelines removes it as it does counting/).
GIVEN_TOKENIZER = "tokenizer-file.pickle"
SETTINGS_JSON = "settings.json"
LOCK = ".tokfx.lock"
# A lock file that does not parse is another run's, being written, for this long; then torn.
TORN_LOCK_SECONDS = 10

# What each command writes into its output directory (tokfx encode keeps tokenizer/: it may be
# the very tokenizer it encodes with).
OURS = {"run": (MANIFEST_JSON, SETTINGS_JSON, TOKENIZER_DIR, SHARDS_DIR, RECEIPTS_DIR, REJECTED_DIR, EVAL_DIR,
                COUNTING_DIR, PROGRESS_DIR, SHUFFLE_DIR, GIVEN_TOKENIZER),
        "encode": (MANIFEST_JSON, SETTINGS_JSON, SHARDS_DIR, RECEIPTS_DIR, REJECTED_DIR, PROGRESS_DIR, SHUFFLE_DIR,
                   GIVEN_TOKENIZER)}


class OutputDir:
    def __init__(self, path: str, command: str):
        self.path, self.command = path, command

    def join(self, *names: str) -> str:
        return FileSystems.join(self.path, *names)

    def _present(self) -> list[str]:
        return [name for name in OURS["run"] if FileSystems.exists(self.join(name))]

    def prepare(self, config: dict, overwrite: bool) -> None:
        """Check that this run may write here (see the module's doc), then clear what it must:
        everything of an earlier run with --overwrite, else what is written last."""
        settings = {"command": self.command, "config": config}
        present = self._present()
        previous = read_json(self.join(SETTINGS_JSON)) if SETTINGS_JSON in present else None
        if previous is not None and previous != settings and not self.holds_shards():
            overwrite = True  # a tokfx run's directory, that failed before its first shard
        if present and previous != settings and not overwrite:
            if previous is None:
                why = f"holds {', '.join(present)} of a run whose settings are unknown"
            else:
                why = f"holds the output of tokfx {previous.get('command')} with other settings"
                changed = sorted(k for k in {**config, **previous.get("config", {})}
                                 if config.get(k) != previous.get("config", {}).get(k))
                if changed:
                    why += f" (changed: {', '.join(changed)})"
            raise ValueError(f"{self.path} {why}: pass --overwrite to replace it, or choose another --output")
        # A resumed run keeps its shards and receipts; what it writes last is written again.
        clear = OURS[self.command] if overwrite or previous != settings else (
            MANIFEST_JSON, REJECTED_DIR, EVAL_DIR)
        for name in clear:
            if FileSystems.exists(self.join(name)):
                FileSystems.delete([self.join(name)])
        write_json(self.join(SETTINGS_JSON), settings)

    def holds_shards(self) -> bool:
        """Whether a run has finished a shard here (or written the manifest): what a run with
        other settings may not clear without --overwrite."""
        return (FileSystems.exists(self.join(MANIFEST_JSON))
                or bool(FileSystems.match([self.join(RECEIPTS_DIR, "shard-*.json")])[0].metadata_list))

    def check(self) -> None:
        """Refuse a local path that is a file or cannot be created (before anything is read)."""
        if FileSystems.get_scheme(self.path) is None:
            check_output_dir(self.path, "--output-dir" if self.command == "encode" else "--output")

    @contextmanager
    def lock(self):
        """Hold the directory for this run (creating it); refuse if a live run holds it."""
        path = self.join(LOCK)
        owner = {"pid": os.getpid(), "host": socket.gethostname(), "started": round(time.time())}
        data = (json.dumps(owner) + "\n").encode()
        while not self._create_exclusive(path, data):
            holder = read_json(path)
            if holder is None and self._age(path) < TORN_LOCK_SECONDS:
                holder = {"pid": "?", "host": "?", "started": time.time()}  # being written now
            if holder is not None and not self._stale(holder):
                since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder.get("started", 0)))
                raise ValueError(f"{self.path} is in use by another tokfx run (pid {holder.get('pid')}"
                                 f" on {holder.get('host')}, since {since}); if that run is gone,"
                                 f" remove {path}")
            FileSystems.delete([path])  # a stale or torn lock
        try:
            yield
        finally:
            if FileSystems.exists(path):
                FileSystems.delete([path])

    @staticmethod
    def _age(path: str) -> float:
        matched = FileSystems.match([path])[0].metadata_list
        return time.time() - matched[0].last_updated_in_seconds if matched else float("inf")

    @staticmethod
    def _stale(holder: dict) -> bool:
        """A lock left by a run that died: its process is gone from this host."""
        if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
            return False  # another host's process cannot be checked from here
        try:
            os.kill(holder["pid"], 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    @staticmethod
    def _create_exclusive(path: str, data: bytes) -> bool:
        if FileSystems.get_filesystem(path).scheme() != "file":
            if FileSystems.exists(path):
                return False
            write_bytes(path, data)
            return True
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as exc:
            if exc.errno == errno.EEXIST:
                return False
            raise
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return True
