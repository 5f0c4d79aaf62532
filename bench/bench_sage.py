"""SaGe: ours against the official package (sage-tokenizer 2.0.0), and against BPE on en_10M.

Anchor: botchan (normalised) then wikitext2_valid lines up to 457 KB, one initial vocabulary
(our BPE, 4,096 tokens, GPT-2 pattern, no special token) given to both, schedule 4,096 3,584
3,072 2,560 2,048 1,024, embeddings at 4,096 3,072 2,560 2,048, max width 16. Ours: wall time
of tokfx.train (pre-token counting excluded, initial BPE included), median of --runs. Official:
wall time of SaGeVocabBuilder.build_vocab in its own venv (numpy < 2: see bench/README.md), run
in a scratch directory (it writes data/, logs/, results/). Jaccard of the final vocabularies.

--en10m: our SaGe 16,384 -> 8,192 on en_10M under both contexts (time per round from the
progress output) and tokens per byte of its greedy encoding vs BPE of 8,192 tokens. --en10m-line (alone): SaGe with
context="line" at its defaults (32,768 -> 8,192) on en_10M vs BPE of 8,192: corpus token counts
on wikitext2_test and whether frequent short words survive.

    .venv/bin/python bench/bench_sage.py [--runs 3] [--official-runs 1]
        [--official-python /tmp/sage-official/bin/python] [--workers 1] [--official-seed-check] [--en10m]
"""
import argparse
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpora import CORPORA, _normalised, load  # noqa: E402

import tokfx  # noqa: E402
from tokfx.counting import count_lines  # noqa: E402

SCHEDULE = [4096, 3584, 3072, 2560, 2048, 1024]
EMBEDDINGS = [4096, 3072, 2560, 2048]
ANCHOR_BYTES = 457_000

OFFICIAL_DRIVER = """
import sys, time
from sage_tokenizer.SaGeVocabBuilder import SaGeVocabBuilder
schedule = [int(x) for x in sys.argv[1].split(",")]
embeddings = [int(x) for x in sys.argv[2].split(",")]
builder = SaGeVocabBuilder(schedule, embeddings, max_len=16, workers_number=int(sys.argv[3]),
                           random_seed=int(sys.argv[4]))
start = time.perf_counter()
builder.build_vocab("anchor", "corpus.txt", "initial.vocab")
print(time.perf_counter() - start)
"""


def anchor_text() -> str:
    lines = (_normalised("sentencepiece/botchan.txt") + "\n").splitlines(keepends=True) + \
        (_normalised("english/wikitext2_valid.txt") + "\n").splitlines(keepends=True)
    out, size = [], 0
    for line in lines:
        if size + len(line.encode("utf-8")) > ANCHOR_BYTES:
            break
        out.append(line)
        size += len(line.encode("utf-8"))
    return "".join(out)


