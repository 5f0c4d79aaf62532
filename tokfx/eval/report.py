"""`tokfx eval`: intrinsic metrics of several tokenizers on one corpus, side by side.

One pass over the corpus feeds every tokenizer's `CorpusStats`; the report is a JSON-ready
dict (metrics.json), a Markdown table (metrics.md), figures (tokfx.eval.plots, when matplotlib
is installed) and an index.html showing the table and the figures.
"""
from __future__ import annotations

import html
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from tokfx.eval.metrics import (CorpusStats, context_diversity, fertility, frequency_rank, length_histogram,
                           per_token, renyi_efficiency, scaffold_share, unused_share,
                           vocabulary_overlap)
from tokfx.formats.readers import ReadOptions, read_documents
from tokfx.formats.readers.policy import FAIL, ErrorPolicy
from tokfx.progress import Progress
from tokfx.special_tokens import DEFAULT_SPECIAL
from tokfx.tokenizer import Tokenizer

DEFAULT_ALPHA = 2.5
DEFAULT_WINDOW = 2
PLOT_HINT = "figures need matplotlib: pip install 'tokfx[plot]'"

# (key in metrics.json, column label in metrics.md, format)
TABLE_ROWS = [
    ("vocab_size", "vocabulary size", "{:,}"),
    ("ctc", "corpus token count (CTC)", "{:,}"),
    ("bytes_per_token", "bytes / token", "{:.3f}"),
    ("chars_per_token", "characters / token", "{:.3f}"),
    ("fertility", "fertility (tokens / word)", "{:.3f}"),
    ("renyi_efficiency", "Rényi efficiency (α={alpha})", "{:.4f}"),
    ("mean_token_length", "mean token length (base symbols, corpus)", "{:.3f}"),
    ("unused_vocabulary_share", "unused vocabulary share", "{:.2%}"),
    ("context_diversity", "context diversity (window {window})", "{:.4f}"),
    ("decode_errors", "decode errors", "{:,}"),
    ("scaffold_share", "scaffold share of the expanded vocabulary", "{:.2%}"),
    ("unique_tokens", "tokens in no other vocabulary", "{:,}"),
]


def corpus_documents(paths: Sequence[str | os.PathLike], text_field: str = "text",
                     separators: Sequence[str] = (DEFAULT_SPECIAL,),
                     errors: ErrorPolicy = FAIL) -> Iterator[str]:
    """The texts of the documents of corpus files: a JSON-lines record each (streamed), or the
    pieces of a .txt file between `separators` (as `tokfx run` cuts them; the file is read
    whole). Bad input goes to `errors` (the default raises)."""
    options = ReadOptions(text_field=text_field, separators=tuple(separators))
    return (doc.text for doc in read_documents(paths, options, errors))


def regular_ids(tokenizer: Tokenizer) -> list[int]:
    """The vocabulary without its special tokens: what the vocabulary metrics are over."""
    special = set(tokenizer.special_tokens.values())
    return [i for i in range(tokenizer.vocab_size) if i not in special]


def tokenizer_metrics(stats: CorpusStats, alpha: float = DEFAULT_ALPHA) -> dict:
    """The metrics of one tokenizer's `CorpusStats` (scalars, then distributions)."""
    tok, counts = stats.tokenizer, stats.counts
    lengths = [len(t) for t in tok.tokens]
    regular = regular_ids(tok)
    ctc = stats.tokens
    return {
        "vocab_size": tok.vocab_size,
        "ctc": ctc,
        "bytes_per_token": per_token(stats.bytes, ctc),
        "chars_per_token": per_token(stats.characters, ctc),
        "fertility": fertility(ctc, stats.words),
        "renyi_efficiency": renyi_efficiency(counts, tok.vocab_size, alpha),
        "mean_token_length": sum(lengths[i] * c for i, c in counts.items()) / ctc,
        "unused_vocabulary_share": unused_share(counts, regular),
        "context_diversity": context_diversity(
            stats.neighbours.distinct_neighbours(tok.vocab_size), counts),
        "decode_errors": stats.decode_errors,
        # Only a Scaffold-BPE tokenizer has scaffold tokens: None (not 0) for the others.
        "scaffold_share": (scaffold_share(len(tok.scaffold.scaffold), tok.scaffold.expanded_size)
                           if tok.scaffold is not None else None),
        "token_length_vocabulary": length_histogram(lengths, ids=regular),
        "token_length_corpus": length_histogram(lengths, counts),
        "frequency_rank": frequency_rank(counts),
    }


def tokenizer_names(paths: Sequence[str | os.PathLike]) -> list[str]:
    """Short names for the report: each directory's name, with its position if names repeat."""
    names = [Path(p).name if Path(p).name != "tokfx.json" else Path(p).parent.name for p in paths]
    if len(set(names)) < len(names):
        names = [f"{i + 1}:{name}" for i, name in enumerate(names)]
    return names


