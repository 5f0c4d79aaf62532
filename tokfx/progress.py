"""Progress lines of long work (counting files, training rounds): one reporter for every stage.

The lines are INFO records of the `tokfx.progress` logger. Unless the program has given that
logger a handler of its own, the first reporter that is switched on gives it one that writes
each line as it is to the standard error stream (whatever `sys.stderr` is at that moment).
"""
from __future__ import annotations

import logging
import sys

logger = logging.getLogger("tokfx.progress")


class _StderrHandler(logging.Handler):
    """Writes to the current sys.stderr, so redirecting it (as tests do) redirects the lines."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 (logging's own policy: never raise from emit)
            self.handleError(record)


def _ensure_handler() -> None:
    if not logger.handlers:
        logger.addHandler(_StderrHandler())
        logger.setLevel(logging.INFO)
        logger.propagate = False


class Progress:
    """Reports progress lines when switched on; does nothing otherwise."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        if enabled:
            _ensure_handler()

    def report(self, message: str) -> None:
        if self.enabled:
            logger.info("%s", message)


QUIET = Progress(False)