def run_official(python: str, text: str, initial: list[bytes], workers: int,
                 seed: int = 692653) -> tuple[float, set[bytes]]:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "data").mkdir()
        (work / "corpus.txt").write_text(text, encoding="utf-8")
        (work / "initial.vocab").write_text("".join(t.hex() + "\n" for t in initial))
        (work / "driver.py").write_text(OFFICIAL_DRIVER)
        start = time.perf_counter()
        done = subprocess.run([python, "driver.py", ",".join(map(str, SCHEDULE)),
                               ",".join(map(str, EMBEDDINGS)), str(workers), str(seed)],
                              cwd=work, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode:
            raise RuntimeError(f"official SaGe failed:\n{done.stderr[-3000:]}")
        final = work / "results" / "anchor" / "sage_vocabs" / f"active_vocab_{SCHEDULE[-1]}.vocab"
        return wall, {bytes.fromhex(line) for line in final.read_text().split()}


def jaccard(a: set[bytes], b: set[bytes]) -> str:
    multi_a, multi_b = {t for t in a if len(t) > 1}, {t for t in b if len(t) > 1}
    return f"{len(a & b) / len(a | b):.3f} (multi-byte tokens only: {len(multi_a & multi_b) / len(multi_a | multi_b):.3f})"


def anchor(args) -> None:
    text = anchor_text()
    counts = tokfx.count_pretokens(text, special_tokens=())
    initial = tokfx.train(counts, "bpe", vocab_size=SCHEDULE[0], special_tokens=())
    initial_tokens = [bytes(t) for t in initial.tokens]
    print(f"anchor corpus: {len(text.encode('utf-8')):,} bytes, {len(counts):,} distinct pre-tokens;"
          f" initial BPE vocabulary {len(initial_tokens):,}")
    ours_seconds, ours = [], None
    for _ in range(args.runs):
        start = time.perf_counter()
        ours = tokfx.train(counts, "sage", vocab_size=SCHEDULE[-1], special_tokens=(),
                           initial_size=SCHEDULE[0], schedule=SCHEDULE[1:], embeddings_schedule=EMBEDDINGS,
                           context="pretoken")
        ours_seconds.append(time.perf_counter() - start)
    ours_vocab = {bytes(t) for t in ours.tokens}
    ours_median = statistics.median(ours_seconds)
    print(f"ours context='pretoken': {ours_median:.2f} s (median of {args.runs}: "
          f"{', '.join(f'{s:.2f}' for s in ours_seconds)}), {len(ours_vocab):,} tokens")
    if args.official_runs:
        official_seconds, official = [], None
        for _ in range(args.official_runs):
            wall, official = run_official(args.official_python, text, initial_tokens, args.workers)
            official_seconds.append(wall)
        official_median = statistics.median(official_seconds)
        print(f"official: {official_median:7.2f} s (median of {args.official_runs}: "
              f"{', '.join(f'{s:.2f}' for s in official_seconds)}; workers {args.workers}), {len(official):,} tokens")
        print(f"speed-up: {official_median / ours_median:.1f}x")
        print(f"Jaccard ours vs official: {jaccard(ours_vocab, official)}")
        # The noise floor: the same implementation under another word2vec seed.
        reseeded = tokfx.train(counts, "sage", vocab_size=SCHEDULE[-1], special_tokens=(),
                               initial_size=SCHEDULE[0], schedule=SCHEDULE[1:],
                               embeddings_schedule=EMBEDDINGS, seed=1, context="pretoken")
        print(f"Jaccard ours seed 0 vs seed 1: {jaccard(ours_vocab, {bytes(t) for t in reseeded.tokens})}")
        # Ours with the official context: context="line" (lines as pieces, pre-token by
        # pre-token greedy, ablation inside a pre-token), over the same initial vocabulary.
        line_seconds, by_lines = [], None
        for _ in range(args.runs):
            start = time.perf_counter()
            by_lines = tokfx.train(text, "sage", vocab_size=SCHEDULE[-1], special_tokens=(),
                                   initial_size=SCHEDULE[0], schedule=SCHEDULE[1:],
                                   embeddings_schedule=EMBEDDINGS, context="line")
            line_seconds.append(time.perf_counter() - start)
        line_vocab = {bytes(t) for t in by_lines.tokens}
        line_median = statistics.median(line_seconds)
        print(f"ours context='line': {line_median:.2f} s (median of {args.runs}: "
              f"{', '.join(f'{s:.2f}' for s in line_seconds)}; {official_median / line_median:.1f}x),"
              f" {len(line_vocab):,} tokens; Jaccard vs official: {jaccard(line_vocab, official)},"
              f" vs ours pre-token: {jaccard(line_vocab, ours_vocab)}")
        if args.official_seed_check:
            wall, official_reseeded = run_official(args.official_python, text, initial_tokens, args.workers, 1)
            print(f"official seed 1: {wall:.2f} s; Jaccard official seed 692653 vs seed 1:"
                  f" {jaccard(official, official_reseeded)}")


def en10m() -> None:
    """SaGe 16,384 -> 8,192 on en_10M under both contexts: time per round, and tokens per byte
    of the greedy encoding vs BPE of 8,192 tokens."""
    text = load("en_10M")
    eot = "<|endoftext|>"
    counts = tokfx.count_pretokens(text, special_tokens=[eot])
    lines = count_lines(text, [eot])
    schedule = [14336, 12288, 10240, 8192]
    start = time.perf_counter()
    bpe = tokfx.train(counts, "bpe", vocab_size=8192, special_tokens=[eot])
    bpe_seconds = time.perf_counter() - start
    size = len(text.encode("utf-8"))
    bpe_tokens = len(bpe.encode(text))
    print(f"BPE 8,192: {bpe_seconds:.1f} s; tokens/byte {bpe_tokens / size:.4f} ({bpe_tokens:,})")
    for context in ("pretoken", "line"):
        progress = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stderr(progress):
            sage = tokfx.train(counts, "sage", vocab_size=8192, special_tokens=[eot], initial_size=16384,
                               schedule=schedule, embeddings_schedule=[16384, 12288], progress=True,
                               context=context, **({"lines": lines} if context == "line" else {}))
        sage_seconds = time.perf_counter() - start
        print(f"en_10M SaGe context={context!r} 16,384 -> 8,192: {sage_seconds:.1f} s total")
        for line in progress.getvalue().splitlines():
            if line.startswith("sage:"):
                print("   ", line)
        sage_tokens = len(sage.encode(text))
        print(f"tokens/byte: SaGe {sage_tokens / size:.4f} ({sage_tokens:,}); SaGe/BPE = {sage_tokens / bpe_tokens:.3f}")


def en10m_line() -> None:
    """Defaults at 8,192 (initial 32,768) with context="line" vs BPE of 8,192, both trained on
    en_10M; corpus token counts on wikitext2_test; do frequent short words survive?"""
    text = load("en_10M")
    eot = "<|endoftext|>"
    progress = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(progress):
        sage = tokfx.train(text, "sage", vocab_size=8192, special_tokens=[eot], context="line", progress=True)
    sage_seconds = time.perf_counter() - start
    bpe = tokfx.train(text, "bpe", vocab_size=8192, special_tokens=[eot])
    print(f"en_10M SaGe context='line' 32,768 -> 8,192 (defaults): {sage_seconds:.1f} s total"
          " (line and pre-token counting included)")
    for line in progress.getvalue().splitlines():
        if line.startswith("sage:"):
            print("   ", line)
    test = (CORPORA / "english/wikitext2_test.txt").read_text(encoding="utf-8")
    sage_ctc, bpe_ctc = len(sage.encode_ordinary(test)), len(bpe.encode_ordinary(test))
    print(f"wikitext2_test CTC: SaGe line {sage_ctc:,}, BPE {bpe_ctc:,}; SaGe/BPE = {sage_ctc / bpe_ctc:.3f}")
    words = [" the", " of", " and", " to", " in", " a", " is", " that"]
    sage_vocab, bpe_vocab = {bytes(t) for t in sage.tokens}, {bytes(t) for t in bpe.tokens}
    print("kept by SaGe line:", {w: w.encode() in sage_vocab for w in words})
    print(f"Jaccard SaGe line vs BPE: {jaccard(sage_vocab, bpe_vocab)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--official-runs", type=int, default=1)
    parser.add_argument("--official-python", default="/tmp/sage-official/bin/python")
    parser.add_argument("--workers", type=int, default=1, help="official SaGe's workers")
    parser.add_argument("--official-seed-check", action="store_true",
                        help="also run the official package under another seed")
    parser.add_argument("--en10m", action="store_true")
    parser.add_argument("--en10m-line", action="store_true", help="only the en_10M context='line' run")
    args = parser.parse_args()
    if not CORPORA.exists():
        sys.exit(f"{CORPORA} not found")
    if args.en10m_line:
        en10m_line()
        return
    anchor(args)
    if args.en10m:
        en10m()


if __name__ == "__main__":
    main()
