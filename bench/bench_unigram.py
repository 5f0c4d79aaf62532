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

Without --corpus, the main anchor (issue 26): Unigram over characters against sentencepiece's
own Unigram trainer on the same lines, same settings. Per training text and V:

- sentencepiece: `model_type=unigram, byte_fallback=True, character_coverage=0.9995,
  normalization_rule_name="identity", remove_extra_whitespaces=False, input_sentence_size=0`,
  `max_sentence_length` 1 GiB (nothing skipped), `num_threads=1`, its other options default,
  vocab_size V (its three meta pieces included);
- tokfx: `count_pretokens(lines, "sentencepiece")` and `count_lines(lines)` + `train(counts,
  "unigram", vocab_size=V - 3, alphabet="chars", pattern="sentencepiece",
  character_coverage=0.9995, context="line", lines=line_counts)` (`--context pretoken`: without
  the line counts, context="pretoken");
- training texts and held-out texts (non-empty lines, split at "\\n"):
  War and Peace (BOM and CRLF removed) cut at the last newline before 2,000,000 bytes, held out
  in domain its next 600,000 bytes (to the last newline), out of domain wikitext2_test;
  红楼梦's first 600,000 characters, held out in domain the rest of it, out of domain 水浒传's
  first 300,000 characters;
- training time: wall clock inside the child from reading the file to the trained model
  (tokfx: reading, counting, training; sentencepiece: its train call), median over --runs
  rounds, the peers taking turns; peak RSS: the child's VmHWM (bench_spm_bpe.peak_rss_mb);
- held-out CTC with each model's own encoder, and tokfx / sentencepiece; the learned pieces'
  mean length in characters and the vocabularies' Jaccard (characters and learned pieces; byte
  and meta pieces left out).

    nice -n 10 python bench/bench_unigram.py [--runs 3] [--only war_and_peace:8000 ...]

--bytes-vs-hf V ...: byte-level Unigram (GPT-2 pattern) on the same War and Peace text, tokfx's
two recipes against HF's UnigramTrainer, held-out CTC ratios and training CPU time (in this process).
"""
import argparse
import json
import math
import os
import statistics
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


# --- Unigram over characters against sentencepiece (issue 26) -----------------------------

META = 3  # sentencepiece's <unk>, <s>, </s>
COVERAGE = 0.9995
# sentencepiece trains on lines: tokfx's seed sees their ends too (context="line"); --context
# pretoken measures it without (TOKFX_BENCH_CONTEXT passes the choice on to the children).
CONTEXT = os.environ.get("TOKFX_BENCH_CONTEXT", "line")
# V = 32,000 where the text allows: on War and Peace's 2 MB sentencepiece refuses it ("Vocabulary
# size too high ... <= 13257").
SPM_CELLS = [("war_and_peace", 8000), ("hongloumeng", 8000), ("hongloumeng", 32000)]


def _cut_bytes(text: str, start: int, size: int) -> tuple[str, int]:
    """text's bytes start..start+size cut back to the last newline (decoded), and where it ends."""
    raw = text.encode("utf-8")
    end = raw.rindex(b"\n", start, start + size) + 1
    return raw[start:end].decode("utf-8"), end


def spm_texts(name: str) -> tuple[str, dict[str, str]]:
    """(training text, {held-out name: text}) of a training text of SPM_CELLS."""
    from corpora import _normalised

    if name == "war_and_peace":
        text = _normalised("english/pg2600_war_and_peace.txt")
        train, end = _cut_bytes(text, 0, 2_000_000)
        rest, _ = _cut_bytes(text, end, 600_000)
        return train, {"its next 600 KB": rest, "wikitext2_test": _normalised(HELD_FILE)}
    if name == "hongloumeng":
        text = _normalised("chinese/hongloumeng.txt")
        return text[:600_000], {"the rest of it": text[600_000:],
                                "水浒传's first 300,000 chars": _normalised("chinese/shuihu.txt")[:300_000]}
    raise SystemExit(f"unknown training text {name!r}; known: war_and_peace, hongloumeng")


def nonempty_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def chars_tokfx(path, vocab_size, out):
    import tokfx
    from tokfx.counting import count_lines

    start = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        lines = nonempty_lines(f.read())
    counts = tokfx.count_pretokens(lines, "sentencepiece", [])
    line_counts = count_lines(lines) if CONTEXT == "line" else None
    counted = time.perf_counter()
    tok = tokfx.train(counts, "unigram", vocab_size=vocab_size - META, alphabet="chars",
                      pattern="sentencepiece", character_coverage=COVERAGE, special_tokens=[],
                      context=CONTEXT, lines=line_counts)
    end = time.perf_counter()
    tok.save(out)
    return {"seconds": end - start, "count": counted - start, "train": end - counted}


