"""`tokfx train`: corpus files (or a counts file) in, a tokenizer directory out."""
from __future__ import annotations

import time
from pathlib import Path

from tokfx.cli.flags import special_tokens, training_keywords
from tokfx.cli.files import check_output_dir
from tokfx.cli.skipped import note_skipped
from tokfx.counting.corpus_files import count_corpus_files
from tokfx.data import sample_corpus
from tokfx.formats.counts import read_counts
from tokfx.formats.readers.policy import CollectingPolicy
from tokfx.models.training import train, trains_on_lines
from tokfx.progress import Progress

NAME = "train"
HELP = "train a tokenizer: corpus files in, tokenizer directory out"


def run(args) -> None:
    check_output_dir(args.output, "-o")
    keywords = training_keywords(args)
    progress = Progress(not args.quiet)
    lines = {} if trains_on_lines(args.algorithm, keywords) else None
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
        progress.report(f"read counts from {args.counts}" + (f" and lines from {args.lines}" if args.lines else ""))
    else:
        files = [Path(f) for f in args.files] or sample_corpus()
        if not args.files:
            progress.report(f"no input files given: training on the sample corpus ({len(files)} shards)")
        errors = CollectingPolicy(args.on_error)
        counted = count_corpus_files(files, args.pattern, special_tokens(args), args.text_field,
                                     args.processes, lines is not None, errors, progress)
        counts, lines = counted.pretokens, counted.lines
        progress.report(f"{counted.documents:,} documents counted")
        note_skipped(NAME, errors, args.output)
    progress.report(f"{len(counts):,} distinct pre-tokens, {sum(counts.values()):,} in all"
                    + (f"; {len(lines):,} distinct lines" if lines is not None else ""))
    tokenizer = train(counts, **keywords, progress=not args.quiet, lines=lines)
    note = tokenizer.save(args.output)
    if note is not None:
        progress.report(f"{args.output}: {note}")
    progress.report(f"trained {tokenizer!r} in {time.perf_counter() - start:.2f} s")
    print(Path(args.output) / "tokfx.json")
