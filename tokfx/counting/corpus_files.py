"""Counting corpus files of any input format: what `tokfx train FILES` trains on."""
from __future__ import annotations

import os
import time
from collections.abc import Sequence

from tokfx.counting.tables import add_counts
from tokfx.counting.text_file import count_lines_file, count_pretokens_file
from tokfx.counting.texts import count_lines_into
from tokfx.formats.readers import ReadOptions, read_documents, reader_for, require_files, text
from tokfx.formats.readers.policy import FAIL
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.progress import QUIET, Progress


def count_corpus_files(paths: Sequence[str | os.PathLike], pattern: str = "gpt2",
                       special_tokens: Sequence[str] = (), text_field: str = "text",
                       processes: int | None = None, lines: dict[bytes, int] | None = None,
                       progress: Progress = QUIET) -> dict[bytes, int]:
    """The files' pre-token counts; with `lines`, their line counts are added into it too. A
    .txt file is counted in parallel processes, a file of any other format document by
    document."""
    require_files(paths)
    counts: dict[bytes, int] = {}
    pretokenizer = PreTokenizer(pattern, special_tokens)
    options = ReadOptions(text_field=text_field, separators=tuple(special_tokens))
    for path in map(str, paths):
        start = time.perf_counter()
        if reader_for(path) is text.READER:
            add_counts(counts, count_pretokens_file(path, pattern, special_tokens, processes))
            if lines is not None:
                add_counts(lines, count_lines_file(path, special_tokens))
            what = f"{os.path.getsize(path):,} bytes"
        else:
            docs = 0
            for doc in read_documents([path], options, FAIL):
                pretokenizer.count_into(doc.text, counts)
                if lines is not None:
                    count_lines_into(doc.text, lines, pretokenizer.specials)
                docs += 1
            what = f"{docs:,} documents"
        progress.report(f"counted {path} ({what}) in {time.perf_counter() - start:.2f} s")
    return counts
