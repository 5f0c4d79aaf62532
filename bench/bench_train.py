"""Training time and peak memory: tokfx vs rustbpe, sentencepiece and HF tokenizers.

Every contender trains on the same documents (a working corpus split on <|endoftext|>, text
already in memory, one thread) in its own child process, so that each one's peak RSS is its
own. Prints the median of --runs runs and the ratio to tokfx.

    python bench/bench_train.py                 # en_10M and zh_5M at 32K, 3 runs
    python bench/bench_train.py --corpus en_5M --vocab 8000 --runs 1
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpora import load  # noqa: E402

EOT = "<|endoftext|>"
# One thread everywhere: the Rust peers read these, sentencepiece takes num_threads.
ONE_THREAD = {"RAYON_NUM_THREADS": "1", "RAYON_RS_NUM_CPUS": "1", "TOKENIZERS_PARALLELISM": "false"}


def train_tokfx(docs, vocab):
    import tokfx
    tokfx.train(docs, vocab_size=vocab, special_tokens=[EOT])


def train_rustbpe(docs, vocab):
    import rustbpe
    from tokfx.pre_tokenizers.patterns import GPT2
    rustbpe.Tokenizer().train_from_iterator(docs, vocab, pattern=GPT2)


def train_hf(docs, vocab):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer)


def train_sentencepiece(docs, vocab):
    import sentencepiece as spm
    with tempfile.TemporaryDirectory() as tmp:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(docs), model_prefix=f"{tmp}/m", model_type="bpe",
            vocab_size=vocab, num_threads=1, character_coverage=1.0, byte_fallback=True,
            max_sentence_length=1 << 30, minloglevel=2, train_extremely_large_corpus=False)


CONTENDERS = {"tokfx": train_tokfx, "rustbpe": train_rustbpe, "hf-tokenizers": train_hf,
              "sentencepiece": train_sentencepiece}


def worker(name: str, corpus: str, vocab: int) -> None:
    text = load(corpus)
    docs = text.split(EOT)
    if name == "sentencepiece":
        # sentencepiece reads sentences: give it lines, as its users do.
        docs = [line for doc in docs for line in doc.split("\n") if line.strip()]
    start = time.perf_counter()
    CONTENDERS[name](docs, vocab)
    print(time.perf_counter() - start)


def run_child(name: str, corpus: str, vocab: int) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of one training run in a fresh child process."""
    proc = subprocess.Popen([sys.executable, __file__, "--worker", name, "--corpus", corpus,
                             "--vocab", str(vocab)], stdout=subprocess.PIPE,
                            env={**os.environ, **ONE_THREAD})
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise RuntimeError(f"{name} failed on {corpus}")
    return float(out), usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", action="append")
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", action="append", choices=sorted(CONTENDERS))
    parser.add_argument("--worker")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.corpus[0], args.vocab)
        return
    for corpus in args.corpus or ["en_10M", "zh_5M"]:
        print(f"\n{corpus}, vocab {args.vocab}, median of {args.runs} runs, 1 thread")
        print(f"{'trainer':15} {'seconds':>9} {'vs tokfx':>9} {'peak MiB':>9}")
        base = None
        for name in args.only or CONTENDERS:
            runs = [run_child(name, corpus, args.vocab) for _ in range(args.runs)]
            seconds = statistics.median(r[0] for r in runs)
            peak = statistics.median(r[1] for r in runs)
            base = base or seconds
            print(f"{name:15} {seconds:9.2f} {seconds / base:8.2f}x {peak:9.0f}", flush=True)


if __name__ == "__main__":
    main()
