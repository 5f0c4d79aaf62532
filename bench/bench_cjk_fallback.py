"""The CJK remap where its paper applied it: on the byte fallback of a character-level BPE (issue 17).

The paper remapped inside Llama 2's tokenizer: only byte-fallback characters change (a 3-byte
character of a remapped group is prefix + h2 + h3 instead of three byte tokens), the learned
vocabulary stays as it is, and 256 + prefix ids extend it. Here, per setting:

- `chars`: BPE over characters with byte fallback (`alphabet="chars"`, `pattern="sentencepiece"`,
  character_coverage 0.9995, vocabulary V, no special tokens);
- `+ remap`: its twin with the SAME learned tokens and merges over `chars-cjk` (the same
  characters, each token's symbols re-expressed in that alphabet, whose characters start at
  `char_base`): V + 259 ids (256 h2/h3 symbols and 3 prefixes); the paper's construction.
  For Japanese also `+ remap 38`: the twin with group 0x38 (kana, CJK punctuation) remapped too;
- `chars-cjk`: trained directly over `alphabet="chars-cjk"` at the same total size V (259 fewer
  merges than `chars`);
- own settings only, today's byte-level alphabets for comparison: `bytes` and `cjk` (GPT-2
  pattern) trained on the same lines at V (what bench_cjk.py measures, here on held-out text).

Settings:
- own (V = 8,000, 32,000; ja_1M 8,000 only): each corpus's vocabulary trained on its own
  training part (bench_unigram.split: the first 90 % of the lines), so almost every character
  is covered;
- llama2-like (V = 32,000, Llama 2's size): one vocabulary trained on en_10M's training part
  (its first 4 documents, 8.9 MB) plus the first `--mix-kb` KB of each of zh_5M, ja_1M and
  ko_4M's training parts, so that it covers the frequent CJK characters only and the rest falls
  back to bytes, as in Llama 2.

Measured on each CJK corpus's held-out part (its last 10 % of lines), line by line (each line a
sentencepiece sentence): the share of the held-out characters that `chars` does not cover
(they fall back to bytes), and of those the share the default remap acts on (3-byte characters
U+4000-U+FFFF, lead bytes E4-EF); base symbols per character (tokfx.eval.metrics.base_symbols_per_char,
the dummy U+2581 included); tokens per character and its change against `chars`; Rényi
efficiency (alpha 2.5) of the held-out token counts over the model's vocabulary size; for the
twin, prefix symbols per remapped character (a remapped character costs 2 symbols, plus the
prefix where the group changes within a pre-token, against 3 bytes); every
held-out line round-trips (checked). Decode errors: `--sequences` (10,000) sequences of 64 ids
drawn uniformly from the model's vocabulary (the same seed for every model), `decode_errors`
summed, per sequence, and the share of sequences with any; and the same for sequences whose ids
are drawn independently from the model's own held-out token distribution ("unigram": a crude
stand-in for a model's output, which emits fallback ids about as often as the text needs them).

    nice -n 10 python bench/bench_cjk_fallback.py [--quick] [--mix-kb 30 100] [--sequences 10000]
"""
import argparse
import os
import random
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_unigram import split  # noqa: E402

import tokfx  # noqa: E402
from tokfx.alphabet import H2_BASE, H3_BASE, PREFIX_BASE, Alphabet  # noqa: E402
from tokfx.eval.metrics import base_symbols_per_char, renyi_efficiency, token_counts  # noqa: E402

CJK = ("zh_5M", "ja_1M", "ko_4M")
KANA = (0x38, 0x39, 0x3A, 0x3B)
COVERAGE = 0.9995
SEQUENCE_LENGTH = 64
SEED = 17


def lines_of(text: str) -> list[str]:
    """Sentences as sentencepiece reads them: split at "\\n", empty ones dropped."""
    return [line for line in text.split("\n") if line]


def train(lines, vocab_size, alphabet, pattern="sentencepiece", groups=None):
    extra = {"character_coverage": COVERAGE} if alphabet.startswith("chars") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a vocabulary short of V would not be the size asked for
        return tokfx.train(lines, "bpe", vocab_size=vocab_size, alphabet=alphabet, pattern=pattern,
                           cjk_groups=groups, special_tokens=[], **extra)


def remapped_twin(tok: tokfx.Tokenizer, groups=None) -> tokfx.Tokenizer:
    """The paper's construction: `tok`'s learned tokens and merges, unchanged, over chars-cjk
    with the same characters; the remap's symbols (h2, h3, prefixes) are new ids below the
    characters."""
    old = tok.alphabet
    new = Alphabet.named("chars-cjk", groups).with_characters(old.characters)
    shift = new.char_base - old.char_base

    def renumber(i: int) -> int:  # ids and symbols alike: bytes stay, characters and tokens move
        return i if i < old.char_base else i + shift

    learned = tok.tokens[old.size:]
    assert tok.tokens[:old.size] == [(s,) for s in range(old.size)], "base symbols first, in order"
    assert all(min(t) >= old.char_base for t in learned), "no learned token holds a fallback byte"
    tokens = [(s,) for s in range(new.size)] + [tuple(map(renumber, t)) for t in learned]
    merges = [tuple(map(renumber, m)) for m in tok.merge_ids]
    return tokfx.Tokenizer(tokens, merges, {}, tok.pattern, tok.algorithm, tok.params, new)


