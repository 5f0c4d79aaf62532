"""BPE with byte fallback: tokfx's `chars` alphabet against sentencepiece's BPE trainer (issue 17).

Same training text, same number of pieces, same normalization. Per corpus and vocabulary size V:

- sentencepiece: `model_type=bpe, byte_fallback=True, normalization_rule_name="identity",
  remove_extra_whitespaces=False, character_coverage=0.9995, input_sentence_size=0`,
  `max_sentence_length` 1 GiB (nothing skipped), its default splitting options, vocab_size V;
  once with `num_threads=1` and once with `num_threads=2`. Its V pieces include the three meta
  pieces <unk>, <s>, </s>.
- tokfx: `tokfx.train(lines, "bpe", vocab_size=V - 3, alphabet="chars", pattern="sentencepiece",
  character_coverage=0.9995, special_tokens=[])`: the same number of usable pieces (256 bytes,
  the covered characters, the merged pieces) as sentencepiece, whose other 3 ids are its meta
  pieces. (tokfx's own counting is timed apart: `count_pretokens` + `train(counts)`, exactly
  what `train(lines)` runs.)
- for the reading only, sentencepiece once more with the splitting options loosened towards
  tokfx's pre-tokenization (`split_by_unicode_script=False, split_by_number=False,
  allow_whitespace_only_pieces=True, max_sentencepiece_length=64`, and its unknown piece named
  `<spm-unk>`, so that wikitext's literal `<unk>` is training text, not a meta piece that
  sentencepiece blanks out of its input): "spm loosened".

Both read the same file (the training documents joined by newlines): sentencepiece reads it
line by line, tokfx's child splits it at "\\n" and drops empty lines, as sentencepiece does.
Each trainer runs in its own child process, peers taking turns, `--runs` rounds:

- training time: wall clock inside the child from before reading the file to the trained model
  (sentencepiece: its `train` call, which reads the file and writes the model; tokfx: reading,
  splitting, counting and training; imports excluded), median over the rounds; the child's CPU
  time (user + system, imports included) from os.wait4;
- peak RSS: the child's VmHWM at its end (not wait4's ru_maxrss, which on Linux starts from the
  parent's peak); "+" is above a child that only imports its library;
- CTC: corpus token count of the held-out lines (non-empty, split at "\\n") with each model's own
  encoder (tokfx `Tokenizer.encode`, sentencepiece `encode`), and tokens per character. Check:
  tokfx's tokenizer saved as tokenizer.model, encoded by sentencepiece, gives tokfx's CTC (and
  its ids, line by line);
- vocabulary overlap: Jaccard of the piece strings (U+2581 spelled the same on both sides),
  over the characters and merged pieces (byte and meta pieces left out), and over the merged
  pieces alone.

Held-out text as bench_unigram.split: en_10M holds out wikitext2_test (its last document);
zh_5M and ja_1M their last 10 % of lines.

Issue 17's targets, printed as met or not: held-out CTC within 1 % of sentencepiece's (tokfx /
spm <= 1.01), training time at most sentencepiece's (at 1 and at 2 threads).

    nice -n 10 python bench/bench_spm_bpe.py [--runs 3] [--only en_10M:8000 ...] [--quick]
"""
import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_unigram import split  # noqa: E402

META = 3  # sentencepiece's <unk>, <s>, </s>
COVERAGE = 0.9995
# ja_1M supports about 26,000 pieces: past that every pair left occurs once and BPE spells whole
# lines as tokens (bench/README.md), so it is run at 8,000 only.
CONFIGS = [("en_10M", 8000), ("en_10M", 32000), ("zh_5M", 8000), ("zh_5M", 32000), ("ja_1M", 8000)]
QUICK = [("ja_1M", 8000)]
LOOSENED = dict(split_by_unicode_script=False, split_by_number=False, allow_whitespace_only_pieces=True,
                max_sentencepiece_length=64, unk_piece="<spm-unk>")


# --- the children -------------------------------------------------------------------------

def read_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().split("\n") if line]


def child_base_tokfx(path, vocab_size, out):
    import tokfx  # noqa: F401
    return {"seconds": 0.0}


def child_base_spm(path, vocab_size, out):
    import sentencepiece  # noqa: F401
    return {"seconds": 0.0}


def child_tokfx(path, vocab_size, out):
    import tokfx

    start = time.perf_counter()
    lines = read_lines(path)
    read = time.perf_counter()
    counts = tokfx.count_pretokens(lines, "sentencepiece", [])
    counted = time.perf_counter()
    tok = tokfx.train(counts, "bpe", vocab_size=vocab_size - META, alphabet="chars", pattern="sentencepiece",
                      character_coverage=COVERAGE, special_tokens=[])
    end = time.perf_counter()
    note = tok.save(out)
    return {"seconds": end - start, "read": read - start, "count": counted - read, "train": end - counted,
            "note": note}


