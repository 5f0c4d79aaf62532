"""How a pipeline worker process uses the C heap: one heap for all its threads, and what a step
freed given back to the system after it (an encoding task, a count table written to its file).

glibc's malloc keeps freed memory inside its heaps (a heap shrinks only from its top), and by
default glibc gives threads heaps of their own (up to 8 per core): Beam's SDK worker runs
bundles and its gRPC channels on some 25 threads, and an encoding worker held 16 heaps, each as
large as its busiest moment. Measured with the GPT-2 tokenizer (bench/README, "Per-worker
cost"), one heap took 9 MB off a worker's peak and the trim after each task 6-22 MB (by what
else made the peak), neither at a measurable cost in CPU (a trim takes well under a
millisecond); the trims after the counting pass's flushes took 13 MB off a 2-worker `tokfx
run`'s process tree. Where the C library is not glibc, nothing is done.
"""
from __future__ import annotations

import ctypes
import os

# glibc's malloc.h
M_ARENA_MAX = -8


def _libc_function(name: str):
    try:
        return getattr(ctypes.CDLL(None), name)  # the process's own C library
    except (OSError, AttributeError, TypeError):  # TypeError: Windows has no CDLL(None)
        return None


_MALLOC_TRIM = _libc_function("malloc_trim")
_MALLOPT = _libc_function("mallopt")


def use_one_heap() -> None:
    """All threads allocate from the main heap, from now on (before the process starts its
    threads), unless the user chose otherwise with glibc's MALLOC_ARENA_MAX."""
    if _MALLOPT is not None and "MALLOC_ARENA_MAX" not in os.environ:
        _MALLOPT(M_ARENA_MAX, 1)


def release_free_memory() -> None:
    """Return the C heap's free pages to the system (malloc_trim(0): from the middle of every
    heap, not only their tops)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
