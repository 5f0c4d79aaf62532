"""The rejected-records file (--on-error=skip): one JSON line per Rejection, `file`, `line` (null
for a whole file, and for a .txt document whose line is not known: its reason gives the byte
offset) and `reason`, sorted so that a run gives the same file with any number of workers.

`tokfx run` and `tokfx encode --output-dir` write it as OUTPUT/rejected/rejected.jsonl; a command
whose output is one file or directory (`tokfx count`, `train`, `eval`) writes it beside that:
OUTPUT.rejected.jsonl.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from tokfx.formats.documents import Rejection


def rejected_beside(output: str | os.PathLike) -> str:
    """Where a command whose output is one file or directory writes its rejected records."""
    return str(output).rstrip("/") + ".rejected.jsonl"


def _write_local(path: str, data: bytes) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_bytes(data)


def write_rejected(rejections: Iterable[Rejection], path: str,
                   write_bytes: Callable[[str, bytes], None] = _write_local) -> dict:
    """Write the rejected records to `path` (only when there is any) and return the counts;
    `write_bytes(path, data)` writes the file (a local one by default; the pipeline passes its
    own, for any filesystem)."""
    ordered = sorted(rejections, key=lambda r: (r.file, r.line is not None, r.line or 0, r.reason))
    if ordered:
        lines = "".join(json.dumps({"file": r.file, "line": r.line, "reason": r.reason},
                                   ensure_ascii=False) + "\n" for r in ordered)
        write_bytes(path, lines.encode("utf-8"))
    return {"documents_rejected": sum(1 for r in ordered if not r.whole_file),
            "files_rejected": sum(1 for r in ordered if r.whole_file)}
