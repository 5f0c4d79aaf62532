"""Entry points: `tokfx run`, `tokfx count`, `tokfx encode --output-dir` as Beam pipelines."""
from __future__ import annotations

import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions, WorkerOptions

from tokfx.alphabet import Alphabet
from tokfx.cli.flags import BASIC_KEYWORDS, refuse_underscore_spellings, special_tokens, training_keywords
from tokfx.data import sample_corpus
from tokfx.formats.counts import write_counts
from tokfx.formats.rejected import rejected_beside, write_rejected
from tokfx.formats.shards.manifest import MANIFEST_JSON
from tokfx.formats.shards.placement import is_held_out
from tokfx.models.training import trains_on_lines
from tokfx.pre_tokenizers import resolve_pattern
from tokfx.special_tokens import DEFAULT_SPECIAL
from tokfx.tokenizer import Tokenizer
from beam_jobs.count import CountPretokens
from beam_jobs.encode import TokenizeDocs
from beam_jobs.evaluate import EvalHeldOut
from beam_jobs.files import publish, write_bytes
from beam_jobs.options import DEFAULT_RUNNER, TokfxOptions
from beam_jobs.read import ReadCorpus
from beam_jobs.records import TokenizerFile
from beam_jobs.train import TrainVocab
from beam_jobs.write import REJECTED_DIR, SHARDS_DIR, WriteShards

TOKENIZER_DIR = "tokenizer"
EVAL_DIR = "eval"


def _options(argv: list[str]) -> tuple[PipelineOptions, TokfxOptions]:
    refuse_underscore_spellings(argv, "pipeline")
    options = PipelineOptions(argv)
    # Beam only warns about a flag it does not know; a misspelt --vocab-size would silently
    # train with the default.
    unknown = set(options.get_all_options(retain_unknown_options=True)) - set(options.get_all_options())
    if unknown:
        raise ValueError(f"unknown option(s): {', '.join('--' + u for u in sorted(unknown))}")
    if options.view_as(StandardOptions).runner is None:
        options.view_as(StandardOptions).runner = DEFAULT_RUNNER
    if options.view_as(StandardOptions).runner == DEFAULT_RUNNER:
        _quiet_local_workers(options)
    return options, options.view_as(TokfxOptions)


def _quiet_local_workers(options: PipelineOptions) -> None:
    """The DirectRunner's multi_processing workers write Beam's INFO log into the terminal
    (some 60 lines a run): keep their warnings and our progress lines, unless the user set the
    levels. (On a cluster runner the workers' log goes to its log service, so it is left alone.)"""
    worker = options.view_as(WorkerOptions)
    if worker.default_sdk_harness_log_level is None:
        worker.default_sdk_harness_log_level = "WARNING"
        if worker.sdk_harness_log_level_overrides is None:
            worker.sdk_harness_log_level_overrides = {"beam_jobs": "INFO"}
        # The runner logs every worker warning a second time as its own.
        logging.getLogger("apache_beam.runners.portability.local_job_service").setLevel(logging.ERROR)


def _inputs(opts: TokfxOptions) -> list[str]:
    if opts.input:
        return list(opts.input)
    return [str(p) for p in sample_corpus()]


def config_of(opts: TokfxOptions, inputs: list[str], **extra) -> dict:
    """What determines the output (recorded in the manifest and shard footers); no paths out,
    no runner, no timings."""
    return {"inputs": inputs, "text_field": opts.text_field, "id_field": opts.id_field,
            "special_tokens": special_tokens(opts), "on_error": opts.on_error,
            "num_shards": opts.num_shards, "append_eos": opts.append_eos, **extra}


def _read(p, opts: TokfxOptions, inputs: list[str]):
    return p | "ReadCorpus" >> ReadCorpus(
        inputs, text_field=opts.text_field, id_field=opts.id_field,
        special_tokens=special_tokens(opts), on_error=opts.on_error,
        txt_range_bytes=opts.txt_range_bytes, progress=not opts.quiet)


def _count(docs, opts: TokfxOptions):
    return docs | "CountPretokens" >> CountPretokens(
        opts.pattern, special_tokens(opts), opts.min_pretoken_count, opts.max_pretokens)


