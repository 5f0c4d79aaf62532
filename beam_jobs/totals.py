"""A run's totals of documents and rejections: manifest.json records them (beam_jobs.manifest)
and the summary on the terminal says them (beam_jobs.pipelines.summary), both from `totals`, so
the two count the same things the same way; and the check that fails a run which wrote no
document, or rejected more than --max-rejected allows (before its manifest is written).

`documents_read` counts every document read, written or rejected; a file rejected whole (empty,
truncated, of no known kind, a pattern that matches nothing) is one of `files_rejected`."""
from __future__ import annotations

from tokfx.formats.documents import CorpusError
from tokfx.formats.readers.policy import over_limit


def totals(documents_written: int, documents_rejected: int, files_rejected: int,
           documents_empty: int = 0, text_bytes: int = 0, tokens: int = 0) -> dict[str, int]:
    return {"documents_read": documents_written + documents_rejected,
            "documents_written": documents_written, "documents_rejected": documents_rejected,
            "files_rejected": files_rejected, "documents_empty": documents_empty,
            "bytes": text_bytes, "tokens": tokens}


def describe(counts: dict[str, int], written: str = "written") -> str:
    """'read 325 documents: 0 written, 325 rejected; 4 files rejected'."""
    line = (f"read {counts['documents_read']:,} documents: {counts['documents_written']:,} {written},"
            f" {counts['documents_rejected']:,} rejected")
    files = counts["files_rejected"]
    return line + (f"; {files:,} file{'s' if files > 1 else ''} rejected" if files else "")


def check_written(counts: dict[str, int], max_rejected: str, rejected_file: str,
                  written: str = "written") -> None:
    """Raise (one line) when no document was written, or more were rejected than `max_rejected`
    allows; `rejected_file`: where the rejected records are."""
    rejected = counts["documents_rejected"] + counts["files_rejected"]
    where = f"; the rejected records are in {rejected_file}" if rejected else ""
    if not counts["documents_written"]:
        raise CorpusError(f"no document {written} ({describe(counts, written)}){where}")
    if over_limit(rejected, counts["documents_read"] + counts["files_rejected"], max_rejected):
        raise CorpusError(f"more rejected than --max-rejected {max_rejected} allows"
                          f" ({describe(counts, written)}){where}; fix the input, or raise --max-rejected")
