"""Encoding throughput with the GPT-2 vocabulary: tokfx vs tiktoken vs HF tokenizers.

Same documents (en_10M split on <|endoftext|>), text in memory, one thread, ids checked equal.

    python bench/bench_encode.py [--corpus en_10M] [--runs 3]
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("RAYON_RS_NUM_CPUS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).parent))
from corpora import load  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
EOT = "<|endoftext|>"


def contenders():
    import tiktoken
    import tokenizers

    from tokfx import Tokenizer
    from tokfx.formats.hf_json import hf_tokenizer_json
    from tokfx.pre_tokenizers.patterns import GPT2
    import json

    tok = Tokenizer.from_gpt2_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT])
    ranks = {t: i for i, t in tok.vocab.items() if i != tok.token_to_id(EOT)}
    tt = tiktoken.Encoding(name="gpt2_fixture", pat_str=GPT2, mergeable_ranks=ranks,
                           special_tokens={EOT: tok.token_to_id(EOT)})
    hf = tokenizers.Tokenizer.from_str(json.dumps(
        hf_tokenizer_json(tok.vocab, tok.merges, tok.special_tokens, GPT2)))
    return {
        "tokfx": lambda docs: [tok.encode_ordinary(d) for d in docs],
        "tiktoken": lambda docs: [tt.encode_ordinary(d) for d in docs],
        "hf-tokenizers": lambda docs: [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="en_10M")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    docs = load(args.corpus).split(EOT)
    megabytes = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    print(f"{args.corpus}: {megabytes:.1f} MB, GPT-2 vocabulary, median of {args.runs} runs, 1 thread")
    print(f"{'encoder':15} {'MB/s':>8} {'vs tiktoken':>12}")
    results, speeds = {}, {}
    for name, encode in contenders().items():
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            results[name] = encode(docs)
            times.append(time.perf_counter() - start)
        speeds[name] = megabytes / statistics.median(times)
    for name, speed in speeds.items():
        same = "ids identical" if results[name] == results["tiktoken"] else "IDS DIFFER"
        print(f"{name:15} {speed:8.2f} {speed / speeds['tiktoken']:11.2f}x  {same}")


if __name__ == "__main__":
    main()
