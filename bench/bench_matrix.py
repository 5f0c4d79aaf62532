"""The PathPiece paper's 18 Table 1 variants (README.md's table) trained on one corpus and
compared by `tokfx eval` on held-out text: CTC, bytes/token, Rényi efficiency, training time,
our CTC rank, and beside it what the paper says of the variants' CTC.

- The commands are README.md's own: each row's `tokfx train corpus.txt -o out/ ... --vocab-size
  32768` is read from the table (the pattern tests/cli/test_readme_matrix.py reads it with) and run
  as written, with the training text for `corpus.txt`, the row's directory for `out/` and
  `--vocab-size` set to this script's (32,768 unless told).
- Text: as bench_unigram.py splits it. en_10M: training on its first 4 documents (the three
  novels and wikitext2_valid), wikitext2_test (its last document) held out; en_5M: training on
  all of it, wikitext2_test held out (not in en_5M). The training text is written to a .txt file
  with `<|endoftext|>` between the documents, the held-out text to another (one document).
- Training time: wall clock of the whole `tokfx train` process (reading and counting the .txt,
  training, saving; interpreter start-up included), one training at a time unless --jobs. Its
  stderr (tokfx's progress lines) is kept in ROW.log.
- Cache: WORKDIR/CORPUS-VOCAB/ROW/ holds each tokenizer and ROW.json the command and its time; a
  rerun with the same command does not retrain (delete the directory to retrain). A training that
  runs past --timeout is stopped and recorded as such, and left out of the eval.
- Eval: one `tokfx eval` over every trained row's directory on the held-out file, into
  WORKDIR/CORPUS-VOCAB/eval (metrics.json, metrics.md, figures with matplotlib); and, unless
  --no-in-sample, a second one on the training text itself (eval-training-text, no figures) for
  an in-sample CTC column: what each construction optimised, beside what carries to new text.
- The paper's column: the repository has no per-variant CTC figures from the paper, only issue
  14's summary of it: PathPiece lowest, Space pre-tokenization and SaGe from a Unigram initial
  vocabulary highest. The column says which of those groups a row falls in, nothing more.

    nice -n 15 .venv/bin/python bench/bench_matrix.py [--corpus en_10M] [--vocab-size 32768]
        [--rows 1,3,5-7] [--workdir /tmp/tokfx-matrix] [--jobs 1] [--timeout 1500] [--no-in-sample]
"""
import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_unigram import split  # noqa: E402
from corpora import SEPARATOR  # noqa: E402

