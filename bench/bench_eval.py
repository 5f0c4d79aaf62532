"""tokfx eval on the issue's setting: every registered algorithm (and BPE over the cjk
alphabet) trained at 8K on en_10M with its defaults, evaluated on wikitext2_test. Prints the
side-by-side table (metrics.md) and each training time, writes the report directory, and
times the evaluation against plain encoding of the same corpus (median of --runs).

    .venv/bin/python bench/bench_eval.py [--output /tmp/tokfx-eval] [--runs 3]   (installed tokfx)
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpora import CORPORA, load  # noqa: E402

import tokfx  # noqa: E402
from tokfx.counting import count_lines  # noqa: E402
from tokfx.models.registry import TRAINERS  # noqa: E402
from tokfx.models.training import trains_on_lines  # noqa: E402
from tokfx.eval.report import corpus_documents, evaluate, metrics_markdown, write_report  # noqa: E402

EVAL_CORPUS = CORPORA / "english/wikitext2_test.txt"


def seconds(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--output", default="/tmp/tokfx-eval")
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    text = load("en_10M")
    counts = tokfx.count_pretokens([text], special_tokens=["<|endoftext|>"])
    lines = count_lines([text], ["<|endoftext|>"])  # for SaGe's context="line" (its default)
    settings = {name: {"algorithm": name} for name in sorted(TRAINERS)}
    settings["bpe-cjk"] = {"algorithm": "bpe", "alphabet": "cjk"}
    tokenizers = {}
    for name, setting in settings.items():
        start = time.perf_counter()
        with_lines = {"lines": lines} if trains_on_lines(setting["algorithm"], setting) else {}
        tokenizers[name] = tokfx.train(counts, vocab_size=args.vocab, **setting, **with_lines)
        print(f"trained {name} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    docs = list(corpus_documents([EVAL_CORPUS]))
    report = evaluate(tokenizers, docs)
    write_report(report, args.output)
    print(metrics_markdown(report))
    encode = statistics.median(seconds(lambda: [t.encode_ordinary(d) for t in tokenizers.values()
                                                for d in docs]) for _ in range(args.runs))
    full = statistics.median(seconds(lambda: evaluate(tokenizers, docs)) for _ in range(args.runs))
    mb = sum(len(d.encode()) for d in docs) / 2 ** 20
    print(f"eval of {len(tokenizers)} tokenizers on {mb:.2f} MiB: {full:.2f} s"
          f" (encoding alone {encode:.2f} s, ratio {full / encode:.1f}x); median of {args.runs}")
    print(f"report: {args.output}")


if __name__ == "__main__":
    main()
