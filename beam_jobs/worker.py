"""The local runner's worker process (`--direct_running_mode=multi_processing`): Beam's SDK
worker, with the terminal log set up the tokfx way first (beam_jobs.logs), which Beam's own
worker command leaves no room for. `python -m beam_jobs.worker [--verbose] [--quiet]`."""
from __future__ import annotations

import sys

from beam_jobs.logs import show_logs_for


def main() -> None:
    show_logs_for(sys.argv[1:])
    from apache_beam.runners.worker import sdk_worker_main  # after the log is set up

    sdk_worker_main.main(sys.argv)


if __name__ == "__main__":
    main()
