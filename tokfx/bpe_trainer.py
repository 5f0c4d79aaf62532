"""BPE training from pre-token counts over an alphabet's base symbols: the Python face of the tokfx._bpe_train core."""
import sys
import time
from array import array
from collections.abc import Mapping
from itertools import accumulate

from tokfx._bpe_train import train_merges
from tokfx.alphabet import BYTES, Alphabet

BYTE_KEYS = [bytes([b]) for b in range(256)]


def symbol_keys(alphabet: Alphabet) -> list[bytes]:
    """Keys whose byte order is the symbol order, so that comparing concatenated keys compares
    symbol sequences (the tie-break): one byte per symbol, or two big-endian bytes for cjk."""
    if alphabet.name == "bytes":
        return BYTE_KEYS
    return [s.to_bytes(2, "big") for s in range(alphabet.size)]


def packed_words(counts: Mapping[bytes, int], alphabet: Alphabet) -> tuple[array, array, array]:
    """The merge loop's input: every word's symbols concatenated, word offsets, word counts."""
    # A mapping's keys and values iterate in the same order; values() spares a lookup per word.
    words = list(counts.keys())
    symbols, offsets = alphabet.map_pieces(b"".join(words), array("q", accumulate(map(len, words))))
    return symbols, offsets, array("q", counts.values())


def train_bpe_merges(counts: Mapping[bytes, int], num_merges: int, *, alphabet: Alphabet = BYTES,
                     progress: bool = False) -> list[tuple[int, int]]:
    """Learn up to `num_merges` merges over the alphabet's base symbols; merge i creates id
    alphabet.size + i.

    `counts` maps each pre-token's bytes to how often it occurs. With `progress`, reports to
    stderr every 1,000 merges and once at the end.
    """
    start = time.perf_counter()

    def report(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - start, 1e-9)
        print(f"bpe: {done:,}/{total:,} merges, {rate:,.0f} merges/s", file=sys.stderr)

    merges = train_merges(*packed_words(counts, alphabet), symbol_keys(alphabet), num_merges,
                          progress=report if progress else None)
    if progress:
        print(f"bpe: {len(merges):,} merges in {time.perf_counter() - start:.2f} s", file=sys.stderr)
    return merges


def token_bytes(merges: list[tuple[int, int]], alphabet: Alphabet = BYTES) -> list:
    """Every token by id, as the alphabet holds tokens (bytes, or symbol tuples for cjk): the
    base symbols, then one per merge."""
    vocab = [alphabet.token([s]) for s in range(alphabet.size)]
    for left, right in merges:
        vocab.append(vocab[left] + vocab[right])
    return vocab


def merges_as_bytes(merges: list[tuple[int, int]]) -> list[tuple[bytes, bytes]]:
    """The merges spelled as (left bytes, right bytes), as GPT-2's merges.txt lists them."""
    vocab = token_bytes(merges)
    return [(vocab[left], vocab[right]) for left, right in merges]