README = ROOT / "README.md"
# A row of README.md's table, as tests/cli/test_readme_matrix.py reads it, with its cells.
ROW = re.compile(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| `(tokfx train [^`]+)` \|$")
TOKFX = Path(sys.executable).with_name("tokfx")


def readme_rows() -> list[dict]:
    """README.md's 18 rows: rank, constructor, initial vocabulary, pre-tokenization,
    segmentation (reconstruction marks `\\*` dropped) and the command."""
    rows = []
    for line in README.read_text(encoding="utf-8").splitlines():
        if m := ROW.match(line):
            cells = [c.replace("\\*", "").strip() for c in m.groups()[1:5]]
            rows.append({"rank": int(m[1]), "constructor": cells[0], "initial": cells[1],
                         "pretokenization": cells[2], "segmentation": cells[3], "command": m[6]})
    if [r["rank"] for r in rows] != list(range(1, 19)):
        raise SystemExit(f"README.md's matrix table: expected rows 1..18, found {[r['rank'] for r in rows]}")
    return rows


def paper_ctc(row: dict) -> str:
    """Which group of the paper's CTC ordering (as issue 14 sums it up) the row belongs to."""
    groups = []
    if row["constructor"].startswith("PathPiece"):
        groups.append("PathPiece: lowest")
    if row["pretokenization"].startswith("Space"):
        groups.append("Space: highest")
    if row["constructor"] == "SaGe" and row["initial"] == "Unigram":
        groups.append("SaGe from Unigram: highest")
    return "; ".join(groups) or "between"


def label(row: dict) -> str:
    initial = f" from {row['initial']}" if row["initial"] not in ("—", "-") else ""
    return f"{row['constructor']}{initial}, {row['pretokenization']}, {row['segmentation']}"


def parse_rows(text: str) -> list[int]:
    """'1,3,5-7' -> [1, 3, 5, 6, 7]."""
    chosen = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        chosen.update(range(int(first), int(last or first) + 1))
    return sorted(chosen)


def argv_of(command: str, corpus: Path, out: Path, vocab_size: int) -> list[str]:
    """The README command as an argument list for this run."""
    argv = shlex.split(command)[1:]
    assert argv[:2] == ["train", "corpus.txt"] and argv[argv.index("-o") + 1] == "out/", command
    argv[1] = str(corpus)
    argv[argv.index("-o") + 1] = str(out)
    argv[argv.index("--vocab-size") + 1] = str(vocab_size)
    return argv


def train_row(row: dict, corpus: Path, base: Path, vocab_size: int, timeout: float | None) -> dict:
    """Train one row (or take it from the cache); the row's record."""
    name = f"row{row['rank']:02d}"
    out, record_file, log = base / name, base / f"{name}.json", base / f"{name}.log"
    argv = argv_of(row["command"], corpus, out, vocab_size)
    if record_file.exists():
        record = json.loads(record_file.read_text())
        if record["argv"] == argv and (record["status"] != "ok" or (out / "tokfx.json").exists()):
            print(f"{name}: cached ({record['status']}, {record['seconds']:.1f} s)", file=sys.stderr)
            return record
    print(f"{name}: tokfx {shlex.join(argv)}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    with open(log, "w") as err:
        process = subprocess.Popen([str(TOKFX), *argv], cwd=base, stdout=subprocess.DEVNULL, stderr=err,
                                   start_new_session=True)
        try:
            code = process.wait(timeout=timeout)
            status = "ok" if code == 0 else f"failed (exit {code}, see {log})"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)  # its own session: the training and its counting workers
            process.wait()
            status = f"stopped after {timeout:.0f} s"
    seconds = time.perf_counter() - start
    record = {"row": row["rank"], "argv": argv, "status": status, "seconds": seconds}
    record_file.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{name}: {status}, {seconds:.1f} s", file=sys.stderr, flush=True)
    return record


def run_eval(rows: list[dict], base: Path, corpus: Path, out: Path, plots: bool) -> tuple[dict, dict]:
    """One `tokfx eval` over the rows' directories on `corpus`: ({rank: CTC}, {rank: metrics})."""
    subprocess.run([str(TOKFX), "eval", *(str(base / f"row{r['rank']:02d}") for r in rows), "--corpus", str(corpus),
                    "-o", str(out), "-q", *([] if plots else ["--no-plots"])],
                   cwd=base, check=True, stdout=subprocess.DEVNULL)
    report = json.loads((out / "metrics.json").read_text())["tokenizers"]
    metrics = {r["rank"]: report[f"row{r['rank']:02d}"]["metrics"] for r in rows}
    return {rank: m["ctc"] for rank, m in metrics.items()}, metrics


def ctc_ranks(ctc: dict) -> dict:
    """{rank: our CTC rank}, 1 = fewest tokens (ties by README row)."""
    return {rank: i for i, rank in enumerate(sorted(ctc, key=lambda k: (ctc[k], k)), start=1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="en_10M", choices=("en_10M", "en_5M"))
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--rows", default="1-18", help="README rows (the paper's ranks), e.g. 1,3,5-7")
    parser.add_argument("--workdir", default="/tmp/tokfx-matrix")
    parser.add_argument("--jobs", type=int, default=1, help="trainings run at once")
    parser.add_argument("--in-sample", action=argparse.BooleanOptionalAction, default=True,
                        help="also count the tokens of the training text (a second tokfx eval, no figures)")
    parser.add_argument("--timeout", type=float, default=0, help="stop a training after this many seconds (0: never)")
    args = parser.parse_args()

    rows = {r["rank"]: r for r in readme_rows()}
    chosen = [rows[n] for n in parse_rows(args.rows)]
    base = Path(args.workdir).resolve() / f"{args.corpus}-{args.vocab_size}"
    base.mkdir(parents=True, exist_ok=True)
    docs, held, held_what = split(args.corpus)
    train_file, held_file = base / "train.txt", base / "held_out.txt"
    train_text = SEPARATOR.join(docs)
    for path, text in ((train_file, train_text), (held_file, held)):
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    print(f"training text: {args.corpus}, {len(docs)} documents, {len(train_text.encode()):,} bytes;"
          f" held out: {held_what}, {len(held.encode()):,} bytes; vocab_size {args.vocab_size:,}", flush=True)

    start = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        records = list(pool.map(lambda r: train_row(r, train_file, base, args.vocab_size, args.timeout or None),
                                chosen))
    trained = [r for r, rec in zip(chosen, records) if rec["status"] == "ok"]
    if not trained:
        raise SystemExit("no row trained")
    eval_start = time.perf_counter()
    held_ctc, metrics = run_eval(trained, base, held_file, base / "eval", plots=True)
    eval_seconds = time.perf_counter() - eval_start
    train_ctc, _ = run_eval(trained, base, train_file, base / "eval-training-text", plots=False) if args.in_sample else ({}, {})
    ours, ours_in = ctc_ranks(held_ctc), ctc_ranks(train_ctc)

    print(f"\n| row | variant | CTC | bytes/token | Rényi eff. (α=2.5) | training (wall) | our CTC rank"
          f" (1 fewest, of {len(held_ctc)}) |" + (" in-sample CTC (rank) |" if args.in_sample else "")
          + " the paper's CTC (issue 14) |")
    print("|---:|---|---:|---:|---:|---:|---:|" + ("---:|" if args.in_sample else "") + "---|")
    for row, record in zip(chosen, records):
        rank = row["rank"]
        m = metrics.get(rank) if record["status"] == "ok" else None
        time_cell = f"{record['seconds']:.1f} s" if record["status"] == "ok" else record["status"]
        cells = ([f"{m['ctc']:,}", f"{m['bytes_per_token']:.3f}", f"{m['renyi_efficiency']:.4f}", time_cell,
                  str(ours[rank])] if m else ["—", "—", "—", time_cell, "—"])
        if args.in_sample:
            cells.append(f"{train_ctc[rank]:,} ({ours_in[rank]})" if m else "—")
        print(f"| {rank} | {label(row)} | " + " | ".join(cells) + f" | {paper_ctc(row)} |")
    total = sum(rec["seconds"] for rec in records)
    print(f"\ntraining {total:.1f} s in all (cached rows count their first run); eval of {len(trained)}"
          f" tokenizers on the held-out text {eval_seconds:.1f} s; this run {time.perf_counter() - start:.1f} s;"
          f" report {base / 'eval'}")

if __name__ == "__main__":
    main()
