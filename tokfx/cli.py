"""The `tokfx` command: run, count, train, encode, inspect, eval.

`run`, `count` and `encode --output-dir` are Beam pipelines (in `beam_jobs`, imported only
when one of them is asked for, so the rest of tokfx works without Beam); their flags are
declared in `beam_jobs.options`, and every Beam flag (`--runner`, `--direct_num_workers`, ...)
passes through.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from importlib import resources
from pathlib import Path

from tokfx.alphabet import Alphabet, parse_groups
from tokfx.counts_file import read_counts
from tokfx.corpus import CorpusError, is_jsonl, iter_jsonl_texts, read_text_file
from tokfx.parallel_count import add_counts, count_lines_file, count_pretokens_file
from tokfx.pretokenize import PreTokenizer, resolve_pattern
from tokfx.registry import TRAINERS
from tokfx.segmenters import SEGMENTERS
from tokfx.tokenizer import Tokenizer
from tokfx.training import check_vocab_size, train, training_settings, trains_on_lines

DEFAULT_SPECIAL = "<|endoftext|>"


def sample_corpus() -> list[Path]:
    """The shards of the small sample corpus that ships inside the package."""
    folder = resources.files("tokfx.data").joinpath("sample")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".jsonl.zst"))


def _log(args, message: str) -> None:
    if not args.quiet:
        print(message, file=sys.stderr, flush=True)


def _count_files(args, files: list[Path], special_tokens: list[str],
                 lines: dict[bytes, int] | None = None) -> dict[bytes, int]:
    """The files' pre-token counts; with `lines`, their line counts are added into it too."""
    counts: dict[bytes, int] = {}
    pretokenizer = PreTokenizer(args.pattern, special_tokens)
    for path in files:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file")
        start = time.perf_counter()
        if is_jsonl(path):
            docs = 0
            for _, text in iter_jsonl_texts(path, args.text_field):
                pretokenizer.count_into(text, counts)
                if lines is not None:
                    pretokenizer.count_lines_into(text, lines)
                docs += 1
            what = f"{docs:,} documents"
        else:
            add_counts(counts, count_pretokens_file(path, args.pattern, special_tokens, args.processes))
            if lines is not None:
                add_counts(lines, count_lines_file(path, special_tokens))
            what = f"{path.stat().st_size:,} bytes"
        _log(args, f"counted {path} ({what}) in {time.perf_counter() - start:.2f} s")
    return counts


def cmd_train(args) -> None:
    special_tokens = args.special_token if args.special_token is not None else [DEFAULT_SPECIAL]
    alphabet = Alphabet.named(args.alphabet, args.cjk_groups)
    check_vocab_size(args.vocab_size, special_tokens, alphabet)
    resolve_pattern(args.pattern)
    settings = training_settings(args.algorithm, args.segmenter, initial_vocab=args.initial_vocab,
                                 initial_size=args.initial_size, schedule=args.schedule,
                                 max_width=args.max_width, seed=args.seed,
                                 embeddings_schedule=args.embeddings_schedule, context=args.context)
    lines = {} if trains_on_lines(args.algorithm, settings) else None
    start = time.perf_counter()
    if args.lines and not args.counts:
        raise ValueError("--lines goes with --counts (from corpus files the lines are counted)")
    if args.lines and lines is None:
        raise ValueError("--lines is only read by a trainer with --context line (sage)")
    if args.counts:
        if args.files:
            raise ValueError("give corpus files or --counts, not both")
        if lines is not None:
            if not args.lines:
                raise ValueError(f"{args.algorithm} with --context line (its default) needs the corpus's line"
                                 " counts beside --counts: --lines FILE (tokfx count --lines-output FILE),"
                                 " or the corpus files, or --context pretoken")
            lines = read_counts(args.lines, "line")
        counts = read_counts(args.counts)
        _log(args, f"read counts from {args.counts}" + (f" and lines from {args.lines}" if args.lines else ""))
    else:
        files = [Path(f) for f in args.files] or sample_corpus()
        if not args.files:
            _log(args, f"no input files given: training on the sample corpus ({len(files)} shards)")
        counts = _count_files(args, files, special_tokens, lines)
    _log(args, f"{len(counts):,} distinct pre-tokens, {sum(counts.values()):,} in all"
               + (f"; {len(lines):,} distinct lines" if lines is not None else ""))
    tokenizer = train(counts, args.algorithm, args.vocab_size, special_tokens, args.pattern,
                      alphabet.name, args.cjk_groups, progress=not args.quiet, lines=lines, **settings)
    tokenizer.save(args.output)
    if alphabet.name != "bytes":
        _log(args, f"{args.alphabet} alphabet: wrote tokfx.json only (GPT-2 and Hugging Face files"
                   " cannot express it)")
    elif tokenizer.scaffold is not None and tokenizer.scaffold.scaffold:
        _log(args, f"{len(tokenizer.scaffold.scaffold):,} scaffold tokens: wrote tokfx.json only"
                   " (GPT-2 and Hugging Face files cannot demolish them)")
    elif tokenizer.segmenter != "bpe":
        _log(args, f"segmenter {tokenizer.segmenter}: wrote tokfx.json only (GPT-2 and Hugging Face"
                   " files segment by BPE merges)")
    _log(args, f"trained {tokenizer!r} in {time.perf_counter() - start:.2f} s")
    print(Path(args.output) / "tokfx.json")


