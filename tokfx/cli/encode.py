"""`tokfx encode`: text or corpus files in, ids out as JSON lines (with --output-dir, the Beam
pipeline instead: beam_jobs)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tokfx.formats.readers.jsonl import is_jsonl, iter_jsonl_texts
from tokfx.formats.readers.text import read_text_file
from tokfx.tokenizer import Tokenizer

NAME = "encode"
HELP = "encode text or corpus files with a trained tokenizer"


def run(args) -> None:
    if args.text is None and not args.files:
        raise ValueError("nothing to encode: give --text TEXT or corpus files")
    tokenizer = Tokenizer.load(args.tokenizer)
    if args.segmenter:
        tokenizer = tokenizer.with_segmenter(args.segmenter)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.text is not None:
            print(json.dumps(tokenizer.encode(args.text)), file=out)
        for name in args.files:
            path = Path(name)
            if not path.exists():
                raise FileNotFoundError(f"{path}: no such file")
            if is_jsonl(path):
                for line_no, text in iter_jsonl_texts(path, args.text_field):
                    record = {"source": str(path), "line": line_no, "input_ids": tokenizer.encode(text)}
                    print(json.dumps(record), file=out)
            else:
                record = {"source": str(path), "input_ids": tokenizer.encode(read_text_file(path))}
                print(json.dumps(record), file=out)
    finally:
        if out is not sys.stdout:
            out.close()
