"""Ctrl-C and SIGTERM: what every `tokfx` command does when stopped. One line, `tokfx:
interrupted`, and the shell's status for the signal (130 for SIGINT, 143 for SIGTERM); no
traceback. SIGTERM (a job scheduler's stop, `kill`) is raised as Ctrl-C is, so that the same
clean-up runs (the output directory's lock released, temporary files closed) and a run so
stopped resumes as one stopped by Ctrl-C."""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread where the signal lands."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextmanager
def sigterm_raises():
    """While the command runs, SIGTERM raises Terminated in the main thread (elsewhere, and
    after, the handler is left as it was: `main()` may be called from a program's own code)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_of(exc: BaseException) -> int | None:
    """SIGINT or SIGTERM when `exc` is Ctrl-C's or SIGTERM's: raised here, or raised in a Beam
    step (which the runner wraps in an error of its own, naming it in its text)."""
    text = str(exc)
    if isinstance(exc, Terminated) or f"{Terminated.__module__}.{Terminated.__name__}" in text:
        return signal.SIGTERM
    if isinstance(exc, KeyboardInterrupt) or "KeyboardInterrupt" in text:
        return signal.SIGINT
    return None


def interrupted(exc: BaseException) -> bool:
    return _signal_of(exc) is not None


def report_interrupt(exc: BaseException) -> int:
    """Say so in one line; the exit status (`exc`: an interruption)."""
    print("tokfx: interrupted", file=sys.stderr)
    return 128 + (_signal_of(exc) or signal.SIGINT)