def cmd_encode(args) -> None:
    if args.text is None and not args.files:
        raise ValueError("nothing to encode: give --text TEXT or corpus files")
    tokenizer = Tokenizer.load(args.tokenizer)
    if args.segmenter:
        tokenizer = tokenizer.with_segmenter(args.segmenter)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.text is not None:
            print(json.dumps(tokenizer.encode(args.text)), file=out)
        for name in args.files:
            path = Path(name)
            if not path.exists():
                raise FileNotFoundError(f"{path}: no such file")
            if is_jsonl(path):
                for line_no, text in iter_jsonl_texts(path, args.text_field):
                    record = {"source": str(path), "line": line_no, "input_ids": tokenizer.encode(text)}
                    print(json.dumps(record), file=out)
            else:
                record = {"source": str(path), "input_ids": tokenizer.encode(read_text_file(path))}
                print(json.dumps(record), file=out)
    finally:
        if out is not sys.stdout:
            out.close()


def _groups(text: str) -> tuple[int, ...]:
    try:
        return parse_groups(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_inspect(args) -> None:
    tok = Tokenizer.load(args.tokenizer)
    alphabet = tok.alphabet
    lengths = [len(t) for t in tok.tokens]
    longest = sorted(range(tok.vocab_size), key=lambda i: (-lengths[i], i))[:5]
    merges = tok.merges
    unit = "bytes" if alphabet.name == "bytes" else "base symbols"
    # Learned tokens are merges in BPE only: PathPiece has no merges, and a scaffold tokenizer's
    # normal tokens include some whose merge has a scaffold part.
    learned = (f"{tok.vocab_size - alphabet.size - len(tok.special_tokens):,}"
               f" {'merges' if merges and tok.scaffold is None else 'learned tokens'}")
    groups = f" groups {','.join(f'{p:02x}' for p in alphabet.groups)}" if alphabet.groups else ""
    lines = [
        f"tokenizer:      {args.tokenizer}",
        f"algorithm:      {tok.algorithm} {json.dumps(tok.params)}",
        f"alphabet:       {alphabet.name}{groups} ({alphabet.size} base symbols)",
        f"vocab size:     {tok.vocab_size:,} ({alphabet.size} {unit} + {learned}"
        f" + {len(tok.special_tokens)} special)",
        f"pattern:        {tok.pattern}",
        f"segmenter:      {tok.segmenter} {json.dumps(tok.segmenter_params)}",
        f"special tokens: {', '.join(f'{s}={i}' for s, i in tok.special_tokens.items()) or '-'}",
        f"mean token length: {sum(lengths) / len(lengths):.2f} {unit}",
        "first merges:   " + "  ".join(f"{alphabet.show(a)}+{alphabet.show(b)}" for a, b in merges[:5]),
        "last merges:    " + "  ".join(f"{alphabet.show(a)}+{alphabet.show(b)}" for a, b in merges[-5:]),
        "longest tokens: " + "  ".join(f"{i}:{tok.show_token(i)}" for i in longest),
    ]
    if tok.scaffold is not None:
        lines.append(f"scaffold:       {len(tok.scaffold.scaffold):,} scaffold tokens of"
                     f" {tok.scaffold.expanded_size:,} expanded (merged, then demolished when encoding)")
    print("\n".join(line for line in lines if merges or "merges:" not in line))


def cmd_eval(args) -> None:
    from tokfx.evaluation import corpus_documents, evaluate, tokenizer_names, write_report

    names = tokenizer_names(args.tokenizers)
    tokenizers = {name: Tokenizer.load(path) for name, path in zip(names, args.tokenizers)}
    separators = args.separator if args.separator is not None else [DEFAULT_SPECIAL]
    documents = corpus_documents(args.corpus, args.text_field, separators)
    report = evaluate(tokenizers, documents, args.alpha, args.window, progress=not args.quiet)
    for path in write_report(report, args.output, plots=not args.no_plots):
        print(path)


PIPELINE_HELP = {
    "run": "the whole pipeline: corpus -> pre-token counts -> tokenizer -> Parquet and Megatron"
           " shards + manifest.json (no arguments: the sample corpus into ./tokfx-out/)",
    "count": "count pre-tokens of a corpus into a Parquet counts file (--output FILE)",
}


def _sizes(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 60000,50000,40000, got {text!r}") from None


def add_pathpiece_arguments(parser) -> None:
    """Options of --algorithm pathpiece and of the segmenters (also the Beam pipeline's)."""
    parser.add_argument("--initial-vocab", choices=["bpe", "ngram"], default=None,
                        help="pathpiece: initial vocabulary (default bpe)")
    parser.add_argument("--initial-size", type=int, default=None,
                        help="pathpiece, sage: initial vocabulary size (default 4 x --vocab-size, at most 2^18)")
    parser.add_argument("--schedule", type=_sizes, default=None,
                        help="pathpiece, sage: vocab sizes after each round, e.g. 60000,50000,40000"
                             " (default: pathpiece halving steps, sage the official multiples)")
    parser.add_argument("--max-width", type=int, default=None,
                        help="pathpiece and the shortest-path/greedy segmenters: widest token in"
                             " base symbols (default 16)")
    parser.add_argument("--segmenter", choices=SEGMENTERS, default=None,
                        help="segment with this instead of the algorithm's own (bpe: merges;"
                             " pathpiece: pathpiece-l); pathpiece-l/-r and greedy use any vocabulary")
    parser.add_argument("--seed", type=int, default=None,
                        help="pathpiece-r, sage (word2vec): random seed (default 0)")
    parser.add_argument("--embeddings-schedule", type=_sizes, default=None,
                        help="sage: vocab sizes (the initial size or sizes of --schedule) at which"
                             " word2vec is retrained (default: the official multiples of --vocab-size)")
    parser.add_argument("--context", choices=["pretoken", "line"], default=None,
                        help="sage: word2vec and the ablation see the whole line (default, as the"
                             " official code; the corpus's lines are counted too) or one pre-token"
                             " (faster, and all that a counts file allows)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tokfx", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in PIPELINE_HELP.items():
        # Listed here for --help; main() hands their arguments to beam_jobs unparsed.
        sub.add_parser(name, help=text)

    p = sub.add_parser("train", help="train a tokenizer: corpus files in, tokenizer directory out")
    p.add_argument("files", nargs="*", help=".txt, .jsonl, .jsonl.gz or .jsonl.zst files"
                   " (default: the sample corpus shipped with tokfx)")
    p.add_argument("-o", "--output", default="tokfx-out/tokenizer", help="tokenizer directory")
    p.add_argument("--algorithm", default="bpe", choices=sorted(TRAINERS))
    p.add_argument("--vocab-size", type=int, default=2000,
                   help="alphabet + learned tokens + special tokens (default 2000)")
    p.add_argument("--special-token", action="append",
                   help=f"a special token (repeatable; default {DEFAULT_SPECIAL})")
    p.add_argument("--pattern", default="gpt2", help="gpt2, cl100k, o200k, llama3, the PathPiece"
                   " variants firstspace, space, digit, firstspace-digit, space-digit, none; or a regex")
    p.add_argument("--alphabet", default="bytes", choices=["bytes", "cjk"],
                   help="base symbols: bytes, or cjk (CJK-remapped bytes; tokfx.json only)")
    p.add_argument("--cjk-groups", type=_groups, default=None,
                   help="with --alphabet cjk: remapped lead-byte groups in hex (default 39,3a,3b;"
                        " add 38 for kana and CJK punctuation)")
    p.add_argument("--text-field", default="text", help="JSON field holding the text")
    p.add_argument("--processes", type=int, default=None, help="processes counting a .txt file")
    p.add_argument("--lines", help="with --counts: the line counts file (tokfx count --lines-output) that"
                   " sage's line context trains on")
    p.add_argument("--counts", help="train from this pre-token counts file (from tokfx count)"
                   " instead of corpus files")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    add_pathpiece_arguments(p)
    p.set_defaults(run=cmd_train)

    p = sub.add_parser("encode", help="encode text or corpus files with a trained tokenizer")
    p.add_argument("tokenizer", help="tokenizer directory or tokfx.json")
    p.add_argument("files", nargs="*", help=".txt (one document per file) or .jsonl[.gz|.zst]")
    p.add_argument("--text", help="encode this text and print its ids")
    p.add_argument("--text-field", default="text")
    p.add_argument("-o", "--output", help="write JSON lines here instead of standard output")
    p.add_argument("--segmenter", choices=SEGMENTERS, help="segment with this instead of the"
                   " tokenizer's own (its default params)")
    p.add_argument("--output-dir", help="run the Beam pipeline instead: shards and manifest"
                   " into this directory (corpus from --input PATTERN; see tokfx run --help)")
    p.set_defaults(run=cmd_encode)

    p = sub.add_parser("inspect", help="summarise a tokenizer directory")
    p.add_argument("tokenizer", help="tokenizer directory or tokfx.json")
    p.set_defaults(run=cmd_inspect)

    p = sub.add_parser("eval", help="intrinsic metrics of tokenizers on a corpus, side by side:"
                                    " metrics.json, metrics.md, PNG figures, index.html")
    p.add_argument("tokenizers", nargs="+", metavar="TOKENIZER_DIR", help="tokenizer directories")
    p.add_argument("--corpus", nargs="+", required=True, metavar="FILE",
                   help=".txt or .jsonl[.gz|.zst] files")
    p.add_argument("-o", "--output", required=True, help="report directory")
    p.add_argument("--text-field", default="text", help="JSON field holding the text")
    p.add_argument("--separator", action="append", default=None,
                   help=f"text that separates documents in a .txt file (repeatable; default"
                        f" {DEFAULT_SPECIAL})")
    p.add_argument("--alpha", type=float, default=2.5, help="Rényi efficiency order (default 2.5)")
    p.add_argument("--window", type=int, default=2,
                   help="context diversity: neighbours within this many positions (default 2)")
    p.add_argument("--no-plots", action="store_true", help="metrics only, no figures")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(run=cmd_eval)
    return parser


def _pipeline_argv(argv: list[str]) -> tuple[str, list[str]] | None:
    """(pipeline command, its Beam arguments) when `argv` asks for a pipeline, else None."""
    if argv[:1] in (["run"], ["count"]):
        return argv[0], argv[1:]
    if argv[:1] == ["encode"] and any(a.split("=")[0] == "--output-dir" for a in argv):
        rest = [("--output" + a[len("--output-dir"):]) if a.split("=")[0] == "--output-dir" else a
                for a in argv[1:]]
        if rest and not rest[0].startswith("-"):
            rest = ["--tokenizer", *rest]
        return "encode", rest
    return None


def _corpus_error(exc: BaseException) -> str | None:
    """The CorpusError message inside an error a Beam runner wrapped (with its traceback)."""
    if isinstance(exc, CorpusError):
        return str(exc).split(" [while running")[0]
    match = re.search(r"CorpusError: (.*?)(?: \[while running|\n|$)", str(exc))
    return match.group(1) if match else None


def _run_pipeline(command: str, argv: list[str]) -> int:
    from beam_jobs.pipelines import run  # Beam is imported only for the pipeline commands

    if "-h" in argv or "--help" in argv:
        from beam_jobs.options import TokfxOptions
        parser = argparse.ArgumentParser(prog=f"tokfx {command}",
                                         description=PIPELINE_HELP.get(command, "encode to shards")
                                         + "; any Beam pipeline option also passes through")
        TokfxOptions._add_argparse_args(parser)
        parser.print_help()
        return 0
    # Beam logs a worker's exception with its traceback before re-raising it; the user gets the
    # one-line message below instead (an unexpected error is re-raised with its traceback).
    logging.getLogger("apache_beam.runners.common").setLevel(logging.CRITICAL)
    try:
        run(command, argv)
    except (ValueError, FileNotFoundError) as exc:
        print(f"tokfx: error: {_corpus_error(exc) or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a runner's wrapper around a worker's error
        message = _corpus_error(exc)
        if message is None:
            raise
        print(f"tokfx: error: {message}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    pipeline = _pipeline_argv(argv)
    if pipeline is not None:
        return _run_pipeline(*pipeline)
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (ValueError, FileNotFoundError, CorpusError) as exc:
        print(f"tokfx: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
