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


# How much "skip" may reject before a run fails (--max-rejected): a count of rejected documents
# and files, or, ending in %, their share of all that was read (a rejected file counts as one).
DEFAULT_MAX_REJECTED = "10%"


def rejected_limit(text: str) -> tuple[int | None, float | None]:
    """'10%' -> (None, 0.1); '25' -> (25, None)."""
    try:
        if text.endswith("%"):
            share = float(text[:-1]) / 100
            if 0 <= share <= 1:
                return None, share
        elif int(text) >= 0:
            return int(text), None
    except ValueError:
        pass
    raise ValueError(f"expected a count like 100 or a share like 10%, got {text!r}")


def over_limit(rejected: int, seen: int, limit: str) -> bool:
    """Whether `rejected` of the `seen` documents and files is more than `limit` allows."""
    count, share = rejected_limit(limit)
    return rejected > count if count is not None else rejected > share * seen
