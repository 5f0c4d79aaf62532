"""`tokfx encode`: text or corpus files in, ids out as JSON lines (with --output-dir, the Beam
pipeline instead: beam_jobs)."""
from __future__ import annotations

import json
import sys

from tokfx.formats.documents import Document
from tokfx.formats.readers import ReadOptions, read_documents, require_files
from tokfx.formats.readers.policy import FAIL
from tokfx.tokenizer import Tokenizer

NAME = "encode"
HELP = "encode text or corpus files with a tokenizer (directory or file: tokfx.json, tokenizer.json, sentencepiece .model, tekken.json, tiktoken's own rank files)"


def _located(path: str, doc: Document) -> dict:
    """Where an output record's ids come from: the file, and the line of a JSON-lines record
    (whose source is `path:line`; a .txt file, read with no separators, is one document)."""
    place = doc.source[len(path):]
    return {"source": path, "line": int(place[1:])} if place.startswith(":") else {"source": path}


def run(args) -> None:
    if args.text is None and not args.files:
        raise ValueError("nothing to encode: give --text TEXT or corpus files")
    require_files(args.files)
    tokenizer = Tokenizer.load(args.tokenizer)
    if args.segmenter:
        tokenizer = tokenizer.with_segmenter(args.segmenter)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.text is not None:
            print(json.dumps(tokenizer.encode(args.text)), file=out)
        # No separators: a .txt file is one document, its special tokens encoded as their ids.
        options = ReadOptions(text_field=args.text_field)
        for path in args.files:
            for doc in read_documents([path], options, FAIL):
                record = {**_located(path, doc), "input_ids": tokenizer.encode(doc.text)}
                print(json.dumps(record), file=out)
    finally:
        if out is not sys.stdout:
            out.close()
