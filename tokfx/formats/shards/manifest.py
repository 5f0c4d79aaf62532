"""manifest.json: written last into an output directory, its presence marks a complete output.

It records the config, the tokenizer hash (and the tokenizer's files with sha256 when the run
wrote them into the output; the file a tokenizer was loaded from, with its sha256, when it was), every shard's files with sha256 and size, and totals that add up: documents read =
documents written + documents rejected. No timings, so two runs over
the same input give the same bytes. `tokfx shards verify` checks a directory against it.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources

import fastjsonschema

from tokfx.version import __version__

MANIFEST_JSON = "manifest.json"
# The folder of the shards, in the output directory: the manifest names their files under it.
SHARDS_DIR = "shards"


@cache
def _validator():
    schema = resources.files("tokfx.schemas").joinpath("manifest.schema.json").read_text()
    return fastjsonschema.compile(json.loads(schema))


def build_manifest(config: Mapping, tokenizer_hash: str, alphabet: Mapping,
                   shards: Sequence[Mapping], totals: Mapping[str, int],
                   tokenizer_files: Mapping[str, str] | None = None,
                   tokenizer_source: Mapping[str, str] | None = None,
                   indexes: Mapping[str, str] | None = None) -> dict:
    """`alphabet`: the tokenizer's (tokfx.json's "alphabet"), which the shards' ids are over;
    `shards` in their order; `tokenizer_files`: path in the output -> sha256, when the output
    holds the tokenizer; `tokenizer_source`: {"file", "format", "sha256"} of the file the
    tokenizer was loaded from (Tokenizer.source), when it was (the tokenizer hash is of its
    canonical tokfx.json, so a tokenizer.json's own sha256 is what names the file given);
    `indexes`: path in the output -> sha256 of the files indexing all the shards of a format
    (--format mds: shards/index.json)."""
    written = sum(s["documents"] for s in shards)
    if totals["documents_read"] != written + totals["documents_rejected"]:
        raise ValueError(f"documents do not add up: read {totals['documents_read']},"
                         f" written {written}, rejected {totals['documents_rejected']}")
    manifest = {"format": "tokfx-shards", "tokfx_version": __version__,
                "tokenizer_hash": tokenizer_hash, "alphabet": dict(alphabet),
                "config": dict(config),
                "shards": [dict(s) for s in shards],
                "totals": {**totals, "documents_written": written}}
    if tokenizer_files:
        manifest["tokenizer_files"] = dict(tokenizer_files)
    if tokenizer_source:
        manifest["tokenizer_source"] = dict(tokenizer_source)
    if indexes:
        manifest["indexes"] = dict(indexes)
    validate_manifest(manifest)
    return manifest


def validate_manifest(manifest: Mapping) -> None:
    try:
        _validator()(manifest)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise ValueError(f"not a valid manifest.json: {exc.message}") from None


def manifest_json_bytes(manifest: Mapping) -> bytes:
    return (json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