def _write(docs_and_rejected, keyed, opts, tokenizer_file, config):
    return keyed | "WriteShards" >> WriteShards(
        opts.output, opts.num_shards, config, tokenizer_file,
        docs_and_rejected["documents"], docs_and_rejected["rejected"], progress=not opts.quiet)


def _eos(opts: TokfxOptions) -> str | None:
    return DEFAULT_SPECIAL if opts.append_eos else None


# What each command writes into its output directory (tokfx encode keeps tokenizer/: it may be
# the very tokenizer it encodes with).
WRITES = {"run": (MANIFEST_JSON, TOKENIZER_DIR, SHARDS_DIR, REJECTED_DIR, EVAL_DIR),
          "encode": (MANIFEST_JSON, SHARDS_DIR, REJECTED_DIR)}


def _clear_previous_output(output_dir: str, command: str) -> None:
    """Remove what an earlier run of `command` wrote here: its manifest first (it would claim
    the output complete while this run writes it), then its folders, so no stale shard (from a
    run with more shards), rejected/ or eval/ report survives beside the new output. Only
    tokfx's own names are touched."""
    for name in WRITES[command]:
        path = FileSystems.join(output_dir, name)
        if FileSystems.exists(path):
            FileSystems.delete([path])


def build_run(p, opts: TokfxOptions) -> None:
    inputs = _inputs(opts)
    keywords = training_keywords(opts)  # checks the settings before the pipeline runs
    params = {name: value for name, value in keywords.items() if name not in BASIC_KEYWORDS}
    if opts.append_eos and DEFAULT_SPECIAL not in special_tokens(opts):
        raise ValueError(f"--append-eos needs {DEFAULT_SPECIAL} among the special tokens")
    if not 0 <= opts.eval_fraction < 1:
        raise ValueError(f"--eval-fraction must be in [0, 1), got {opts.eval_fraction}")
    alphabet = Alphabet.named(keywords["alphabet"], keywords["cjk_groups"])
    config = config_of(opts, inputs, algorithm=opts.algorithm, vocab_size=opts.vocab_size,
                       pattern=opts.pattern, alphabet=alphabet.to_dict(),
                       min_pretoken_count=opts.min_pretoken_count,
                       max_pretokens=opts.max_pretokens, eval_fraction=opts.eval_fraction,
                       **({"training": params} if params else {}))
    read = _read(p, opts, inputs)
    training_docs, fraction = read["documents"], opts.eval_fraction
    if fraction:
        training_docs = read["documents"] | "NotHeldOut" >> beam.Filter(
            lambda doc: not is_held_out(doc.id, fraction))
    lines = None
    if trains_on_lines(opts.algorithm, params):
        lines = training_docs | "CountLines" >> CountPretokens(opts.pattern, special_tokens(opts), lines=True)
    tokenizer_file = (_count(training_docs, opts)
                      | "TrainVocab" >> TrainVocab(FileSystems.join(opts.output, TOKENIZER_DIR), keywords,
                                                   progress=not opts.quiet, lines=lines))
    if fraction:
        # Held-out documents are still encoded into the shards below; only training skips them.
        (read["documents"]
         | "HeldOut" >> beam.Filter(lambda doc: is_held_out(doc.id, fraction))
         | "EvalHeldOut" >> EvalHeldOut(tokenizer_file, FileSystems.join(opts.output, EVAL_DIR),
                                        TOKENIZER_DIR))
    keyed = read["documents"] | "TokenizeDocs" >> TokenizeDocs(tokenizer_file, opts.num_shards,
                                                              _eos(opts))
    _write(read, keyed, opts, tokenizer_file, config)


def build_encode(p, opts: TokfxOptions) -> None:
    if not opts.tokenizer:
        raise ValueError("tokfx encode --output-dir needs a tokenizer directory")
    tokenizer = Tokenizer.load(opts.tokenizer)
    if opts.append_eos and DEFAULT_SPECIAL not in tokenizer.special_tokens:
        raise ValueError(f"--append-eos: the tokenizer has no {DEFAULT_SPECIAL} token")
    inputs = _inputs(opts)
    config = config_of(opts, inputs)
    read = _read(p, opts, inputs)
    # The tokenizer's bytes travel in the graph, not its local path.
    tokenizer_file = p | "Tokenizer" >> beam.Create([TokenizerFile.of(tokenizer)])
    keyed = read["documents"] | "TokenizeDocs" >> TokenizeDocs(tokenizer_file, opts.num_shards,
                                                              _eos(opts))
    _write(read, keyed, opts, tokenizer_file, config)


