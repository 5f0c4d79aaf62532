"""beam_jobs.memory: freed memory in the middle of the C heap goes back to the system."""
import os

import pytest

from beam_jobs import memory


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(memory._MALLOC_TRIM is None or not os.path.exists("/proc/self/statm"),
                    reason="malloc_trim is glibc's, and the RSS is read from Linux's /proc")
def test_free_memory_in_the_middle_of_the_heap_is_given_back():
    # 40 MB in blocks malloc takes from its heap (under its mmap threshold), every tenth kept so
    # that the heap's top stays in use and free() alone gives nothing back.
    blocks = [bytes(64 << 10) for _ in range(640)]
    kept = blocks[::10]
    del blocks
    before = _rss()
    memory.release_free_memory()
    assert before - _rss() > 20 << 20
    assert len(kept) == 64


def test_it_does_nothing_where_there_is_no_malloc_trim(monkeypatch):
    monkeypatch.setattr(memory, "_MALLOC_TRIM", None)
    memory.release_free_memory()
