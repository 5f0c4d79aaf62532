"""Counting corpus files of any input format: what `tokfx train FILES` trains on."""
from __future__ import annotations

import os
import time
from collections.abc import Sequence

from tokfx._count_table import CountTable
from tokfx.counting.pretoken_counter import PretokenCounter
from tokfx.counting.text_file import CorpusCounts, count_text_file
from tokfx.counting.texts import count_lines_into
from tokfx.formats.readers import ReadOptions, read_documents, reader_for, require_files, text
from tokfx.formats.readers.policy import FAIL, ErrorPolicy
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.progress import QUIET, Progress


def count_corpus_files(paths: Sequence[str | os.PathLike], pattern: str = "gpt2",
                       special_tokens: Sequence[str] = (), text_field: str = "text",
                       processes: int | None = None, lines: bool = False,
                       errors: ErrorPolicy = FAIL, progress: Progress = QUIET) -> CorpusCounts:
    """The files' pre-token counts (and line counts, with `lines`) and the number of documents
    counted. A .txt file is counted in byte ranges in parallel processes, a file of any other
    format document by document; the special tokens separate a .txt file's documents. Bad input
    goes to `errors` (the default raises a CorpusError naming the file and line)."""
    require_files(paths)
    pretokenizer = PreTokenizer(pattern, special_tokens)
    options = ReadOptions(text_field=text_field, separators=tuple(special_tokens))
    pretokens = CountTable()
    counter = PretokenCounter(pretokenizer, pretokens)
    line_counts = CountTable() if lines else None
    documents = 0
    for path in map(str, paths):
        start = time.perf_counter()
        if reader_for(path) is text.READER:
            counted = count_text_file(path, pattern, special_tokens, processes, lines, errors)
            pretokens.update(counted.pretokens)
            if line_counts is not None:
                line_counts.update(counted.lines)
            docs = counted.documents
        else:
            docs = 0
            for doc in read_documents([path], options, errors):
                counter.add(doc.text)
                if line_counts is not None:
                    count_lines_into(doc.text, line_counts, pretokenizer.specials)
                docs += 1
            counter.flush()
        documents += docs
        progress.report(f"counted {path} ({docs:,} documents, {os.path.getsize(path):,} bytes)"
                        f" in {time.perf_counter() - start:.2f} s")
    return CorpusCounts(pretokens, line_counts, documents)
