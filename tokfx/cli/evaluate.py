"""`tokfx eval`: intrinsic metrics of tokenizers on one corpus, side by side (tokfx.eval)."""
from __future__ import annotations

from tokfx.cli.skipped import note_skipped
from tokfx.eval.report import corpus_documents, evaluate, tokenizer_names, write_report
from tokfx.formats.readers.policy import CollectingPolicy
from tokfx.special_tokens import special_tokens_or_default
from tokfx.tokenizer import Tokenizer

NAME = "eval"
HELP = "intrinsic metrics of tokenizers on a corpus, side by side: metrics.json, metrics.md, PNG figures, index.html"


def run(args) -> None:
    names = tokenizer_names(args.tokenizers)
    tokenizers = {name: Tokenizer.load(path) for name, path in zip(names, args.tokenizers)}
    separators = special_tokens_or_default(args.separator)
    errors = CollectingPolicy(args.on_error)
    documents = corpus_documents(args.corpus, args.text_field, separators, errors)
    try:
        report = evaluate(tokenizers, documents, args.alpha, args.window, progress=not args.quiet)
    finally:
        note_skipped(NAME, errors, args.output)  # also when nothing was left to evaluate: it says why
    for path in write_report(report, args.output, plots=not args.no_plots):
        print(path)
