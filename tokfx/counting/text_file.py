"""Count a large text file in byte ranges, several processes at once: its pre-tokens, its lines,
or both in one pass.

Each range's documents come from the text reader (tokfx.formats.readers.text), so a bad
document is one rejection; the rejections go to the error policy in file order, as the ranges
come back, each with its line in the whole file. A file without special tokens is one document,
cut into ranges (at newlines that no pattern keeps inside a piece) only to count it in
parallel: a bad byte anywhere rejects all of it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple

from tokfx._count_table import CountTable
from tokfx.counting.pretoken_counter import PretokenCounter
from tokfx.counting.texts import count_lines_into
from tokfx.formats.documents import Rejection
from tokfx.formats.readers.policy import FAIL, ErrorPolicy
from tokfx.formats.readers.text import split_text_documents
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.pre_tokenizers.boundaries import find_chunk_boundaries
from tokfx.pre_tokenizers.patterns import NO_NEWLINE_SPLIT
from tokfx.special_tokens import SpecialTokens

# More ranges than processes, so that one slow range does not leave the other workers idle.
_RANGES_PER_PROCESS = 4


class CorpusCounts(NamedTuple):
    """What counting gives: pre-token counts, line counts (None when not counted) and the
    number of documents counted (rejected ones are not)."""
    pretokens: CountTable
    lines: CountTable | None
    documents: int


@dataclass(frozen=True)
class _Job:
    """What every range of one file is counted for (sent to each worker)."""
    path: str
    pattern: str | None  # None: no pre-tokens are counted
    special_tokens: tuple[str, ...]
    lines: bool


class _RangeCounts(NamedTuple):
    counts: CorpusCounts
    rejections: list[Rejection]  # their lines counted from the range's start (its line 1)
    newlines: int


def _count_range(job: _Job, start: int, end: int) -> _RangeCounts:
    with open(job.path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    # The reader cut the text at the special tokens: no document holds one, so the counting
    # need not look for them again.
    no_specials = SpecialTokens()
    pretokens = CountTable()
    counter = PretokenCounter(PreTokenizer(job.pattern), pretokens) if job.pattern is not None else None
    lines = CountTable() if job.lines else None
    documents, rejections = 0, []
    # A worker does not know the line its range starts at: it counts from 1, and the parent
    # adds the newlines of the ranges before.
    for item in split_text_documents(data, start, job.path, job.special_tokens, line=1):
        if isinstance(item, Rejection):
            rejections.append(item)
            continue
        documents += 1
        if counter is not None:
            counter.add(item.text)
        if lines is not None:
            count_lines_into(item.text, lines, no_specials)
    if counter is not None:
        counter.flush()
    return _RangeCounts(CorpusCounts(pretokens, lines, documents), rejections, data.count(b"\n"))


def _add_up(job: _Job, parts: Iterable[_RangeCounts], errors: ErrorPolicy) -> CorpusCounts:
    """The ranges' counts added up in file order; each rejection goes to `errors` as it comes,
    with its line in the whole file."""
    pretokens = CountTable()
    lines = CountTable() if job.lines else None
    documents, rejected, lines_before = 0, False, 0
    for part in parts:
        for rejection in part.rejections:
            # Without special tokens the file is one document: its first bad byte rejects it.
            if job.special_tokens or not rejected:
                errors.reject(rejection if rejection.line is None
                              else rejection._replace(line=rejection.line + lines_before))
            rejected = True
        lines_before += part.newlines
        pretokens.update(part.counts.pretokens)
        if lines is not None:
            lines.update(part.counts.lines)
        documents += part.counts.documents
    if not job.special_tokens:
        if rejected:
            return CorpusCounts(CountTable(), CountTable() if job.lines else None, 0)
        documents = 1
    return CorpusCounts(pretokens, lines, documents)


def _count_file(job: _Job, ranges: int, processes: int, errors: ErrorPolicy) -> CorpusCounts:
    with open(job.path, "rb") as f:
        bounds = find_chunk_boundaries(f, ranges, job.special_tokens)
    # An empty file (bounds [0]) is one empty range, which the text reader rejects as such.
    starts, ends = (bounds[:-1], bounds[1:]) if len(bounds) > 1 else ([0], [0])
    args = (repeat(job), starts, ends)
    if processes == 1 or len(starts) == 1:
        return _add_up(job, map(_count_range, *args), errors)
    with ProcessPoolExecutor(processes) as pool:
        try:
            return _add_up(job, pool.map(_count_range, *args), errors)
        except BaseException:
            pool.shutdown(cancel_futures=True)  # failed: the ranges still queued are not needed
            raise


def count_text_file(path: str | os.PathLike, pattern: str = "gpt2",
                    special_tokens: Sequence[str] = (), processes: int | None = None,
                    lines: bool = False, errors: ErrorPolicy = FAIL) -> CorpusCounts:
    """The pre-token counts of a whole text file (and its line counts, with `lines`) and its
    number of documents, its ranges counted in parallel processes; bad documents go to
    `errors` (the default raises a CorpusError naming the file and line)."""
    PreTokenizer(pattern, special_tokens)  # fail on a bad pattern here, not in every worker
    processes = processes or os.cpu_count() or 1
    ranges = processes * _RANGES_PER_PROCESS
    if not special_tokens and pattern in NO_NEWLINE_SPLIT:
        ranges = 1  # with no special token to cut at, such a pattern's pieces may span any newline
    job = _Job(str(path), pattern, tuple(special_tokens), lines)
    return _count_file(job, ranges, processes, errors)


def count_pretokens_file(path: str | os.PathLike, pattern: str = "gpt2",
                         special_tokens: Sequence[str] = (), processes: int | None = None,
                         errors: ErrorPolicy = FAIL) -> dict[bytes, int]:
    """{pre-token: count} of a whole text file, its ranges counted in parallel processes
    (count_text_file), in order of first occurrence."""
    return count_text_file(path, pattern, special_tokens, processes, errors=errors).pretokens.to_dict()


def count_lines_file(path: str | os.PathLike, special_tokens: Sequence[str] = (),
                     range_bytes: int = 32 << 20, errors: ErrorPolicy = FAIL) -> dict[bytes, int]:
    """{line bytes: count} of a whole text file (count_lines_into), read a range of about
    `range_bytes` at a time; a range ends at a special token or just after a newline, so no
    line is cut."""
    job = _Job(str(path), None, tuple(special_tokens), lines=True)
    ranges = max(1, -(-os.path.getsize(path) // range_bytes))
    return _count_file(job, ranges, 1, errors).lines.to_dict()
