"""What `tokfx train` and `tokfx eval` do with the input that --on-error=skip let through: its
rejected records go beside the output, as `tokfx count` writes them (OUTPUT.rejected.jsonl,
tokfx.formats.rejected), and one line on stderr says how much was skipped and where the records
are, even with -q (it is a result, not progress)."""
from __future__ import annotations

import os
import sys

from tokfx.formats.readers.policy import CollectingPolicy
from tokfx.formats.rejected import rejected_beside, write_rejected


def note_skipped(command: str, errors: CollectingPolicy, output: str | os.PathLike) -> None:
    if not errors.rejected:
        return
    path = rejected_beside(output)
    counts = write_rejected(errors.rejected, path)
    print(f"tokfx {command}: skipped {counts['documents_rejected']:,} rejected documents and"
          f" {counts['files_rejected']:,} rejected files; their records are in {path}",
          file=sys.stderr)