CHARS_CHILDREN = ("chars-tokfx", "chars-spm", "chars-base-tokfx", "chars-base-spm")


def chars_child(which: str):
    """The child function of `which` (sentencepiece's and the import-only ones are bench_spm_bpe's)."""
    from bench_spm_bpe import child_base_spm, child_base_tokfx, spm_child

    return {"chars-tokfx": chars_tokfx, "chars-spm": spm_child(1, "unigram"), "chars-base-tokfx": child_base_tokfx,
            "chars-base-spm": child_base_spm}[which]


def run_chars_child(which: str, path: str, vocab_size: int, out: str) -> dict:
    from bench_spm_bpe import run_child

    return run_child(which, path, vocab_size, out, __file__)


def chars_cell(name: str, vocab_size: int, runs: int, directory: str) -> dict:
    """One training text at one V: trains both `runs` times, prints the cell, returns its ratios."""
    import sentencepiece as spm
    from bench_spm_bpe import jaccard, spm_pieces, tokfx_pieces

    import tokfx

    train, held = spm_texts(name)
    path = os.path.join(directory, f"{name}.txt")
    Path(path).write_text(train, encoding="utf-8")
    print(f"\n== {name}, V {vocab_size:,} (tokfx {vocab_size - META:,} + sentencepiece's {META} meta pieces):"
          f" training {len(train.encode()):,} bytes, {len(train):,} characters,"
          f" {len(nonempty_lines(train)):,} lines", flush=True)
    out = {w: os.path.join(directory, f"{name}-{vocab_size}-{w}") for w in CHARS_CHILDREN}
    base = {w: run_chars_child(f"chars-base-{w}", path, vocab_size, out[f"chars-base-{w}"])["peak_mb"]
            for w in ("tokfx", "spm")}
    order = ["tokfx", "spm"]
    results = {w: [] for w in order}
    for r in range(runs):
        for w in order[r % 2:] + order[:r % 2]:
            results[w].append(run_chars_child(f"chars-{w}", path, vocab_size, out[f"chars-{w}"]))
    tok = tokfx.Tokenizer.load(out["chars-tokfx"])
    sp = spm.SentencePieceProcessor(model_file=os.path.join(out["chars-spm"], "spm.model"))
    pieces = {"tokfx": tokfx_pieces(tok), "spm": spm_pieces(sp)[0]}
    seconds = {w: statistics.median(r["seconds"] for r in results[w]) for w in order}
    peak = {w: statistics.median(r["peak_mb"] for r in results[w]) for w in order}
    ratios = {"time": seconds["tokfx"] / seconds["spm"], "memory": peak["tokfx"] / peak["spm"]}
    print(f"{'':22s} {'train s':>8s} {'(runs)':>16s} {'CPU s':>6s} {'peak MB':>8s} {'(+)':>6s}"
          f" {'pieces':>7s} {'mean len':>8s}")
    for w in order:
        learned = [p for p in pieces[w] if len(p) > 1]
        runs_text = "/".join(f"{r['seconds']:.2f}" for r in results[w])
        print(f"{'tokfx unigram, chars' if w == 'tokfx' else 'sentencepiece unigram':22s} {seconds[w]:8.2f}"
              f" {runs_text:>16s} {statistics.median(r['cpu'] for r in results[w]):6.2f} {peak[w]:8.0f}"
              f" {peak[w] - base[w]:+6.0f} {len(pieces[w]):7,d} {sum(map(len, learned)) / max(len(learned), 1):8.2f}")
    parts = results["tokfx"]
    print(f"tokfx's time, medians: reading + counting {statistics.median(r['count'] for r in parts):.2f} s,"
          f" training {statistics.median(r['train'] for r in parts):.2f} s")
    print(f"vocabulary Jaccard tokfx vs sentencepiece: {jaccard(pieces['tokfx'], pieces['spm'])}")
    for what, text in held.items():
        lines = nonempty_lines(text)
        ours = sum(len(tok.encode(line)) for line in lines)
        theirs = sum(map(len, sp.encode(lines)))
        ratios[what] = ours / theirs
        print(f"held out {what} ({len(lines):,} lines, {sum(map(len, lines)):,} chars): CTC tokfx {ours:,},"
              f" sentencepiece {theirs:,}, tokfx / spm {ours / theirs:.4f}")
    print(f"tokfx / spm: training time {ratios['time']:.2f}, peak memory {ratios['memory']:.2f}", flush=True)
    return ratios