def evaluate(tokenizers: Mapping[str, Tokenizer], documents: Iterable[str],
             alpha: float = DEFAULT_ALPHA, window: int = DEFAULT_WINDOW,
             progress: bool = False) -> dict:
    """The report (metrics.json's content) of named tokenizers over one pass of `documents`."""
    stats = {name: CorpusStats(tok, window) for name, tok in tokenizers.items()}
    start, reporter = time.perf_counter(), Progress(progress)
    for n, text in enumerate(documents, start=1):
        for s in stats.values():
            s.add(text)
        if n % 1000 == 0:
            reporter.report(f"eval: {n:,} documents ({time.perf_counter() - start:.1f} s)")
    first = next(iter(stats.values()))
    if not first.documents:
        raise ValueError("the evaluation corpus has no documents")
    overlap = vocabulary_overlap({name: set(map(tok.tokens.__getitem__, regular_ids(tok)))
                                  for name, tok in tokenizers.items()})
    report_tokenizers = {}
    for name, s in stats.items():
        tok = tokenizers[name]
        metrics = tokenizer_metrics(s, alpha)
        if len(tokenizers) > 1:
            metrics["unique_tokens"] = len(overlap["unique"][name])
        report_tokenizers[name] = {
            "algorithm": tok.algorithm, "alphabet": tok.alphabet.name, "metrics": metrics,
            # A few of its unique tokens, the shortest first, to show what differs.
            "unique_examples": [tok.alphabet.show(t) for t in
                                sorted(overlap["unique"][name], key=lambda t: (len(t), t))[:20]]}
    return {
        "settings": {"renyi_alpha": alpha, "context_window": window,
                     "encoding": "ordinary (special-token text is ordinary text)",
                     "vocabulary": "regular tokens: special tokens left out of vocabulary metrics",
                     "token_length_unit": "base symbols (bytes for the bytes alphabet)"},
        "corpus": {"documents": first.documents, "characters": first.characters,
                   "bytes": first.bytes, "words": first.words},
        "tokenizers": report_tokenizers,
        "overlap": {"jaccard": overlap["jaccard"], **({"regions": overlap["regions"]}
                                                     if "regions" in overlap else {})},
    }


def metrics_markdown(report: dict) -> str:
    """The scalar metrics as a Markdown table, one column per tokenizer."""
    names = list(report["tokenizers"])
    settings = {"alpha": report["settings"]["renyi_alpha"], "window": report["settings"]["context_window"]}
    lines = ["| metric | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for key, label, fmt in TABLE_ROWS:
        if key not in report["tokenizers"][names[0]]["metrics"]:
            continue  # unique_tokens: only when there are several tokenizers
        values = [report["tokenizers"][n]["metrics"][key] for n in names]
        if all(v is None for v in values):
            continue  # scaffold_share: only with a Scaffold-BPE tokenizer
        values = ["–" if v is None else fmt.format(v) for v in values]
        lines.append(f"| {label.format(**settings)} | " + " | ".join(values) + " |")
    corpus = report["corpus"]
    lines.append("")
    lines.append(f"Corpus: {corpus['documents']:,} documents, {corpus['characters']:,} characters,"
                 f" {corpus['bytes']:,} bytes, {corpus['words']:,} words.")
    return "\n".join(lines) + "\n"


def index_html(report: dict, figures: Sequence[str]) -> str:
    """A page with the table (as HTML) and the figures."""
    rows = [line.strip("|").split("|") for line in metrics_markdown(report).splitlines()
            if line.startswith("|") and not line.startswith("|---")]
    def cells(row: list[str], tag: str) -> str:
        return "".join(f"<{tag}>{html.escape(c.strip())}</{tag}>" for c in row)

    table = f"<tr>{cells(rows[0], 'th')}</tr>\n" + "\n".join(f"<tr>{cells(r, 'td')}</tr>" for r in rows[1:])
    images = "\n".join(f'<figure><img src="{html.escape(f)}" alt="{html.escape(f)}"></figure>'
                       for f in figures) or f"<p>{html.escape(PLOT_HINT)}</p>"
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tokfx eval</title>\n"
            "<style>table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 8px;"
            "text-align:right}img{max-width:100%}</style></head><body>\n<h1>tokfx eval</h1>\n"
            f"<table>\n{table}\n</table>\n{images}\n</body></html>\n")


def write_report(report: dict, output: str | os.PathLike, plots: bool = True) -> list[Path]:
    """Write metrics.json, metrics.md, the figures (if matplotlib is there) and index.html into
    `output`; return the files written. Without matplotlib, a message on stderr says how to get
    the figures."""
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    (output / "metrics.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    (output / "metrics.md").write_text(metrics_markdown(report), encoding="utf-8")
    figures: list[str] = []
    if plots:
        try:
            from tokfx.eval.plots import write_figures
        except ImportError:
            print(f"tokfx eval: {PLOT_HINT}", file=sys.stderr)
        else:
            figures = write_figures(report, output)
    (output / "index.html").write_text(index_html(report, figures), encoding="utf-8")
    return [output / f for f in ("metrics.json", "metrics.md", *figures, "index.html")]
