"""beam_jobs.memory: freed memory in the middle of the C heap goes back to the system."""
import os
import subprocess
import sys

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


def test_it_does_nothing_where_there_is_no_malloc_trim_or_mallopt(monkeypatch):
    monkeypatch.setattr(memory, "_MALLOC_TRIM", None)
    monkeypatch.setattr(memory, "_MALLOPT", None)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    memory.release_free_memory()
    memory.use_one_heap()


def test_one_heap_is_asked_for_unless_the_user_set_malloc_arena_max(monkeypatch):
    calls = []
    monkeypatch.setattr(memory, "_MALLOPT", lambda option, value: calls.append((option, value)))
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    memory.use_one_heap()
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    memory.use_one_heap()
    assert calls == [(memory.M_ARENA_MAX, 1)]


_COUNT_HEAPS = """
import ctypes, sys, threading
from beam_jobs import memory
if sys.argv[1] == "one":
    memory.use_one_heap()
def work():
    kept = [bytes(1000) for _ in range(1000)]
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
out = libc.fopen(sys.argv[2].encode(), b"w")
libc.malloc_info(0, out)
libc.fclose(out)
"""


@pytest.mark.skipif(memory._MALLOPT is None, reason="mallopt and malloc_info are glibc's")
def test_with_one_heap_threads_allocate_from_the_main_heap(tmp_path):
    heaps = {}
    for mode in ("one", "default"):
        report = tmp_path / f"{mode}.xml"
        env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
        subprocess.run([sys.executable, "-c", _COUNT_HEAPS, mode, str(report)], check=True, env=env)
        heaps[mode] = report.read_text().count("<heap nr=")
    assert heaps["one"] == 1 < heaps["default"]
