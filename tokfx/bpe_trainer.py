"""Byte-level BPE training from pre-token counts: the Python face of the tokfx._bpe_train core."""
import sys
import time
from array import array
from collections.abc import Mapping
from itertools import accumulate

from tokfx._bpe_train import train_merges

BYTE_ALPHABET_SIZE = 256
BYTE_KEYS = [bytes([b]) for b in range(BYTE_ALPHABET_SIZE)]


def _as_int32_symbols(data: bytes) -> array:
    """One int32 per byte, by slice assignment into the low byte of each 4-byte slot.

    Much faster than array('i', list(data)); array('i', data) would instead reinterpret every
    4 bytes as one int.
    """
    wide = bytearray(4 * len(data))
    low_byte = 0 if sys.byteorder == "little" else 3
    wide[low_byte::4] = data
    symbols = array("i")
    symbols.frombytes(wide)
    return symbols


def train_bpe_merges(counts: Mapping[bytes, int], num_merges: int, *,
                     progress: bool = False) -> list[tuple[int, int]]:
    """Learn up to `num_merges` merges over the byte alphabet; merge i creates id 256 + i.

    `counts` maps each pre-token's bytes to how often it occurs. With `progress`, reports to
    stderr every 1,000 merges and once at the end.
    """
    start = time.perf_counter()
    # A mapping's keys and values iterate in the same order; values() spares a lookup per word.
    words = list(counts.keys())
    symbols = _as_int32_symbols(b"".join(words))
    offsets = array("q", accumulate(map(len, words), initial=0))
    word_counts = array("q", counts.values())

    def report(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - start, 1e-9)
        print(f"bpe: {done:,}/{total:,} merges, {rate:,.0f} merges/s", file=sys.stderr)

    merges = train_merges(symbols, offsets, word_counts, BYTE_KEYS, num_merges,
                          progress=report if progress else None)
    if progress:
        print(f"bpe: {len(merges):,} merges in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return merges


def token_bytes(merges: list[tuple[int, int]]) -> list[bytes]:
    """Every token's bytes by id: the 256 single bytes, then one per merge."""
    vocab = list(BYTE_KEYS)
    for left, right in merges:
        vocab.append(vocab[left] + vocab[right])
    return vocab


def merges_as_bytes(merges: list[tuple[int, int]]) -> list[tuple[bytes, bytes]]:
    """The merges spelled as (left bytes, right bytes), as GPT-2's merges.txt lists them."""
    vocab = token_bytes(merges)
    return [(vocab[left], vocab[right]) for left, right in merges]
