"""Counting corpus files of any input format: what `tokfx train FILES` trains on."""
from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from tokfx.counting.tables import add_counts
from tokfx.counting.text_file import count_lines_file, count_pretokens_file
from tokfx.counting.texts import count_lines_into
from tokfx.formats.readers.jsonl import is_jsonl, iter_jsonl_texts
from tokfx.pre_tokenizers import PreTokenizer
from tokfx.progress import QUIET, Progress


def count_corpus_files(paths: Sequence[str | os.PathLike], pattern: str = "gpt2",
                       special_tokens: Sequence[str] = (), text_field: str = "text",
                       processes: int | None = None, lines: dict[bytes, int] | None = None,
                       progress: Progress = QUIET) -> dict[bytes, int]:
    """The files' pre-token counts; with `lines`, their line counts are added into it too. A
    .txt file is counted in parallel processes, a JSON-lines file record by record."""
    counts: dict[bytes, int] = {}
    pretokenizer = PreTokenizer(pattern, special_tokens)
    for path in map(Path, paths):
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file")
        start = time.perf_counter()
        if is_jsonl(path):
            docs = 0
            for _, text in iter_jsonl_texts(path, text_field):
                pretokenizer.count_into(text, counts)
                if lines is not None:
                    count_lines_into(text, lines, pretokenizer.specials)
                docs += 1
            what = f"{docs:,} documents"
        else:
            add_counts(counts, count_pretokens_file(path, pattern, special_tokens, processes))
            if lines is not None:
                add_counts(lines, count_lines_file(path, special_tokens))
            what = f"{path.stat().st_size:,} bytes"
        progress.report(f"counted {path} ({what}) in {time.perf_counter() - start:.2f} s")
    return counts