def main_bytes(vocab_sizes: list[int]) -> None:
    """Byte-level Unigram (GPT-2 pattern) on War and Peace's 2 MB, tokfx's two recipes against
    HF's UnigramTrainer (its bench settings above), in this process: held-out tokens and each
    trainer's CPU time."""
    import tokenizers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    import tokfx
    from tokfx.models.unigram import RECIPES
    train, held = spm_texts("war_and_peace")
    lines = nonempty_lines(train)
    counts = tokfx.count_pretokens(lines, "gpt2", [])
    print(f"tokfx {tokfx.__version__}, tokenizers {tokenizers.__version__}; War and Peace's 2 MB, byte-level,"
          f" no special tokens; held-out CTC, tokfx / HF")
    for vocab_size in vocab_sizes:
        hf = Tokenizer(models.Unigram())
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        hf.decoder = decoders.ByteLevel()
        cpu = {"HF": -time.process_time()}
        hf.train_from_iterator(lines, trainers.UnigramTrainer(
            vocab_size=vocab_size, special_tokens=[], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            max_piece_length=16, shrinking_factor=0.75, n_sub_iterations=2, show_progress=False))
        cpu["HF"] += time.process_time()
        ours = {}
        for recipe in RECIPES:
            cpu[recipe] = -time.process_time()
            ours[recipe] = tokfx.train(counts, "unigram", vocab_size=vocab_size, pattern="gpt2",
                                       special_tokens=[], recipe=recipe)
            cpu[recipe] += time.process_time()
        print(f"  V {vocab_size:,}, training CPU s (this process, all threads; tokfx's counting not"
              f" included): " + ", ".join(f"{who} {seconds:.2f}" for who, seconds in cpu.items()))
        for what, text in held.items():
            held_lines = nonempty_lines(text)
            theirs = sum(len(e.ids) for e in hf.encode_batch(held_lines))
            ratios = ", ".join(f"{recipe} {sum(len(tok.encode(line)) for line in held_lines) / theirs:.4f}"
                               for recipe, tok in ours.items())
            print(f"  V {vocab_size:,}, held out {what}: HF {theirs:,} tokens; tokfx / HF: {ratios}")


def main_chars(runs: int, only: list[str] | None) -> None:
    import sentencepiece

    import tokfx
    cells = [(c, int(v)) for c, v in (item.split(":") for item in only)] if only else SPM_CELLS
    print(f"tokfx {tokfx.__version__}, sentencepiece {sentencepiece.__version__}, Python {sys.version.split()[0]},"
          f" {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; {runs} round(s);"
          f" tokfx's context {os.environ.get('TOKFX_BENCH_CONTEXT', 'line')!r}")
    with tempfile.TemporaryDirectory() as directory:
        table = {cell: chars_cell(*cell, runs, directory) for cell in cells}
    print("\nsummary, tokfx / sentencepiece (targets: CTC <= 1.01, time and memory <= 1):")
    for (name, vocab_size), ratios in table.items():
        print(f"  {name} V {vocab_size:,}: " + ", ".join(f"{k} {v:.3f}" for k, v in ratios.items()))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


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
    parser.add_argument("--corpus", help="the byte-level comparison with HF on this corpus (en_10M, ...);"
                        " without it, the comparison with sentencepiece over characters")
    parser.add_argument("--vocab-size", type=int, default=8192)
    parser.add_argument("--no-spm", action="store_true")
    parser.add_argument("--runs", type=int, default=3, help="over characters: rounds (medians)")
    parser.add_argument("--only", nargs="+", metavar="TEXT:V", help="over characters: e.g. hongloumeng:8000")
    parser.add_argument("--context", choices=("line", "pretoken"), default="line",
                        help="over characters: tokfx's Unigram context (its seed sees line ends or not)")
    parser.add_argument("--bytes-vs-hf", nargs="+", type=int, metavar="V",
                        help="instead: byte-level, tokfx's recipes against HF on War and Peace's 2 MB")
    parser.add_argument("--child", choices=sorted(TRAINERS) + sorted(CHARS_CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child in CHARS_CHILDREN:
        from bench_spm_bpe import peak_rss_mb

        found = chars_child(args.child)(args.path, args.vocab_size, args.out)
        found["peak_mb"] = peak_rss_mb()
        Path(args.out, "result.json").write_text(json.dumps(found))
        return
    if args.child:
        return child(args)
    if args.bytes_vs_hf:
        return main_bytes(args.bytes_vs_hf)
    if args.corpus is None:
        os.environ["TOKFX_BENCH_CONTEXT"] = args.context
        return main_chars(args.runs, args.only)

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
