"""What bad input does (`--on-error`), one policy for every reader and every caller.

"fail" (the default) stops: the rejection is raised as a CorpusError whose message is the
rejection's own, one line naming the file and line. "skip" lets the Rejection through, to be
recorded (tokfx.formats.rejected) and counted, and reading goes on.
"""
from __future__ import annotations

from tokfx.formats.documents import CorpusError, Rejection

ON_ERROR = ("fail", "skip")


class ErrorPolicy:
    """`reject` raises (fail) or hands the rejection back for the caller to record (skip)."""

    def __init__(self, on_error: str = "fail"):
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
        self.on_error = on_error

    def reject(self, rejection: Rejection) -> Rejection:
        if self.on_error == "fail":
            raise CorpusError(rejection.message)
        return rejection


class CollectingPolicy(ErrorPolicy):
    """An ErrorPolicy that keeps what "skip" lets through in `rejected`, in reading order: for
    reading local files, whose caller records the rejections once reading is done."""

    def __init__(self, on_error: str = "fail"):
        super().__init__(on_error)
        self.rejected: list[Rejection] = []

    def reject(self, rejection: Rejection) -> Rejection:
        self.rejected.append(super().reject(rejection))
        return rejection


FAIL = ErrorPolicy("fail")