def _write_counts_file(counts: dict, destination: str, unit: str = "pretoken") -> int:
    with tempfile.TemporaryDirectory() as local:
        write_counts(Path(local) / "counts.parquet", counts, unit)
        publish(Path(local) / "counts.parquet", destination)
    return len(counts)


def build_count(p, opts: TokfxOptions) -> None:
    resolve_pattern(opts.pattern)
    read = _read(p, opts, _inputs(opts))
    _count(read["documents"], opts) | "WriteCounts" >> beam.Map(_write_counts_file, opts.output)
    if opts.lines_output:
        (read["documents"]
         | "CountLines" >> CountPretokens(opts.pattern, special_tokens(opts), lines=True)
         | "WriteLines" >> beam.Map(_write_counts_file, opts.lines_output, "line"))
    (read["rejected"]
     | "AllRejected" >> beam.combiners.ToList()
     | "WriteRejected" >> beam.Map(write_rejected, rejected_beside(opts.output), write_bytes))


def _counters(result) -> dict[str, int]:
    metrics = result.metrics().query(MetricsFilter().with_namespace("tokfx"))
    totals: dict[str, int] = {}
    for counter in metrics["counters"]:
        name = counter.key.metric.name
        totals[name] = totals.get(name, 0) + (counter.committed or counter.attempted or 0)
    return totals


def summary(counters: dict[str, int], seconds: float, written: str) -> str:
    stages = ", ".join(f"{stage} {counters[f'usec_{stage}'] / 1000:,.0f} ms"
                       for stage in ("read", "count", "train", "encode", "write")
                       if f"usec_{stage}" in counters)
    lines = [f"read {counters.get('documents_read', 0):,} documents"
             f" ({counters.get('bytes_read', 0):,} bytes),"
             f" rejected {counters.get('documents_rejected', 0):,} documents"
             f" and {counters.get('files_rejected', 0):,} files",
             f"{counters.get('pretokens', 0):,} pre-tokens counted;"
             f" {counters.get('documents_written', 0):,} documents written,"
             f" {counters.get('tokens', 0):,} tokens",
             f"wrote {written}",
             f"{seconds:.1f} s in all; processing time summed over workers: {stages or '-'}"]
    return "\n".join(lines)


BUILDERS = {"run": build_run, "count": build_count, "encode": build_encode}


def _show_progress() -> None:
    """The steps' progress lines (files read, shards written) on stderr."""
    logger = logging.getLogger("beam_jobs")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("tokfx: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # Beam gives the root logger a handler of its own


def run(command: str, argv: list[str]):
    """Build and run the pipeline of `command`; print progress and the summary; return the
    counters."""
    options, opts = _options(argv)
    if not opts.quiet:
        _show_progress()
    start = time.perf_counter()
    if opts.lines_output and command != "count":
        raise ValueError(f"--lines-output is for tokfx count, not tokfx {command}")
    p = beam.Pipeline(options=options)
    try:
        BUILDERS[command](p, opts)  # checks the settings: a refused run deletes nothing
    except BaseException:
        # Beam removes the pipeline's local temp folder in run() only.
        shutil.rmtree(p.local_tempdir, ignore_errors=True)
        raise
    if command in WRITES:
        _clear_previous_output(opts.output, command)
    result = p.run()
    result.wait_until_finish()
    counters = _counters(result)
    if command == "count":
        written = f"pre-token counts to {opts.output}"
        if counters.get("documents_rejected", 0) or counters.get("files_rejected", 0):
            written += f", rejected records to {rejected_beside(opts.output)}"
    else:
        written = (f"{FileSystems.join(opts.output, SHARDS_DIR)}/ (Parquet, .bin/.idx),"
                   f" {FileSystems.join(opts.output, MANIFEST_JSON)}")
        if command == "run":
            written = f"{FileSystems.join(opts.output, TOKENIZER_DIR)}/, " + written
            if opts.eval_fraction:
                written += f", eval report on held-out documents in {FileSystems.join(opts.output, EVAL_DIR)}/"
    if not opts.quiet:
        print(summary(counters, time.perf_counter() - start, written), file=sys.stderr)
    return counters
