"""The command line and the file system: an output directory checked before any work (a run must
not read and train for minutes, then fail because `-o` names a file or a folder it cannot
write), and a file system error told as one line."""
from __future__ import annotations

import os


def check_output_dir(path: str | os.PathLike, flag: str) -> None:
    """Refuse a local output directory that is a file, or that could not be created or written
    (one line naming `flag` and the path)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{flag} {path}: exists and is not a directory")
    existing = os.path.abspath(path)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ValueError(f"{flag} {path}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: {existing} is not writable")


def os_error_line(exc: OSError) -> str:
    """An OSError as one line: the file and the system's reason (or the message tokfx gave it)."""
    if exc.filename is None or exc.strerror is None:
        return str(exc)
    return f"{exc.filename}: {exc.strerror}"
