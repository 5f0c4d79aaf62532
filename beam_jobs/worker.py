"""The local runner's worker process (`--direct_running_mode=multi_processing`): Beam's SDK
worker, with the terminal log set up the tokfx way first (beam_jobs.logs), which Beam's own
worker command leaves no room for. `python -m beam_jobs.worker [--verbose] [--quiet]`: the
launcher's log choices (its command: `command`).

A worker that cannot import tokfx (e.g. started in a source folder whose extensions are not
built, which Python puts first on its path) says so in one line and exits at once, before it
connects to the runner; the launcher then stops the run (beam_jobs.options)."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

from beam_jobs.logs import show_logs

VERBOSE, QUIET = "--verbose", "--quiet"
# glibc's mallopt parameter (malloc.h).
M_MMAP_THRESHOLD = -3
# Blocks of at least this many bytes get their own mapping, given back to the system when freed.
MMAP_THRESHOLD = 256 << 10


def command(verbose: bool, quiet: bool) -> list[str]:
    """The command line that starts a worker process with the launcher's log choices."""
    return [sys.executable, "-m", "beam_jobs.worker", *([VERBOSE] if verbose else []), *([QUIET] if quiet else [])]


def _return_large_blocks() -> None:
    """Make glibc malloc map every block of MMAP_THRESHOLD bytes or more on its own, so that
    freeing it gives it back. By default glibc raises that threshold to the size of each mapped
    block that is freed (up to 32 MB): after the first row group, a worker's 8 MB arrays and
    Arrow's and the piece cache's buffers came from the heaps, and a heap keeps what was freed
    inside it (a bundle thread's heap held 47 MB free of 112 MB at a worker's peak). A threshold
    that is set stays: 35 MB less at a worker's peak. Cost: fresh pages from the kernel for each
    such block, 3-5 % of a worker's CPU (bench/README, "Per-worker cost"). A C library without
    mallopt (macOS): nothing to set."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def main() -> None:
    _return_large_blocks()
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
