"""A worker gives the memory its last task freed back to the system.

glibc's malloc keeps freed memory inside its heaps: a heap shrinks only from its top, and each
thread Beam runs a bundle on may have a heap of its own. So a worker's resident memory grew to
the high-water mark of every task before it, holes included; trimming after each task took
15-20 MB off a worker's peak with the GPT-2 tokenizer (bench/README, "Per-worker cost"), for
well under a millisecond a task. Where there is no malloc_trim (not glibc), nothing is done.
"""
from __future__ import annotations

import ctypes


def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _malloc_trim()


def release_free_memory() -> None:
    """Return the C heap's free pages to the system (malloc_trim(0): from the middle of every
    heap, not only their tops)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