def random_sequences(vocab_size: int, count: int) -> list[list[int]]:
    rng = random.Random(SEED)
    return [[rng.randrange(vocab_size) for _ in range(SEQUENCE_LENGTH)] for _ in range(count)]


def unigram_sequences(counts, count: int) -> list[list[int]]:
    """Sequences of ids drawn independently from the held-out unigram distribution `counts`."""
    rng = random.Random(SEED)
    ids = sorted(counts)
    drawn = rng.choices(ids, [counts[i] for i in ids], k=count * SEQUENCE_LENGTH)
    return [drawn[k:k + SEQUENCE_LENGTH] for k in range(0, len(drawn), SEQUENCE_LENGTH)]


def decode_error_stats(tok, sequences: list[list[int]]) -> tuple[float, float]:
    """(decode errors per sequence, share of sequences with any)."""
    errors = [tok.decode_errors(ids) for ids in sequences]
    return sum(errors) / len(errors), sum(e > 0 for e in errors) / len(errors)


def fallback_shares(tok, lines: list[str]) -> tuple[float, float]:
    """(share of the characters that are not covered, share of those the default remap acts on:
    3-byte characters of lead bytes E4-EF, U+4000-U+FFFF)."""
    covered = set(tok.alphabet.characters)
    total = fallen = remappable = 0
    for line in lines:
        for ch in line.replace(" ", "\u2581"):
            total += 1
            if ch not in covered:
                fallen += 1
                remappable += 0x4000 <= ord(ch) <= 0xFFFF and not 0xD800 <= ord(ch) <= 0xDFFF
    return fallen / total, remappable / max(fallen, 1)


class Row:
    def __init__(self, label, tok, pattern, lines, sequences, cache):
        self.label, self.tok = label, tok
        chars = sum(map(len, lines))
        outputs = [tok.encode(line) for line in lines]
        bad = sum(tok.decode(ids) != line for ids, line in zip(outputs, lines))
        assert not bad, f"{label}: {bad} held-out lines do not round-trip"
        self.tokens = sum(map(len, outputs))
        self.tok_per_char = self.tokens / chars
        self.sym_per_char = sum(base_symbols_per_char(line, tok.alphabet, pattern) * len(line) for line in lines) / chars
        counts = token_counts(outputs)
        # With a remap: prefix symbols written per remapped character (each has one h2), as
        # token ids (the base symbols are tokens of their own, id = symbol).
        groups = tok.alphabet.groups if tok.alphabet.name == "chars-cjk" else ()
        remapped = sum(counts[i] for i in range(H2_BASE, H3_BASE))
        prefixes = sum(counts[i] for i in range(PREFIX_BASE, PREFIX_BASE + len(groups)))
        self.prefixes_per_remapped = prefixes / remapped if remapped else float("nan")
        self.renyi = renyi_efficiency(counts, tok.vocab_size)
        if id(tok) not in cache:  # uniform ids: the decode errors depend on the vocabulary only
            cache[id(tok)] = decode_error_stats(tok, random_sequences(tok.vocab_size, sequences))
        self.errors_per_seq, self.seqs_with_errors = cache[id(tok)]
        self.unigram_errors_per_seq, self.unigram_seqs_with_errors = decode_error_stats(
            tok, unigram_sequences(counts, sequences))


HEADER = (f"{'setting':18s} {'corpus':7s} {'model':18s} {'ids':>6s} {'fallback':>9s} {'remappable':>10s}"
          f" {'sym/char':>8s} {'tok/char':>8s} {'vs chars':>8s} {'Rényi2.5':>8s} {'err/seq':>8s} {'w/ err':>7s}"
          f" {'unigram err/seq':>15s} {'w/ err':>7s}")


def print_rows(setting: str, corpus: str, rows: list[Row], shares: tuple[float, float]) -> None:
    base = rows[0].tok_per_char
    for k, row in enumerate(rows):
        share = f"{100 * shares[0]:8.2f}% {100 * shares[1]:9.1f}%" if k == 0 else f"{'':9s} {'':10s}"
        print(f"{setting if k == 0 else '':18s} {corpus if k == 0 else '':7s} {row.label:18s} {row.tok.vocab_size:6d}"
              f" {share} {row.sym_per_char:8.3f} {row.tok_per_char:8.4f} {100 * (row.tok_per_char / base - 1):+7.2f}%"
              f" {row.renyi:8.4f} {row.errors_per_seq:8.3f} {100 * row.seqs_with_errors:6.1f}%"
              f" {row.unigram_errors_per_seq:15.3f} {100 * row.unigram_seqs_with_errors:6.1f}%", flush=True)


