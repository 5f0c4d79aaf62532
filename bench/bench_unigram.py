"""Unigram: tokfx's `unigram` against Hugging Face tokenizers' UnigramTrainer on the same
pre-tokens (its ByteLevel pre-tokenizer splits with the same GPT-2 regex) and, for information,
sentencepiece's unigram (its own whitespace handling, identity normalisation, byte fallback; not
byte-level, so only a rough peer). Each trainer runs in its own child process, which loads the
training text, trains and saves; the parent measures, per trainer:

- training time: wall clock of the training call inside the child (tokfx: counting the
  pre-tokens + training; HF and sentencepiece: from the text, their own counting included), and
  the child's whole CPU time (user + system; HF trains on several threads);
- peak memory: the child's ru_maxrss (os.wait4), and the same for a child that only loads the
  text ("baseline"), so peak - baseline is what training added;
- CTC: corpus token count of the held-out text, each with its own encoder (tokfx
  `Tokenizer.encode`, HF `Tokenizer.encode`, sentencepiece `encode`);
- held-out log-likelihood (tokfx and HF): the held-out text is cut into pre-tokens by the GPT-2
  pattern (the one both were trained with) and each pre-token segmented by the same Viterbi code,
  tokfx's `likelihood` segmenter, over the model's own scores (tokfx: `Tokenizer.scores`; HF: the
  scores of its saved tokenizer.json, imported with `Tokenizer.from_hf_unigram`). The figure is
  the sum over held-out pre-tokens of the best segmentation's score (the sum of its tokens'
  log probabilities), in nats. "normalised" subtracts, per token, log Σ exp(score) over the
  model's non-special tokens, so each model's probabilities sum to 1 (the raw scores of either
  may not quite). Higher (less negative) is better. sentencepiece's is not computed (other
  pre-tokenization, not comparable);
- vocabulary overlap: Jaccard of the learned tokens' bytes, tokfx vs HF.

Held-out text (what the trainers never see):
- en_10M: wikitext2_test, which is en_10M's last document, so training uses en_10M without it
  (its first 4 documents: the three novels and wikitext2_valid);
- en_5M: wikitext2_test (not in en_5M), training on all of en_5M;
- zh_5M (and other corpora): no Chinese text outside zh_5M exists in ../shared/corpora, and
  zh_5M is 2 documents, so the last 10 % of its lines (the end of shuihu) are held out and
  training uses the first 90 %.

    python bench/bench_unigram.py --corpus en_10M --vocab-size 8192 [--no-spm]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from corpora import SEPARATOR, load  # noqa: E402

EOT = "<|endoftext|>"
HELD_FILE = "english/wikitext2_test.txt"


def split(name: str) -> tuple[list[str], str, str]:
    """(training documents, held-out text, what was held out)."""
    from corpora import CORPORA, _normalised

    text = load(name)
    docs = text.split(SEPARATOR)
    if name == "en_10M":
        held = _normalised(HELD_FILE)
        assert docs[-1].rstrip("\n") == held, "en_10M's last document is wikitext2_test"
        return docs[:-1], held + "\n", "wikitext2_test (en_10M's last document, left out of training)"
    if name == "en_5M":
        return docs, (CORPORA / HELD_FILE).read_text(encoding="utf-8"), "wikitext2_test (not in en_5M)"
    lines = text.splitlines(keepends=True)
    cut = len(lines) * 9 // 10
    train = "".join(lines[:cut])
    return train.split(SEPARATOR), "".join(lines[cut:]), f"the last 10 % of {name}'s lines ({len(lines) - cut:,} of {len(lines):,})"


# --- the children -------------------------------------------------------------------------

def train_tokfx(docs, vocab_size, out):
    import tokfx

    start = time.perf_counter()
    counts = tokfx.count_pretokens(docs, "gpt2", [EOT])
    tok = tokfx.train(counts, "unigram", vocab_size=vocab_size, pattern="gpt2", special_tokens=[EOT])
    seconds = time.perf_counter() - start
    tok.save(out)
    return seconds


def train_hf(docs, vocab_size, out):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    start = time.perf_counter()
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=[EOT],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      max_piece_length=16, shrinking_factor=0.75, n_sub_iterations=2,
                                      show_progress=False)
    tok.train_from_iterator(docs, trainer)
    seconds = time.perf_counter() - start
    tok.save(str(Path(out) / "tokenizer.json"))
    return seconds


def train_spm(docs, vocab_size, out):
    import sentencepiece as spm

    path = Path(out) / "train.txt"
    path.write_text(SEPARATOR.join(docs), encoding="utf-8")
    start = time.perf_counter()
    spm.SentencePieceTrainer.train(
        input=str(path), model_prefix=str(Path(out) / "spm"), model_type="unigram",
        vocab_size=vocab_size, character_coverage=1.0, byte_fallback=True,
        normalization_rule_name="identity", max_sentencepiece_length=16, num_threads=1,
        max_sentence_length=1 << 20, train_extremely_large_corpus=False, minloglevel=2,
        user_defined_symbols=[EOT])
    return time.perf_counter() - start


TRAINERS = {"baseline": lambda docs, vocab_size, out: 0.0, "tokfx": train_tokfx, "hf": train_hf,
            "spm": train_spm}


def child(args) -> None:
    docs, _, _ = split(args.corpus)
    seconds = TRAINERS[args.child](docs, args.vocab_size, args.out)
    Path(args.out, "seconds").write_text(repr(seconds))


def run_child(which: str, args, out: str) -> dict:
    """Run one trainer in a child process; its training seconds, CPU seconds and peak RSS."""
    os.makedirs(out, exist_ok=True)
    process = subprocess.Popen([sys.executable, __file__, "--child", which, "--out", out,
                                "--corpus", args.corpus, "--vocab-size", str(args.vocab_size)])
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{which} child failed with exit {process.returncode}")
    return {"train_s": float(Path(out, "seconds").read_text()), "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024}


# --- the parent ---------------------------------------------------------------------------

def log_likelihood(tok, text: str) -> tuple[float, float, int]:
    """(sum of the scores of the likelihood segmentation of `text`'s pre-tokens, the same with
    the scores normalised to sum to 1 in probability, the number of tokens)."""
    assert tok.segmenter == "likelihood"
    scores = tok.scores
    ids = tok.encode_ordinary(text)
    raw = math.fsum(scores[i] for i in ids)
    top = max(s for s in scores if s is not None)
    log_mass = top + math.log(math.fsum(math.exp(s - top) for s in scores if s is not None))
    return raw, raw - len(ids) * log_mass, len(ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="en_10M")
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--no-spm", action="store_true")
    parser.add_argument("--child", choices=sorted(TRAINERS), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)

    import sentencepiece as spm
    import tokenizers

    import tokfx
    docs, held, held_what = split(args.corpus)
    train_bytes = sum(len(d.encode()) for d in docs) + len(SEPARATOR.encode()) * (len(docs) - 1)
    held_bytes = len(held.encode())
    print(f"corpus {args.corpus}: training on {train_bytes:,} bytes ({len(docs)} documents); held out"
          f" {held_what}: {held_bytes:,} bytes; vocab_size {args.vocab_size:,}")
    del docs
    with tempfile.TemporaryDirectory() as directory:
        which = ["baseline", "tokfx", "hf"] + ([] if args.no_spm else ["spm"])
        runs = {w: run_child(w, args, os.path.join(directory, w)) for w in which}
        ours = tokfx.Tokenizer.load(os.path.join(directory, "tokfx"))
        hf = tokenizers.Tokenizer.from_file(os.path.join(directory, "hf", "tokenizer.json"))
        twin = tokfx.Tokenizer.from_hf_unigram(os.path.join(directory, "hf", "tokenizer.json"))
        sp = None if args.no_spm else spm.SentencePieceProcessor(model_file=os.path.join(directory, "spm", "spm.model"))

        base = runs["baseline"]["peak_mb"]
        ctc = {"tokfx": len(ours.encode(held)), "hf": len(hf.encode(held).ids)}
        if sp is not None:
            ctc["spm"] = len(sp.encode(held))
        ll = {"tokfx": log_likelihood(ours, held), "hf": log_likelihood(twin, held)}
        names = {"tokfx": "tokfx unigram", "hf": f"HF UnigramTrainer {tokenizers.__version__}",
                 "spm": f"sentencepiece {spm.__version__} unigram"}
        print(f"child that only loads the text: peak RSS {base:.0f} MB")
        print(f"{'':30s} {'train s':>8s} {'CPU s':>7s} {'peak MB':>8s} {'(+train)':>9s} {'held-out CTC':>13s}"
              f" {'tok/byte':>8s} {'log-lik (nats)':>15s} {'normalised':>14s}")
        for w in which[1:]:
            r = runs[w]
            line = (f"{names[w]:30s} {r['train_s']:8.1f} {r['cpu_s']:7.1f} {r['peak_mb']:8.0f} {r['peak_mb'] - base:+9.0f}"
                    f" {ctc[w]:13,d} {ctc[w] / held_bytes:8.4f}")
            if w in ll:
                line += f" {ll[w][0]:15,.0f} {ll[w][1]:14,.0f}"
            else:
                line += f" {'(not comparable)':>30s}"
            print(line)
        t, h = runs["tokfx"], runs["hf"]
        print(f"tokfx / HF: training time {t['train_s'] / h['train_s']:.3f} (CPU {t['cpu_s'] / h['cpu_s']:.3f}),"
              f" peak memory {t['peak_mb'] / h['peak_mb']:.3f} (above the baseline"
              f" {(t['peak_mb'] - base) / max(h['peak_mb'] - base, 1e-9):.3f}), CTC {ctc['tokfx'] / ctc['hf']:.4f},"
              f" -log-likelihood {ll['tokfx'][0] / ll['hf'][0]:.4f} (normalised {ll['tokfx'][1] / ll['hf'][1]:.4f})")
        if ll["hf"][2] != ctc["hf"]:
            print(f"note: HF's vocabulary under tokfx's likelihood segmenter gives {ll['hf'][2]:,} tokens, HF's"
                  f" own encode {ctc['hf']:,}")
        else:
            print("HF's vocabulary and scores under tokfx's likelihood segmenter: the same token count as HF's encode")
        held_lines = held.splitlines()
        agree = sum(twin.encode(line) == hf.encode(line).ids for line in held_lines)
        print(f"... and {agree:,} of {len(held_lines):,} held-out lines encode to exactly HF's ids")
        specials = set(ours.special_tokens.values())
        our_tokens = {bytes(t) for i, t in enumerate(ours.tokens) if i not in specials}
        twin_specials = set(twin.special_tokens.values())
        hf_tokens = {bytes(t) for i, t in enumerate(twin.tokens) if i not in twin_specials}
        print(f"vocabulary overlap with HF: {len(our_tokens & hf_tokens):,} tokens"
              f" (Jaccard {len(our_tokens & hf_tokens) / len(our_tokens | hf_tokens):.3f}; the 256 bytes included)")


if __name__ == "__main__":
    main()
