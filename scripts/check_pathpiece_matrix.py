"""Run the `tokfx train` commands of README.md's table of the PathPiece paper's 18 variants, as
written, on a small corpus: `corpus.txt` becomes a copy of CORPUS (default tests/fixtures/corpus.en),
`out/` a temporary directory and `--vocab-size 32768` `--vocab-size SIZE` (default 1000). Each
must exit 0 and write a tokfx.json with the row's algorithm, pattern and segmenter.

    python scripts/check_pathpiece_matrix.py [--corpus PATH] [--vocab-size 1000]

Uses the `tokfx` command beside this Python (the installed one).
"""
import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (\d+) \|.*\| `(tokfx train [^`]+)` \|$")


def rows() -> list[tuple[int, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = [(int(m[1]), m[2]) for line in text.splitlines() if (m := ROW.match(line))]
    if [rank for rank, _ in found] != list(range(1, 19)):
        raise SystemExit(f"README.md: expected table rows 1..18, found {[rank for rank, _ in found]}")
    return found


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT / "tests" / "fixtures" / "corpus.en"))
    parser.add_argument("--vocab-size", default="1000")
    args = parser.parse_args()
    tokfx = str(Path(sys.executable).parent / "tokfx")
    failures = 0
    with tempfile.TemporaryDirectory() as directory:
        corpus = Path(directory) / "corpus.txt"   # tokfx reads a file by its suffix
        corpus.write_bytes(Path(args.corpus).read_bytes())
        for rank, command in rows():
            argv = shlex.split(command)
            out = Path(directory) / f"row{rank}"
            argv = [tokfx if a == "tokfx" else str(corpus) if a == "corpus.txt" else str(out) if a == "out/"
                    else args.vocab_size if a == "32768" else a for a in argv] + ["-q"]
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True, text=True)
            seconds = time.perf_counter() - start
            problem = ""
            if done.returncode != 0:
                problem = f"exit {done.returncode}: {done.stderr.strip()[-500:]}"
            else:
                doc = json.loads((out / "tokfx.json").read_text(encoding="utf-8"))
                segmenter = doc.get("segmenter", {"name": "bpe"})["name"]
                want = (flag(argv, "--algorithm"), flag(argv, "--pattern"), flag(argv, "--segmenter"))
                got = (doc["algorithm"], doc["pattern"]["name"], segmenter)
                if got != want:
                    problem = f"tokfx.json has algorithm/pattern/segmenter {got}, the command asks {want}"
            failures += bool(problem)
            print(f"row {rank:2d}: {'FAIL ' + problem if problem else 'ok'} ({seconds:.1f} s)  {command}")
    print(f"{18 - failures} of 18 commands ran and wrote the tokenizer they name")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