def chars_models(lines, vocab_size, corpus_names):
    """chars, its remapped twin(s), chars-cjk trained directly; timing printed."""
    start = time.perf_counter()
    chars = train(lines, vocab_size, "chars")
    middle = time.perf_counter()
    direct = train(lines, vocab_size, "chars-cjk")
    end = time.perf_counter()
    models = [("chars", chars), ("+ remap (twin)", remapped_twin(chars))]
    if "ja_1M" in corpus_names:
        models.append(("+ remap 38 (twin)", remapped_twin(chars, KANA)))
    models.append(("chars-cjk direct", direct))
    print(f"  trained chars in {middle - start:.1f} s, chars-cjk in {end - middle:.1f} s; {len(chars.alphabet.characters):,}"
          f" characters covered", flush=True)
    return models


def own_setting(corpus: str, vocab_sizes: list[int], sequences: int) -> None:
    docs, held, what = split(corpus)
    lines, held_lines = lines_of("\n".join(docs)), lines_of(held)
    print(f"\n{corpus}: training {len(lines):,} lines, held out {what}", flush=True)
    for vocab_size in vocab_sizes:
        models = chars_models(lines, vocab_size, [corpus])
        cache: dict = {}
        rows = [Row(label, tok, "sentencepiece", held_lines, sequences, cache) for label, tok in models]
        for label, alphabet in (("bytes (gpt2)", "bytes"), ("cjk (gpt2)", "cjk")):
            rows.append(Row(label, train(lines, vocab_size, alphabet, pattern="gpt2"), "gpt2", held_lines, sequences, cache))
        print(HEADER)
        print_rows(f"own {vocab_size}", corpus, rows, fallback_shares(models[0][1], held_lines))
        report_remap(rows)


def llama2_setting(mix_kb: int, vocab_size: int, corpora: list[str], sequences: int) -> None:
    docs, _, _ = split("en_10M")
    lines = lines_of("\n".join(docs))
    english = len(lines)
    held = {}
    taken_bytes = {}
    for corpus in corpora:
        cdocs, cheld, _ = split(corpus)
        n = 0
        for line in lines_of("\n".join(cdocs)):
            if n >= mix_kb * 1000:
                break
            lines.append(line)
            n += len(line.encode()) + 1
        taken_bytes[corpus] = n
        held[corpus] = lines_of(cheld)
    print(f"\nllama2-like, {mix_kb} KB of each CJK corpus: {english:,} en_10M lines (8.9 MB) + "
          + ", ".join(f"{c} {b:,} bytes" for c, b in taken_bytes.items()) + f"; vocab {vocab_size:,}", flush=True)
    models = chars_models(lines, vocab_size, corpora)
    cache: dict = {}
    cjk_covered = sum(0x4000 <= ord(c) <= 0xFFFF for c in models[0][1].alphabet.characters)
    print(f"  of the covered characters {cjk_covered:,} are in U+4000-U+FFFF (CJK ideographs, Hangul syllables)")
    print(HEADER)
    for corpus in corpora:
        rows = [Row(label, tok, "sentencepiece", held[corpus], sequences, cache) for label, tok in models
                if "38" not in label or corpus == "ja_1M"]
        print_rows(f"llama2-like {mix_kb}K", corpus, rows, fallback_shares(models[0][1], held[corpus]))
        report_remap(rows)


def report_remap(rows: list[Row]) -> None:
    chars, twin = rows[0], rows[1]
    print(f"{'':27s}remap (twin) vs chars: tokens {100 * (twin.tok_per_char / chars.tok_per_char - 1):+.2f} %, base"
          f" symbols {100 * (twin.sym_per_char / chars.sym_per_char - 1):+.2f} %, Rényi {twin.renyi - chars.renyi:+.4f},"
          f" decode errors per sequence {chars.errors_per_seq:.3f} -> {twin.errors_per_seq:.3f} (uniform ids),"
          f" {chars.unigram_errors_per_seq:.3f} -> {twin.unigram_errors_per_seq:.3f} (unigram ids);"
          f" {twin.prefixes_per_remapped:.2f} prefix symbols per remapped character")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix-kb", nargs="+", type=int, default=[30, 100],
                        help="KB of each CJK corpus in the llama2-like training text")
    parser.add_argument("--sequences", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="ja_1M only, 8,000, 1,000 sequences, one mix")
    parser.add_argument("--no-own", action="store_true")
    parser.add_argument("--no-llama2", action="store_true")
    args = parser.parse_args()
    corpora = ["ja_1M"] if args.quick else list(CJK)
    sequences = 1000 if args.quick else args.sequences
    print(f"tokfx {tokfx.__version__}, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f};"
          f" decode errors over {sequences:,} sequences of {SEQUENCE_LENGTH} uniform ids (seed {SEED})")
    start = time.perf_counter()
    if not args.no_own:
        for corpus in corpora:
            own_setting(corpus, [8000] if args.quick or corpus == "ja_1M" else [8000, 32000], sequences)
    if not args.no_llama2:
        for mix_kb in args.mix_kb[:1] if args.quick else args.mix_kb:
            llama2_setting(mix_kb, 8000 if args.quick else 32000, corpora, sequences)
    print(f"\n{time.perf_counter() - start:.0f} s in all; load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
