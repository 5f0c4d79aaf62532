"""BPE training from pre-token counts over an alphabet's base symbols: the Python face of the
tokfx._bpe_train core (twin: tokfx.reference.bpe_train)."""
from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Mapping

from tokfx._bpe_train import train_merges
from tokfx._count_table import packed_counts
from tokfx._training_steps import fallback_apart
from tokfx.alphabet import BYTES, Alphabet
from tokfx.progress import QUIET, Progress

BYTE_KEYS = [bytes([b]) for b in range(256)]


def symbol_keys(alphabet: Alphabet) -> list[bytes]:
    """Keys whose byte order is the symbol order, so that comparing concatenated keys compares
    symbol sequences (the tie-break): one byte per symbol, or big-endian bytes, as many as the
    largest symbol needs (2 for cjk)."""
    if alphabet.name == "bytes":
        return BYTE_KEYS
    width = max(2, (alphabet.size.bit_length() + 7) // 8)
    return [s.to_bytes(width, "big") for s in range(alphabet.size)]


def packed_words(counts: Mapping[bytes, int], alphabet: Alphabet) -> tuple[array, array, array]:
    """Every trainer's input: every word's symbols concatenated, word offsets, word counts.

    With a chars alphabet each fallback symbol (a byte, or a remapped one, of a character not
    covered) is a word of its own: no learned token holds one, as in sentencepiece, where a
    character not covered is unknown in training and only spelled as bytes when encoding.
    """
    keys, ends, word_counts = packed_counts(counts)
    symbols, offsets = alphabet.map_pieces(keys, ends)
    if alphabet.characters:
        return (symbols, *fallback_apart(symbols, offsets, word_counts, alphabet.char_base))
    return symbols, offsets, word_counts


def rate_reporter(progress: Progress, line: str) -> Callable[[int, int], None] | None:
    """The merge loop's progress callback: (done, total) -> `line` formatted with done, total
    and rate (per second since now); None when progress is off (the core then skips it)."""
    if not progress.enabled:
        return None
    start = time.perf_counter()

    def report(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - start, 1e-9)
        progress.report(line.format(done=done, total=total, rate=rate))

    return report


def train_bpe_merges(counts: Mapping[bytes, int], num_merges: int, *, alphabet: Alphabet = BYTES,
                     progress: Progress = QUIET) -> list[tuple[int, int]]:
    """Learn up to `num_merges` merges over the alphabet's base symbols; merge i creates id
    alphabet.size + i. `counts` maps each pre-token's bytes to how often it occurs. Progress:
    a line every 1,000 merges and one at the end."""
    start = time.perf_counter()
    merges = train_merges(*packed_words(counts, alphabet), symbol_keys(alphabet), num_merges,
                          progress=rate_reporter(progress, "bpe: {done:,}/{total:,} merges, {rate:,.0f} merges/s"))
    progress.report(f"bpe: {len(merges):,} merges in {time.perf_counter() - start:.2f} s")
    return merges