def spm_child(threads, model_type="bpe", **extra):
    def train(path, vocab_size, out):
        import sentencepiece as spm

        start = time.perf_counter()
        spm.SentencePieceTrainer.train(
            input=path, model_prefix=str(Path(out) / "spm"), model_type=model_type, vocab_size=vocab_size,
            byte_fallback=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
            character_coverage=COVERAGE, input_sentence_size=0, max_sentence_length=1 << 30,
            num_threads=threads, minloglevel=2, **extra)
        return {"seconds": time.perf_counter() - start}
    return train


CHILDREN = {"base-tokfx": child_base_tokfx, "base-spm": child_base_spm, "tokfx": child_tokfx, "spm1": spm_child(1), "spm2": spm_child(2),
            "spm-loose": spm_child(1, **LOOSENED)}
NAMES = {"tokfx": "tokfx bpe, chars", "spm1": "sentencepiece bpe, 1 thread", "spm2": "sentencepiece bpe, 2 threads",
         "spm-loose": "spm loosened (reading only)"}


def run_child(which: str, path: str, vocab_size: int, out: str, script: str = __file__) -> dict:
    """Run `script --child which` (this bench's, or another's with the same child flags); its
    result.json, with its CPU time."""
    os.makedirs(out, exist_ok=True)
    process = subprocess.Popen([sys.executable, script, "--child", which, "--path", path, "--out", out,
                                "--vocab-size", str(vocab_size)])
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{which} child failed with exit {os.waitstatus_to_exitcode(status)}")
    found = json.loads(Path(out, "result.json").read_text())
    found["cpu"] = usage.ru_utime + usage.ru_stime
    return found


def peak_rss_mb() -> float:
    """This process's peak RSS since its exec (VmHWM). Not wait4's ru_maxrss: Linux carries the
    parent's peak over the fork and exec into it, so a child of a large parent reports the
    parent's size."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


# --- the parent ---------------------------------------------------------------------------

def spm_pieces(sp) -> tuple[set[str], int]:
    """(the normal pieces' strings, the number of characters among them)."""
    normal = {sp.id_to_piece(i) for i in range(sp.get_piece_size())
              if not (sp.is_byte(i) or sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i))}
    return normal, sum(len(p) == 1 for p in normal)


def tokfx_pieces(tok) -> set[str]:
    chars, base = tok.alphabet.characters, tok.alphabet.char_base
    return {"".join(chars[s - base] for s in t) for t in tok.tokens if t[0] >= base}


def jaccard(a: set, b: set) -> str:
    return f"{len(a & b) / len(a | b):.3f} ({len(a & b):,} shared)"


def our_model_under_spm(tok, directory: str, lines: list[str], ours: list[list[int]]) -> str:
    """tokfx's tokenizer.model encoded by sentencepiece: its CTC and ids against tokfx's."""
    import sentencepiece as spm

    path = os.path.join(directory, "tokenizer.model")
    note = ""
    try:
        sp = spm.SentencePieceProcessor(model_file=path)
    except RuntimeError as exc:
        # tokfx names the unknown piece it adds <unk> even where a learned piece is "<unk>"
        # (wikitext's literal <unk>): sentencepiece refuses the duplicate. Rename it here.
        from tokfx.formats.sentencepiece_model import Piece, write_sentencepiece_model
        from tokfx.formats.sentencepiece_tokenizer import sentencepiece_model

        model, _ = sentencepiece_model(tok)
        pieces = tuple(Piece("<spm-unk>", p.score, p.type) if p.type == "unknown" else p for p in model.pieces)
        path = os.path.join(directory, "renamed.model")
        write_sentencepiece_model(path, dataclasses.replace(model, pieces=pieces))
        sp = spm.SentencePieceProcessor(model_file=path)
        note = f" [sentencepiece refused tokfx's tokenizer.model ({exc}); checked with its unknown piece renamed]"
    theirs = sp.encode(lines)
    same = sum(a == b for a, b in zip(theirs, ours))
    ctc, ours_ctc = sum(map(len, theirs)), sum(map(len, ours))
    verdict = "equal" if ctc == ours_ctc else f"DIFFERS ({ctc:,} vs {ours_ctc:,})"
    return f"CTC {ctc:,} {verdict}; identical ids on {same:,} of {len(lines):,} lines{note}"


