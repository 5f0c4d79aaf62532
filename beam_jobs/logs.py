"""What a pipeline run writes to the terminal, in the launcher and in the local runner's worker
processes alike: tokfx's progress lines (`tokfx: ...`), and Beam's warnings and errors, but not
Beam's start-up chatter unless `--verbose` is given.

The chatter is a handful of lines that every run printed and that say nothing about the run: an
import-time warning that Google Cloud's apitools is missing, a worker saying it created its log
handler and found no staging directory (nothing is staged locally), and Beam's "Discarding
unparseable args", which tokfx checks itself (an unknown flag is an error naming it).

This module does not import Beam: it must run before Beam is imported, because Beam's
import-time `logging.warning` gives the root logger a handler of its own when it has none. Nor
tokfx: a worker process imports it first, and imports of tokfx it does not need are paid by
every worker (bench/README.md, per-worker cost).
"""
from __future__ import annotations

import logging
import sys

# The start of each chatter line (Beam 2.6x's wording).
_CHATTER = ("apitools not found", "Logging handler created", "No semi_persistent_directory",
            "Discarding unparseable args")


class _DropChatter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_CHATTER)


class _DropBundleError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error processing instruction")


def quiet_bundle_errors() -> None:
    """Beam logs a bundle's error with its traceback where it is raised (apache_beam.runners.common,
    in the launcher or a worker process) and, in a worker, again as it answers the runner
    (sdk_worker's "Error processing instruction ..."), which the launcher's runner then logs as
    the worker's: some 40 lines for one bad record. The launcher reports the error once
    (beam_jobs.main: one line for bad input, the traceback for anything else); the copies are
    left out of the log here (logger filters: neither the terminal nor the worker's log service
    gets them)."""
    logging.getLogger("apache_beam.runners.common").setLevel(logging.CRITICAL)
    logging.getLogger("apache_beam.runners.worker.sdk_worker").addFilter(_DropBundleError())


def show_logs(verbose: bool, quiet: bool) -> None:
    """Set up this process's terminal log (once; a second call changes nothing)."""
    root = logging.getLogger()
    if any(getattr(h, "tokfx", False) for h in root.handlers):
        return
    beams = logging.StreamHandler(sys.stderr)
    beams.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    beams.tokfx = True
    if not verbose:
        beams.addFilter(_DropChatter())
        quiet_bundle_errors()
        # The launcher: Beam's INFO lines (Prism, worker start-up) only with --verbose.
        root.setLevel(logging.WARNING)
    root.addHandler(beams)
    ours = logging.getLogger("beam_jobs")
    lines = logging.StreamHandler(sys.stderr)
    lines.setFormatter(logging.Formatter("tokfx: %(message)s"))
    ours.addHandler(lines)
    ours.setLevel(logging.WARNING if quiet else logging.INFO)
    ours.propagate = False  # not a second time through the root's handler

