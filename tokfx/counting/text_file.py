"""Count the pre-tokens of one large text file with several processes (and its lines, range by
range)."""
from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat

from tokfx.counting.tables import add_counts
from tokfx.counting.texts import count_lines_into
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.pre_tokenizers.boundaries import find_chunk_boundaries
from tokfx.pre_tokenizers.patterns import NO_NEWLINE_SPLIT
from tokfx.special_tokens import SpecialTokens

# More ranges than processes, so that one slow range does not leave the other workers idle.
_RANGES_PER_PROCESS = 4


def read_text_range(path: str | os.PathLike, start: int, end: int) -> str:
    """Bytes [start, end) of `path` as text; invalid UTF-8 is an error naming file and offset."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: invalid UTF-8 at byte {start + exc.start}") from None


def _count_range(path, start: int, end: int, pattern: str,
                 special_tokens: Sequence[str]) -> dict[bytes, int]:
    counts: dict[bytes, int] = {}
    PreTokenizer(pattern, special_tokens).count_into(read_text_range(path, start, end), counts)
    return counts


def count_pretokens_file(path: str | os.PathLike, pattern: str = "gpt2",
                         special_tokens: Sequence[str] = (),
                         processes: int | None = None) -> dict[bytes, int]:
    """{pre-token: count} of a whole text file, its ranges counted in parallel processes."""
    PreTokenizer(pattern, special_tokens)  # fail on a bad pattern here, not in every worker
    processes = processes or os.cpu_count() or 1
    ranges = processes * _RANGES_PER_PROCESS
    if not special_tokens and pattern in NO_NEWLINE_SPLIT:
        ranges = 1  # with no special token to cut at, such a pattern's pieces may span any newline
    with open(path, "rb") as f:
        bounds = find_chunk_boundaries(f, ranges, special_tokens)
    starts, ends = bounds[:-1], bounds[1:]
    args = (repeat(path), starts, ends, repeat(pattern), repeat(tuple(special_tokens)))
    total: dict[bytes, int] = {}
    if processes == 1 or len(starts) <= 1:
        for part in map(_count_range, *args):
            add_counts(total, part)
        return total
    with ProcessPoolExecutor(processes) as pool:
        for part in pool.map(_count_range, *args):
            add_counts(total, part)
    return total


def count_lines_file(path: str | os.PathLike, special_tokens: Sequence[str] = (),
                     range_bytes: int = 32 << 20) -> dict[bytes, int]:
    """{line bytes: count} of a whole text file (count_lines_into), read a range at a time; a
    range ends at a special token or just after a newline, so no line is cut."""
    specials = SpecialTokens(special_tokens)
    with open(path, "rb") as f:
        bounds = find_chunk_boundaries(f, max(1, -(-os.path.getsize(path) // range_bytes)), special_tokens)
    lines: dict[bytes, int] = {}
    for start, end in zip(bounds, bounds[1:]):
        count_lines_into(read_text_range(path, start, end), lines, specials)
    return lines