def bench(corpus: str, vocab_size: int, runs: int, directory: str) -> None:
    import sentencepiece as spm

    import tokfx

    docs, held, held_what = split(corpus)
    path = os.path.join(directory, f"{corpus}.txt")
    Path(path).write_text("\n".join(docs), encoding="utf-8")
    train_lines = read_lines(path)
    held_lines = [line for line in held.split("\n") if line]
    held_chars = sum(map(len, held_lines))
    print(f"\n== {corpus}, vocab {vocab_size:,} (sentencepiece {vocab_size:,} with its {META} meta pieces; tokfx"
          f" {vocab_size - META:,}): training {os.path.getsize(path):,} bytes in {len(train_lines):,} lines;"
          f" held out {held_what}: {len(held_lines):,} lines, {held_chars:,} characters", flush=True)
    order = ["tokfx", "spm1", "spm2", "spm-loose"]
    results = {w: [] for w in ["base-tokfx", "base-spm"] + order}
    out = {w: os.path.join(directory, f"{corpus}-{vocab_size}-{w}") for w in results}
    for w in ("base-tokfx", "base-spm"):
        results[w].append(run_child(w, path, vocab_size, out[w]))
    for r in range(runs):
        # Peers take turns, the order rotating, so that load from other jobs falls on all alike.
        for w in order[r % len(order):] + order[:r % len(order)]:
            results[w].append(run_child(w, path, vocab_size, out[w]))
    base = {w: results["base-tokfx" if w == "tokfx" else "base-spm"][0]["peak_mb"] for w in order}
    tok = tokfx.Tokenizer.load(out["tokfx"])
    ours = [tok.encode(line) for line in held_lines]
    models = {w: spm.SentencePieceProcessor(model_file=os.path.join(out[w], "spm.model")) for w in order[1:]}
    ctc = {"tokfx": sum(map(len, ours))}
    ctc.update({w: sum(map(len, sp.encode(held_lines))) for w, sp in models.items()})
    pieces = {"tokfx": tokfx_pieces(tok)}
    chars = {"tokfx": len(tok.alphabet.characters)}
    for w, sp in models.items():
        pieces[w], chars[w] = spm_pieces(sp)
    seconds = {w: statistics.median(r["seconds"] for r in results[w]) for w in order}

    print(f"{'':32s} {'train s':>8s} {'(runs)':>18s} {'CPU s':>6s} {'peak MB':>8s} {'(+)':>6s} {'chars':>6s}"
          f" {'merged':>7s} {'held-out CTC':>13s} {'tok/char':>9s} {'CTC/spm1':>9s}")
    for w in order:
        runs_text = "/".join(f"{r['seconds']:.2f}" for r in results[w])
        cpu = statistics.median(r["cpu"] for r in results[w])
        peak = statistics.median(r["peak_mb"] for r in results[w])
        print(f"{NAMES[w]:32s} {seconds[w]:8.2f} {runs_text:>18s} {cpu:6.2f} {peak:8.0f} {peak - base[w]:+6.0f}"
              f" {chars[w]:6,d} {len(pieces[w]) - chars[w]:7,d} {ctc[w]:13,d} {ctc[w] / held_chars:9.4f}"
              f" {ctc[w] / ctc['spm1']:9.4f}")
    parts = results["tokfx"]
    print(f"tokfx's time, medians: reading {statistics.median(r['read'] for r in parts):.2f} s, counting"
          f" {statistics.median(r['count'] for r in parts):.2f} s, training {statistics.median(r['train'] for r in parts):.2f} s"
          f" (save: {parts[-1]['note']})")
    print(f"peak RSS of a child that only imports tokfx: {base['tokfx']:.0f} MB, only sentencepiece:"
          f" {base['spm1']:.0f} MB ('+' is above these)")
    same = [models["spm1"].id_to_piece(i) for i in range(models["spm1"].get_piece_size())] == \
        [models["spm2"].id_to_piece(i) for i in range(models["spm2"].get_piece_size())]
    print(f"sentencepiece at 1 and 2 threads: {'the same' if same else 'DIFFERENT'} pieces")
    print(f"vocabulary Jaccard tokfx vs spm1: characters + merged {jaccard(pieces['tokfx'], pieces['spm1'])},"
          f" merged only {jaccard(*(set(p for p in pieces[w] if len(p) > 1) for w in ('tokfx', 'spm1')))};"
          f" vs spm loosened: {jaccard(pieces['tokfx'], pieces['spm-loose'])}")
    print(f"tokfx's tokenizer.model under sentencepiece: {our_model_under_spm(tok, out['tokfx'], held_lines, ours)}")
    ratio = ctc["tokfx"] / ctc["spm1"]
    print(f"target CTC within 1 %: tokfx / spm = {ratio:.4f} -> {'met' if ratio <= 1.01 else 'NOT met'}"
          f" (vs spm loosened {ctc['tokfx'] / ctc['spm-loose']:.4f})")
    for w in ("spm1", "spm2"):
        t = seconds["tokfx"] / seconds[w]
        print(f"target time at most sentencepiece's ({NAMES[w]}): tokfx / spm = {t:.2f}"
              f" -> {'met' if t <= 1 else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="+", metavar="CORPUS:VOCAB", help="e.g. en_10M:8000 zh_5M:32000")
    parser.add_argument("--quick", action="store_true", help="ja_1M at 8,000, one round")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--vocab-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        found = CHILDREN[args.child](args.path, args.vocab_size, args.out)
        found["peak_mb"] = peak_rss_mb()
        Path(args.out, "result.json").write_text(json.dumps(found))
        return
    import sentencepiece

    import tokfx
    configs = QUICK if args.quick else CONFIGS
    if args.only:
        configs = [(c, int(v)) for c, v in (item.split(":") for item in args.only)]
    runs = 1 if args.quick else args.runs
    print(f"tokfx {tokfx.__version__}, sentencepiece {sentencepiece.__version__}, Python {sys.version.split()[0]},"
          f" {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {runs} round(s)")
    with tempfile.TemporaryDirectory() as directory:
        for corpus, vocab_size in configs:
            bench(corpus, vocab_size, runs, directory)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
