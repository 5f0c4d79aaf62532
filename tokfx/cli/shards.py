"""`tokfx shards`: look into an output directory of `tokfx run` or `tokfx encode --output-dir`:
`inspect` (totals, per shard, per source file), `show` (a document's ids and its text, decoded
with the tokenizer the manifest names) and `verify` (every file against the manifest: exit 1 and
one line per mismatch)."""
from __future__ import annotations

import json
import os

from tokfx.cli.flags import add_flags
from tokfx.formats.shards.directory import ShardsDir, file_sha256
from tokfx.formats.shards.manifest import MANIFEST_JSON
from tokfx.formats.tokfx_json import tokenizer_hash
from tokfx.tokenizer import Tokenizer

NAME = "shards"
HELP = "look into an output directory of tokfx run or encode --output-dir: inspect, show, verify"


def inspect(args) -> None:
    out = ShardsDir(args.directory)
    manifest, totals = out.manifest, out.manifest["totals"]
    formats = sorted({f.name for shard in out.shards for f in out.formats(shard)})
    per_token = f" ({totals['bytes'] / totals['tokens']:.2f} bytes per token)" if totals["tokens"] else ""
    lines = [f"output:     {out.path}",
             f"tokenizer:  {manifest['tokenizer_hash']} ({_tokenizer_origin(manifest)})",
             f"documents:  {totals['documents_written']:,} written of {totals['documents_read']:,} read,"
             f" {totals['documents_rejected']:,} rejected, {totals['documents_empty']:,} empty;"
             f" {totals['files_rejected']:,} files rejected",
             f"tokens:     {totals['tokens']:,} from {totals['bytes']:,} bytes of text{per_token}",
             f"shards:     {len(out.shards):,} ({', '.join(formats) or 'no files'})",
             "",
             f"{'shard':<24}{'documents':>12}{'tokens':>14}{'text bytes':>16}{'file bytes':>16}"]
    for shard in out.shards:
        size = f"{sum(shard['sizes'].values()):,}" if "sizes" in shard else "-"
        lines.append(f"{shard['name']:<24}{shard['documents']:>12,}{shard['tokens']:>14,}"
                     f"{shard.get('bytes', 0):>16,}{size:>16}")
    if out.keeps_sources():
        lines += ["", f"{'documents':>12}{'tokens':>14}  source file"]
        lines += [f"{documents:>12,}{tokens:>14,}  {file}"
                  for file, (documents, tokens) in sorted(out.per_source_file().items())]
    else:
        lines += ["", "source files: not shown, the shards have no Parquet files (the documents'"
                      " sources are kept there: --format parquet)"]
    print("\n".join(lines))


def _tokenizer_origin(manifest: dict) -> str:
    if "tokenizer/tokfx.json" in manifest.get("tokenizer_files", {}):
        return "in tokenizer/"
    source = manifest.get("tokenizer_source")
    return f"loaded from {source['file']}" if source else "not in the output"


def show(args) -> None:
    if (args.doc_id is None) == (args.index is None):
        raise ValueError("tokfx shards show: give --id ID or --index N (one of them)")
    out = ShardsDir(args.directory)
    place = out.locate(args.index) if args.doc_id is None else out.find(args.doc_id)
    tokenizer = _tokenizer(out, args.tokenizer)
    document = out.document(place)
    ids = document["input_ids"]
    lines = [f"document:   {place.index:,} of {out.manifest['totals']['documents_written']:,}"
             f" ({place.shard['name']}, row {place.row:,})",
             *([f"id:         {document['id']}", f"source:     {document['source']}"]
               if document["id"] is not None else []),
             f"tokens:     {len(ids):,}",
             f"ids:        {json.dumps(ids)}",
             "text:",
             tokenizer.decode(ids)]
    print("\n".join(lines))


def _tokenizer(out: ShardsDir, given: str | None) -> Tokenizer:
    """The tokenizer the shards were encoded with: `given`, else the output's tokenizer/, else
    the file the manifest says it was loaded from (unchanged since); its hash checked against
    the manifest's."""
    manifest = out.manifest
    if given is not None:
        tokenizer, origin = Tokenizer.load(given), given
    elif "tokenizer/tokfx.json" in manifest.get("tokenizer_files", {}):
        origin = str(out.path / "tokenizer" / "tokfx.json")
        tokenizer = Tokenizer.load(origin)
    elif "tokenizer_source" in manifest:
        source = manifest["tokenizer_source"]
        origin = source["file"]
        if not os.path.isfile(origin):
            raise ValueError(f"{origin}: not found (the manifest's tokenizer_source): give --tokenizer")
        if file_sha256(origin) != source["sha256"]:
            raise ValueError(f"{origin}: changed since the shards were written (its sha256 is not the"
                             f" manifest's): give --tokenizer")
        tokenizer = Tokenizer.load(origin)
    else:
        raise ValueError(f"{out.path / MANIFEST_JSON} names no tokenizer file: give --tokenizer")
    if tokenizer_hash(tokenizer) != manifest["tokenizer_hash"]:
        raise ValueError(f"{origin}: not the tokenizer the shards were encoded with (its hash is not"
                         f" the manifest's tokenizer_hash)")
    return tokenizer


def verify(args) -> int:
    out = ShardsDir(args.directory)
    mismatches = list(out.mismatches())
    for line in mismatches:
        print(f"{out.path}/{line}")
    if mismatches:
        return 1
    files = sum(len(shard["files"]) for shard in out.shards) + len(out.manifest.get("tokenizer_files", {}))
    print(f"{out.path}: {files:,} files match {MANIFEST_JSON} ({len(out.shards):,} shards,"
          f" {out.manifest['totals']['documents_written']:,} documents)")
    return 0


SUBCOMMANDS = {
    "inspect": (inspect, "totals, per shard and per source file"),
    "show": (show, "a document's ids and its text (--id ID or --index N)"),
    "verify": (verify, "every file against the manifest's sha256, sizes and counts; exit 1 and one"
                       " line per mismatch"),
}


def add_subcommands(parser) -> None:
    sub = parser.add_subparsers(dest="shards_command", required=True)
    for name, (run, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=False)
        add_flags(p, f"shards {name}")
        p.set_defaults(run=run)
