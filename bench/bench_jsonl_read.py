"""Reading JSON lines: the text field of every record by json.loads (the reader before the
scanner), by msgspec (a Struct with the text field only: the other fields checked and skipped),
and by tokfx._json_fields.FieldScanner; then the whole JSON-lines reader (zstd, lines, records,
Documents) with the scanner and without it (json.loads for every line, as before).

    cd /tmp && PYTHONPATH=/path/to/checkout python /path/to/checkout/bench/bench_jsonl_read.py \
        --corpus DIR_OF_JSONL_ZST --files 4 --repeats 5

The files are the first `--files` of a bench_pipeline.py corpus (or any .jsonl.zst with a
`text` field), decompressed into lines before the clock for the parsers, read from their
compressed bytes in memory for the reader. CPU seconds (time.process_time), the median of
`--repeats`, the ways alternated within each repeat, so other load on the machine weighs on all
alike. Every way's texts are checked equal to json.loads's. msgspec is optional (not a
dependency of tokfx): its rows are left out when it is not installed; it does not check the
UTF-8 of the strings it skips (json.loads refuses a line with any invalid UTF-8), so a row adds
that check (a decode of the line) to it. A benchmark, not a test: it prints.
"""
from __future__ import annotations

import argparse
import glob
import io
import json
import statistics
import sys
import time
from pathlib import Path

import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tokfx._json_fields import FieldScanner  # noqa: E402
from tokfx.formats.readers import ReadOptions, jsonl  # noqa: E402


def parsers() -> dict:
    """{name: lines -> texts}."""
    scanner = FieldScanner(("text",))
    ways = {"json.loads": lambda lines: [json.loads(line)["text"] for line in lines],
            "FieldScanner": lambda lines: [scanner.fields(line)["text"] for line in lines]}
    try:
        import msgspec
    except ImportError:
        return ways

    class Record(msgspec.Struct):
        text: str

    decoder = msgspec.json.Decoder(Record)
    ways["msgspec"] = lambda lines: [decoder.decode(line).text for line in lines]
    ways["msgspec + UTF-8 check"] = lambda lines: [
        decoder.decode(line).text for line in lines if line.decode("utf-8", "surrogatepass")]
    return ways


def read_texts(files: list[tuple[str, bytes]], scanned: bool) -> list[str]:
    """The documents' texts by the JSON-lines reader, with the scanner or json.loads alone."""
    kept = jsonl._field_scanner
    if not scanned:
        jsonl._field_scanner = lambda options: None
    try:
        return [doc.text for name, data in files
                for doc in jsonl.read_jsonl(io.BytesIO(data), name, ReadOptions())]
    finally:
        jsonl._field_scanner = kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="a directory of .jsonl.zst files")
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    names = sorted(glob.glob(str(Path(args.corpus) / "*.jsonl.zst")))[:args.files]
    if not names:
        sys.exit(f"no .jsonl.zst files in {args.corpus}")
    files = [(name, Path(name).read_bytes()) for name in names]
    lines = [line for _, data in files
             for line in zstandard.ZstdDecompressor().decompressobj().decompress(data).splitlines(keepends=True)
             if line.strip()]
    size = sum(map(len, lines))
    expected = [json.loads(line)["text"] for line in lines]
    ways = {name: (lambda way=way: way(lines)) for name, way in parsers().items()}
    ways["reader, json.loads"] = lambda: read_texts(files, False)
    ways["reader, FieldScanner"] = lambda: read_texts(files, True)
    times: dict = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, way in ways.items():
            start = time.process_time()
            texts = way()
            times[name].append(time.process_time() - start)
            if texts != expected:
                sys.exit(f"{name}: texts differ from json.loads's")
    print(f"{len(names)} files, {len(lines)} records, {size / 1e6:.1f} MB of JSON lines; "
          f"CPU s, median of {args.repeats}")
    base = {"reader": statistics.median(times["reader, json.loads"]),
            "parse": statistics.median(times["json.loads"])}
    print(f"{'way':<24} {'CPU s':>8} {'MB/s':>8} {'x json.loads':>13}")
    for name, measured in times.items():
        median = statistics.median(measured)
        ratio = base["reader" if name.startswith("reader") else "parse"] / median
        print(f"{name:<24} {median:8.4f} {size / 1e6 / median:8.1f} {ratio:13.2f}")


if __name__ == "__main__":
    main()
