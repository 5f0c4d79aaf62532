"""An output directory read back (what `tokfx shards` shows): its manifest, its shards' counts
per shard and per source file, a document by its place or its id, and every file checked
against the manifest.

Local directories only; each shard is read in whichever formats its files are in
(tokfx.formats.shards.formats), one row group or one document at a time.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from tokfx.formats.shards.formats import ShardFormat, formats_of
from tokfx.formats.shards.manifest import MANIFEST_JSON, SHARDS_DIR, validate_manifest
from tokfx.formats.shards.parquet import parquet_row, parquet_rows

# A Document's source is `file:line`, `file:row` or `file@byte offset` (tokfx.formats.documents).
_PLACE_IN_FILE = re.compile(r"[:@]\d+$")


def source_file(source: str) -> str:
    """The file of a document's source."""
    return _PLACE_IN_FILE.sub("", source)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class Located(NamedTuple):
    """A document's place: its index over the whole output, its shard and its row there."""
    index: int
    shard: dict
    row: int


class ShardsDir:
    """The output directory `path`, read through its manifest.json (a missing or invalid one is
    a ValueError naming it)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        manifest_path = self.path / MANIFEST_JSON
        try:
            self.manifest = json.loads(manifest_path.read_bytes())
        except FileNotFoundError:
            raise ValueError(f"{manifest_path}: not found (not a tokfx output directory, or its run"
                             " did not finish)") from None
        except ValueError as exc:
            raise ValueError(f"{manifest_path}: not JSON ({exc})") from None
        try:
            validate_manifest(self.manifest)
        except ValueError as exc:
            raise ValueError(f"{manifest_path}: {exc}") from None
        self.shards: list[dict] = self.manifest["shards"]

    def prefix(self, shard: dict) -> str:
        """The shard's path without a suffix."""
        return str(self.path / SHARDS_DIR / shard["name"])

    def formats(self, shard: dict) -> list[ShardFormat]:
        return formats_of(shard["files"], shard["name"])

    def keeps_sources(self) -> bool:
        """Whether every shard has a format that keeps the documents' ids and sources."""
        return all(any(f.holds_ids for f in self.formats(shard)) for shard in self.shards)

    def _with_ids(self, shard: dict) -> ShardFormat:
        found = [f for f in self.formats(shard) if f.holds_ids]
        if not found:
            raise ValueError(f"{shard['name']}: no format that keeps document ids (parquet) among"
                             f" its files")
        return found[0]

    def locate(self, index: int) -> Located:
        """The `index`-th document of the output (from 0, the shards in the manifest's order)."""
        total = self.manifest["totals"]["documents_written"]
        if not 0 <= index < total:
            raise ValueError(f"--index {index}: the output holds {total:,} documents (0 to {total - 1:,})")
        row = index
        for shard in self.shards:
            if row < shard["documents"]:
                return Located(index, shard, row)
            row -= shard["documents"]
        raise ValueError(f"{self.path / MANIFEST_JSON}: its shards hold fewer documents than its totals")

    def find(self, doc_id: str) -> Located:
        """The document whose id is `doc_id` (read from the shards' Parquet `id` columns)."""
        index = 0
        for shard in self.shards:
            self._with_ids(shard)
            for row, found in enumerate(parquet_rows(self.prefix(shard), ["id"])):
                if found["id"] == doc_id:
                    return Located(index + row, shard, row)
            index += shard["documents"]
        raise ValueError(f"--id {doc_id}: no document of {self.path} has this id")

    def document(self, place: Located) -> dict:
        """{"id", "source", "input_ids"} of the document at `place` (id and source None when
        its shard has no Parquet file)."""
        prefix = self.prefix(place.shard)
        if any(f.holds_ids for f in self.formats(place.shard)):
            return parquet_row(prefix, place.row)
        formats = self.formats(place.shard)
        if not formats:
            raise ValueError(f"{place.shard['name']}: none of its files is in a format tokfx reads")
        return {"id": None, "source": None, "input_ids": formats[0].document(prefix, place.row)}

    def per_source_file(self) -> dict[str, list[int]]:
        """file -> [documents, tokens], from the Parquet shards' source and num_tokens columns."""
        totals: dict[str, list[int]] = {}
        for shard in self.shards:
            self._with_ids(shard)
            for row in parquet_rows(self.prefix(shard), ["source", "num_tokens"]):
                counts = totals.setdefault(source_file(row["source"]), [0, 0])
                counts[0] += 1
                counts[1] += row["num_tokens"]
        return totals

    def mismatches(self) -> Iterator[str]:
        """One line per file that differs from the manifest: missing, of another size or sha256,
        holding other counts than the manifest's; a file in shards/ it does not list (its shards'
        and its indexes'); totals that do not add up."""
        listed = set()
        for shard in self.shards:
            yield from self._shard_mismatches(shard)
            listed |= set(shard["files"])
        # The tokenizer's files and the indexes over all the shards (shards/index.json: mds).
        for key in ("tokenizer_files", "indexes"):
            for relative, sha in self.manifest.get(key, {}).items():
                yield from self._file_mismatches(relative, sha, None)
        listed |= set(self.manifest.get("indexes", {}))
        folder = self.path / SHARDS_DIR
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if f"{SHARDS_DIR}/{path.name}" not in listed:
                    yield f"{SHARDS_DIR}/{path.name}: not in the manifest"
        totals = self.manifest["totals"]
        for key, field in (("documents_written", "documents"), ("tokens", "tokens")):
            summed = sum(shard[field] for shard in self.shards)
            if summed != totals[key]:
                yield f"{MANIFEST_JSON}: totals.{key} is {totals[key]:,}, its shards hold {summed:,}"

    def _file_mismatches(self, relative: str, sha: str, size: int | None) -> Iterator[str]:
        path = self.path / relative
        if not path.is_file():
            yield f"{relative}: missing"
            return
        found = path.stat().st_size
        if size is not None and found != size:
            yield f"{relative}: {found:,} bytes, the manifest says {size:,}"
        elif file_sha256(path) != sha:
            yield f"{relative}: sha256 differs from the manifest's"

    def _shard_mismatches(self, shard: dict) -> Iterator[str]:
        sizes = shard.get("sizes", {})
        bad = False
        for relative, sha in sorted(shard["files"].items()):
            for line in self._file_mismatches(relative, sha, sizes.get(relative)):
                bad = True
                yield line
        if bad:
            return  # the counts of a damaged file say nothing more
        expected = (shard["documents"], shard["tokens"])
        for format in self.formats(shard):
            # Named by the file that holds the counts (a format's last suffix).
            relative = f"{SHARDS_DIR}/{shard['name']}{format.suffixes[-1]}"
            try:
                counts = format.counts(self.prefix(shard))
            except (OSError, ValueError) as exc:
                yield f"{relative}: unreadable as {format.name}: {exc}"
                continue
            if counts != expected:
                yield (f"{relative}: {counts[0]:,} documents, {counts[1]:,} tokens;"
                       f" the manifest says {expected[0]:,} and {expected[1]:,}")
