"""A pipeline worker fixes glibc malloc's mmap threshold (beam_jobs.worker): a large block
freed does not make the next large blocks come from a heap that keeps them."""
import ctypes
import ctypes.util
import subprocess
import sys

import pytest

# In a fresh interpreter: an 8 MB block allocated and freed, then how many bytes a 1 MB block
# adds to malloc's own mappings (mallinfo2's hblkhd).
PROBE = """
import ctypes, sys
from beam_jobs.worker import _return_large_blocks

class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "worker":
    _return_large_blocks()
libc.free(libc.malloc(8 << 20))
before = libc.mallinfo2().hblkhd
block = libc.malloc(1 << 20)
print(libc.mallinfo2().hblkhd - before)
libc.free(block)
"""


def _mapped_bytes_of_a_1mb_block(mode: str) -> int:
    result = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


@pytest.mark.skipif(not hasattr(ctypes.CDLL(ctypes.util.find_library("c")), "mallinfo2"),
                    reason="needs glibc >= 2.33 (mallinfo2)")
def test_a_worker_maps_large_blocks_on_their_own_after_a_larger_one_was_freed():
    # glibc's default: freeing the 8 MB block raised the threshold to 8 MB, the 1 MB block came
    # from the heap (where, freed, it stays); in a worker it is its own mapping.
    assert _mapped_bytes_of_a_1mb_block("default") == 0
    assert _mapped_bytes_of_a_1mb_block("worker") >= 1 << 20
