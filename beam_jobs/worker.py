"""The local runner's worker process (`--direct_running_mode=multi_processing`): Beam's SDK
worker, with the terminal log set up the tokfx way first (beam_jobs.logs), which Beam's own
worker command leaves no room for. `python -m beam_jobs.worker [--verbose] [--quiet]`: the
launcher's log choices (its command: `command`).

A worker that cannot import tokfx (e.g. started in a source folder whose extensions are not
built, which Python puts first on its path) says so in one line and exits at once, before it
connects to the runner; the launcher then stops the run (beam_jobs.options)."""
from __future__ import annotations

import os
import sys

from beam_jobs.logs import show_logs
from beam_jobs.memory import use_one_heap

VERBOSE, QUIET = "--verbose", "--quiet"


def command(verbose: bool, quiet: bool) -> list[str]:
    """The command line that starts a worker process with the launcher's log choices."""
    return [sys.executable, "-m", "beam_jobs.worker", *([VERBOSE] if verbose else []), *([QUIET] if quiet else [])]


def main() -> None:
    use_one_heap()  # before Beam starts its threads (beam_jobs.memory)
    # Arrow's buffers (the Parquet writer's pages) from malloc, unless the user chose a pool:
    # mimalloc, Arrow's default, keeps what a row group freed, 35-45 MB of a worker's peak.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    show_logs(VERBOSE in sys.argv[1:], QUIET in sys.argv[1:])
    try:
        import tokfx  # noqa: F401  (the steps' code imports it once their first bundle arrives)
    except ImportError as exc:
        sys.exit(f"tokfx: error: a worker process cannot import tokfx: {exc}")
    from apache_beam.runners.worker import sdk_worker, sdk_worker_main  # after the log is set up

    if VERBOSE not in sys.argv[1:]:
        # Beam's worker also prints a failed bundle's traceback to its stderr, beside the log
        # (its module's one print, in SdkHarness._execute); the launcher reports that error
        # (beam_jobs.logs.quiet_bundle_errors), so this copy is left out too.
        sdk_worker.print = _leave_out
    sdk_worker_main.main(sys.argv)


def _leave_out(*args, **kwargs) -> None:
    pass


if __name__ == "__main__":
    main()
